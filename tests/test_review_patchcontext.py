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
