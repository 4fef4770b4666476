"""Upstream changes within 20 lines of a carried patch's hunks, even when the patch still applies."""

from bot.model import LocalRef
from bot.patches.patchfile import parse
from bot.review.changes import FileChange
from bot.review.patchcontext import patch_context_drafts
from tests.gitutil import make_patch

OLD = "".join(f"    step_{i}();\n" for i in range(100))
PATCH = make_patch(
    OLD, OLD.replace("    step_50();\n", "    step_50();\n    ollama_hook();\n"), "src/llama.cpp"
)
PATCHES = [("llama/compat/0001-hook.patch", parse(PATCH))]


def _drafts(new, patches=PATCHES, explained=frozenset()):
    return patch_context_drafts(
        patches, {"src/llama.cpp": FileChange.from_texts("src/llama.cpp", OLD, new)}, explained
    )


def test_upstream_change_near_a_clean_hunk_is_information_with_the_patch_line():
    (draft,) = _drafts(OLD.replace("step_60();", "step_60(true);"))
    assert (draft.area, draft.severity) == ("patch-context", "info")
    assert draft.title == "Upstream changed src/llama.cpp near hunk 1 of 0001-hook.patch"
    assert draft.line == 61 and draft.blame == ((61, 61),)
    assert draft.local_refs == (
        LocalRef("llama/compat/0001-hook.patch", parse(PATCH).files[0].hunks[0].header_line),
    )


def test_removal_near_a_hunk_is_attributed_by_the_removed_text():
    (draft,) = _drafts(OLD.replace("    step_40();\n", ""))
    assert draft.blame == () and draft.removed == ("src/llama.cpp", "step_40();")


def test_far_away_or_comment_only_changes_are_no_finding():
    assert _drafts(OLD.replace("step_90();", "step_90(true);")) == []
    assert _drafts(OLD.replace("step_55();", "step_55(); // why")) == []
    assert _drafts(OLD.replace("    step_52();", "      step_52();")) == []


TWO_HUNKS = make_patch(
    OLD,
    OLD.replace("    step_20();\n", "    step_20();\n    hook_a();\n").replace(
        "    step_70();\n", "    step_70();\n    hook_b();\n"
    ),
    "src/llama.cpp",
)


def test_one_item_per_patch_and_file_listing_its_hunks():
    patches = [("llama/compat/0002-two.patch", parse(TWO_HUNKS))]
    (draft,) = _drafts(OLD.replace("step_25();", "step_25(1);").replace("step_75();", "step_75(1);"), patches)
    assert draft.title == "Upstream changed src/llama.cpp near hunks 1, 2 of 0002-two.patch"
    assert draft.detail.startswith("Hunks 1, 2 of `llama/compat/0002-two.patch` apply as they were, but")
    assert [r.line for r in draft.local_refs] == [h.header_line for h in parse(TWO_HUNKS).files[0].hunks]


def test_a_hunk_the_patch_section_explains_gets_no_item():
    patches = [("llama/compat/0002-two.patch", parse(TWO_HUNKS))]
    first, second = parse(TWO_HUNKS).files[0].hunks
    new = OLD.replace("step_25();", "step_25(1);").replace("step_75();", "step_75(1);")
    (draft,) = _drafts(new, patches, frozenset({("llama/compat/0002-two.patch", first.header_line)}))
    assert draft.title == "Upstream changed src/llama.cpp near hunk 2 of 0002-two.patch"
    # the patch section tells what became of the patch (its first hunk did not apply as it was): the item
    # speaks of the hunk it is about
    assert draft.detail.startswith("Hunk 2 of `llama/compat/0002-two.patch` applies as it was, but upstream")
    both = frozenset({("llama/compat/0002-two.patch", h.header_line) for h in (first, second)})
    assert _drafts(new, patches, both) == []


# ---- a local a hunk uses that upstream's code no longer has where the hunk goes

LOADER = """static void load(const char * fname) {
    ggml_backend_buffer_type_t buft = default_buffer_type();
    for (int i = 0; i < n; i++) {
        const size_t offset = offsets[i];
        fin.seekg(offset);
        read_tensor(buft, fin);
    }
}
""" + "".join(f"static void other_{i}() {{ step(); }}\n" for i in range(40))
HOOKED = LOADER.replace(
    "        const size_t offset = offsets[i];\n",
    "        const size_t offset = offsets[i];\n        if (maybe_load(fname, offset, buft)) continue;\n",
)
HOOK = [("llama/compat/0002-loader.patch", parse(make_patch(LOADER, HOOKED, "tools/mtmd/clip.cpp")))]


def _loader_drafts(new: str):
    changes = {"tools/mtmd/clip.cpp": FileChange.from_texts("tools/mtmd/clip.cpp", LOADER, new)}
    return [d for d in patch_context_drafts(HOOK, changes) if d.severity == "medium"]


def test_a_local_the_hunk_uses_that_upstream_no_longer_declares_there_is_medium_at_the_added_line():
    inlined = LOADER.replace("    ggml_backend_buffer_type_t buft = default_buffer_type();\n", "").replace(
        "read_tensor(buft, fin)", "read_tensor(default_buffer_type(), fin)"
    )
    (draft,) = _loader_drafts(inlined)
    assert (
        draft.title == "Hunk 1 of 0002-loader.patch uses `buft`, a local upstream's code no longer has there"
    )
    patch_lines = make_patch(LOADER, HOOKED, "tools/mtmd/clip.cpp").decode().split("\n")
    added = next(n for n, line in enumerate(patch_lines, 1) if line.startswith("+") and "maybe_load" in line)
    assert draft.local_refs == (LocalRef("llama/compat/0002-loader.patch", added),)


def test_a_local_renamed_elsewhere_or_still_in_scope_is_no_break():
    assert _loader_drafts(LOADER.replace("step();", "step(1);")) == []  # far away, the local kept
    moved = LOADER.replace("    ggml_backend_buffer_type_t buft = default_buffer_type();\n", "").replace(
        "    for (int i = 0; i < n; i++) {\n",
        "    for (int i = 0; i < n; i++) {\n        ggml_backend_buffer_type_t buft = default_buffer_type();\n",
    )
    assert _loader_drafts(moved) == []  # declared in the loop now: still in scope where the hunk goes
