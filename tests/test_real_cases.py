"""The patch engine on Ollama's real llama.cpp bumps (tests/data/real/), set beside what the maintainers did.

What must always hold: the engine's applies / does-not-apply verdict is the real `git apply`'s, every patch
it rebuilds passes `git apply --check` on the new ref in stack order, and a result it calls `regenerated`
gives the maintainers' files. What holds today is kept as a floor: a patch rebuilt the maintainers' way stays
so. `bench/real_cases.py` prints the whole comparison. The last tests need the real mirrors
(LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_LLAMA_CPP) and skip without them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from bot.model import Report
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.gitutil import git_apply_stack
from tests.real import extract
from tests.realcases import (
    REAL_DATA,
    all_cases,
    build_upstream,
    fixture_upstream,
    git_apply_files,
    git_verdicts,
    measure,
    rebuilt_stack,
    run_engine,
)

CASES = all_cases()
# Patches the maintainers rewrote that the engine rebuilds into their very files (ignoring whitespace).
EQUAL_TODAY = {
    ("b9672-b9781", "001-llama-cpp-hooks.patch"),
    ("b9509-b9626", "models/llama-cpp-laguna.patch"),  # both inserted before LLM_ARCH_UNKNOWN: theirs first
    ("b9626-b9672", "002-llama-cpp-ui-empty-assets.patch"),  # upstreamed: the behaviour is upstream's now
    ("b10069-b10091", "models/003-llama-cpp-laguna.patch"),  # upstreamed: Laguna's names are upstream's now
}
MIRRORS = {name: os.environ.get(name, "") for name in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP")}
needs_mirrors = pytest.mark.skipif(
    not all(MIRRORS.values()),
    reason="needs the real mirrors: set LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP to their git dirs",
)


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory):
    """Each case's upstream repository, the engine's report on it and its measure, built once for the module."""
    runs = {}
    for case in CASES:
        up = build_upstream(case, tmp_path_factory.mktemp(case.id) / "upstream.git")
        pin = run_engine(case, fixture_upstream(up, case))
        runs[case.id] = (up, pin, measure(case, pin))
    return runs


def by_id(ids=None):
    chosen = [c for c in CASES if ids is None or c.id in ids]
    return pytest.mark.parametrize("case", chosen, ids=[c.id for c in chosen])


def test_the_fixtures_cover_broken_and_clean_bumps():
    broken = [c for c in CASES if any(not p.get("applies_at_new_ref", True) for p in c.meta["patch"])]
    clean = [c for c in CASES if c not in broken]
    assert len(broken) >= 7 and 2 <= len(clean) <= 3
    assert (REAL_DATA / "NOTICE").read_text().count("MIT License") == 2


@by_id()
def test_fixture_files_are_the_upstream_blobs_case_toml_names(case):
    """Every upstream file is the blob its [[file]] table names, at the ref it names; nothing else is there."""
    listed = {f["path"]: f for f in case.meta["file"]}
    for side in ("old", "new"):
        files = case.upstream(side)
        expected = {p for p, f in listed.items() if f[f"{side}_blob"]}
        assert set(files) == expected
        for path, data in files.items():
            assert str(pygit2.hash(data)) == listed[path][f"{side}_blob"], f"{side}/{path}"
    assert {f["mode"] for f in listed.values()} == {"100644"}  # the loader commits regular files only
    assert {c.before for c in case.changes if c.before} == set(case.patches("before"))
    assert {c.after for c in case.changes if c.after} == set(case.patches("after"))


@by_id()
def test_verdict_is_the_real_git_apply(case, engine_runs):
    """A patch that `git apply --check`s on the new files, after the earlier patches as the engine left them,
    is clean or offset; one that does not is neither. case.toml's record (the patches as they were, each
    applied where it fits) agrees on every real case."""
    _, pin, _ = engine_runs[case.id]
    applies = git_verdicts(case, pin)
    statuses = {r.path: r.status for r in pin.patches}
    assert set(statuses) == set(applies)
    for path, ok in applies.items():
        assert (statuses[path] in ("clean", "offset")) == ok, f"{path}: {statuses[path]}, git apply says {ok}"
    recorded = {
        f"{case.patch_dir}/{p['before']}": p["applies_at_new_ref"] for p in case.meta["patch"] if p["before"]
    }
    assert recorded == applies == git_apply_files(case.upstream("new"), case.stack("before"))[0]


@by_id()
def test_the_finished_bump_is_clean_where_git_applies_it(case, engine_runs):
    """The maintainers' merged commit: each patch they committed that `git apply` takes on the new ref, in
    order, is `clean` or `offset` (whatever its lines name), and the check exits 0 when all are."""
    up = engine_runs[case.id][0]
    pin = run_engine(case, fixture_upstream(up, case), head_side="after")
    applies = git_apply_files(case.upstream("new"), case.stack("after"))[0]
    statuses = {r.path: r.status for r in pin.patches}
    assert {p: s in ("clean", "offset") for p, s in statuses.items()} == applies, statuses
    assert Report([pin]).needs_change is not all(applies.values())


@by_id()
def test_every_rebuilt_patch_passes_git_apply_check_in_stack_order(case, engine_runs, tmp_path):
    up, pin, _ = engine_runs[case.id]
    stack = rebuilt_stack(pin)
    git_apply_stack(up.path, case.new_ref, [data for _, data in stack], tmp_path / "work")


@by_id()
def test_a_regenerated_result_is_the_maintainers_files(case, engine_runs):
    """`regenerated` says "trust me": its files must be the maintainers' ignoring whitespace. A patch the
    maintainers kept as it was, and that still applies, gives their files too."""
    for m in engine_runs[case.id][2]:
        if m.result is None:
            continue
        if m.result.status == "regenerated" and m.change.after is not None:
            assert m.equal, f"{m.patch} called regenerated, but {m.why}"
        if m.change.change == "unchanged" and m.applies:
            assert m.equal, f"{m.patch}: {m.why}"


@by_id()
def test_patches_rebuilt_the_maintainers_way_stay_so(case, engine_runs):
    equal = {
        (case.id, m.patch) for m in engine_runs[case.id][2] if m.equal and m.change.change != "unchanged"
    }
    assert {k for k in EQUAL_TODAY if k[0] == case.id} <= equal


@by_id()
def test_every_difference_from_the_maintainers_says_why(case, engine_runs):
    """Where the engine's result is not theirs, the table has the engine's reason to show."""
    for m in engine_runs[case.id][2]:
        if m.equal is False:
            assert m.result is not None and m.result.message in m.why
            assert m.differing or m.result.status not in ("regenerated", "fuzzy", "clean", "offset")


def _result(engine_runs, case_id: str, patch: str):
    _, pin, _ = engine_runs[case_id]
    return next(r for r in pin.patches if r.path.endswith("/" + patch))


def test_an_obsolete_patch_says_what_upstream_provides_and_what_differs(engine_runs):
    laguna = _result(engine_runs, "b10069-b10091", "models/003-llama-cpp-laguna.patch")
    assert laguna.status == "upstreamed"
    for name in ("LLM_ARCH_LAGUNA", "LLAMA_VOCAB_PRE_TYPE_LAGUNA", "llama_model_laguna"):
        assert name in laguna.message
    assert "drop the patch, or reconcile it with upstream's version" in laguna.message
    assert (
        "upstream does not have table row LLM_TENSOR_ATTN_GATE_LAGUNA in LLM_TENSOR_NAMES" in laguna.message
    )
    assert 't.first=="</assistant>"' in laguna.message  # the EOG token upstream's Laguna does without
    assert (
        'upstream\'s version differs in `"(?:\\\\r?\\\\n)+(?!\\\\r?\\\\n)",`' in laguna.message
    )  # its first regex
    assert "} else if (tokenizer_pre" not in laguna.message  # upstream has that line, split in two
    provided = [h for h in laguna.hunks if h.status == "upstreamed"]
    assert len(provided) == 8 and all(h.upstream_commits for h in provided)
    ui = _result(engine_runs, "b9626-b9672", "002-llama-cpp-ui-empty-assets.patch")
    assert ui.status == "upstreamed" and "the change at tools/ui/embed.cpp:150" in ui.message
    assert (
        "where upstream has `const std::string asset_dir = (argc >= 4) ? argv[3] : std::string();`"
        in ui.message
    )


def test_a_parameter_upstream_made_a_member_is_named_where_the_hook_uses_it(engine_runs):
    """b10242 replaced loader's use_mmap parameter by a load mode: the hook's `use_mmap = false` now sets
    the member. The maintainers wrote `this->use_mmap`; the engine names the identifier and upstream's line."""
    hooks = _result(engine_runs, "b10091-b10242", "001-llama-cpp-hooks.patch")
    assert hooks.status == "fuzzy", hooks.message
    hunk = next(h for h in hooks.hunks if "use_mmap" in h.detail)
    assert "`bool use_mmap,` (line 525 at the old ref) became `llama_load_mode load_mode,`" in hunk.detail
    assert "upstream now uses `this->use_mmap` (src/llama-model-loader.cpp:546)" in hunk.detail
    assert hunk.upstream_commits and "use_mmap" in hooks.message


def _fork(tmp_path: Path) -> tuple[RepoBuilder, list[pygit2.Oid]]:
    """A master whose first-parent line has a merge (like llama.cpp's), so counts and positions differ."""
    up = RepoBuilder(tmp_path / "fork.git")
    first = up.commit("one", {"a": "1"})
    up.commit("two", {"a": "2"})
    side = up.repo.create_commit(
        None, up.repo[first].author, up.repo[first].author, "side", up.repo[first].tree.id, [first]
    )
    merge = up.repo.create_commit(
        "refs/heads/main",
        up.repo[first].author,
        up.repo[first].author,
        "merge",
        up.repo[up.head].tree.id,
        [up.head, side],
    )
    up.head = merge
    line = [first, up.repo[up.head].parents[0].id, merge]
    up.commit("four", {"a": "4"})
    line.append(up.head)
    return up, line


def test_ref_resolver_counts_like_upstream_tags(tmp_path):
    """bNNNN is the master commit with `git rev-list --count` NNNN; a tag wins; a full id resolves itself."""
    up, line = _fork(tmp_path)
    resolver = extract.RefResolver(up.path, branch="main")
    counts = [
        int(
            subprocess.run(
                ["git", "-C", str(up.path), "rev-list", "--count", str(c)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for c in line
    ]
    assert counts == [1, 2, 4, 5]  # the merge brings the side commit: no commit on the line has count 3
    for commit, count in zip(line, counts):
        assert resolver.resolve(f"b{count}") == str(commit)
    up.tag("b4", line[0])
    assert resolver.resolve("b4") == str(line[0])
    assert resolver.resolve(str(line[1]).upper()) == str(line[1])
    for ref, says in (("b3", "rev-list --count 3"), ("b9", "has only 5 commits"), ("v1.0", "neither a tag")):
        with pytest.raises(extract.ExtractError, match=says):
            resolver.resolve(ref)


def test_pairing_follows_the_numbering_and_says_what_changed():
    before = {"hooks.patch": b"+a\n", "models/laguna.patch": b"@@ -1 +1 @@\n+b\n", "ui.patch": b"+c\n"}
    after = {
        "001-hooks.patch": b"+a\n",
        "models/003-laguna.patch": b"@@ -9 +9 @@\n+b\n",
        "new.patch": b"+d\n",
    }
    pairs = extract.pair(before, after)
    assert pairs == [
        ("hooks.patch", "001-hooks.patch"),
        ("models/laguna.patch", "models/003-laguna.patch"),
        ("ui.patch", None),
        (None, "new.patch"),
    ]
    kinds = [extract.change_kind(before.get(b or ""), after.get(a or "")) for b, a in pairs]
    assert kinds == ["unchanged", "refreshed", "dropped", "added"]
    assert extract.change_kind(b"+a\n", b"+a\n+b\n") == "rewritten"


def test_extract_without_mirrors_says_what_to_set(monkeypatch, capsys):
    monkeypatch.delenv("LLAMA_BOT_REAL_OLLAMA", raising=False)
    assert extract.main(["--list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "set LLAMA_BOT_REAL_OLLAMA" in err


@needs_mirrors
def test_extract_reproduces_the_committed_fixtures(tmp_path):
    assert extract.main(["--out", str(tmp_path)]) == 0
    made = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert made == sorted(c.id for c in CASES)
    assert (tmp_path / "NOTICE").read_text() == (REAL_DATA / "NOTICE").read_text()
    for case, fresh in zip(CASES, all_cases(tmp_path)):
        assert (fresh.root / "case.toml").read_text() == (case.root / "case.toml").read_text()
        for side in ("before", "after"):
            assert fresh.patches(side) == case.patches(side)
        for side in ("old", "new"):
            assert fresh.upstream(side) == case.upstream(side)


@needs_mirrors
def test_ref_resolver_agrees_with_the_mirrors_tags():
    path = Path(MIRRORS["LLAMA_BOT_REAL_LLAMA_CPP"])
    resolver = extract.RefResolver(path)
    repo = pygit2.Repository(str(path))
    tags = sorted((r for r in repo.references if r.startswith("refs/tags/b")), key=lambda r: int(r[11:]))
    for ref in tags[-40::8]:
        assert resolver.by_count(int(ref[11:])) == str(repo.lookup_reference(ref).peel(pygit2.Commit).id)


@needs_mirrors
@by_id()
def test_the_fixture_gives_the_engine_what_the_whole_upstream_gives(case, engine_runs):
    """The fixture holds all the engine reads: on the full llama.cpp history it says the same."""
    _, pin, _ = engine_runs[case.id]
    repo = pygit2.Repository(MIRRORS["LLAMA_BOT_REAL_LLAMA_CPP"])
    up = case.meta["upstream"]
    full = run_engine(case, Upstream(repo, up["repository"]), (up["old_commit"], up["new_commit"]))

    def seen(report):
        return [
            (r.path, r.status, r.new_text, [(h.file, h.new_line, h.status) for h in r.hunks])
            for r in report.patches
        ]

    assert seen(full) == seen(pin)


ENUM = "enum llm_arch {\n    LLM_ARCH_A,\n    LLM_ARCH_B,\n    LLM_ARCH_UNKNOWN,\n};\n"
BODY = "int f(void) {\n" + "".join(f"    step_{i}();\n" for i in range(12)) + "}\n"


def _ollama_history(tmp_path: Path) -> tuple[RepoBuilder, RepoBuilder, list[pygit2.Oid]]:
    """A llama.cpp-like master (no tags) and an Ollama-like history with two bumps and a follow-up fix."""
    from tests.gitutil import make_patch

    llama = RepoBuilder(tmp_path / "llama.git")
    llama.commit("b1", {"LICENSE": "MIT License (llama)\n", "src/arch.h": ENUM, "src/f.c": BODY})
    moved = BODY.replace("step_4();", "step_4(1);")  # two lines above the hook: a clean three-way merge
    llama.commit("b2: step_4 takes an argument (#100)", {"src/f.c": moved})
    appended = ENUM.replace("    LLM_ARCH_UNKNOWN", "    LLM_ARCH_C,\n    LLM_ARCH_UNKNOWN")
    llama.commit("b3: add arch C (#101)", {"src/arch.h": appended})
    llama.branch("master")

    def hook(body: str) -> bytes:
        return make_patch(body, body.replace("step_6();\n", "step_6();\n    ollama_hook();\n"), "src/f.c")

    def arch(enum: str, after: str) -> bytes:
        return make_patch(
            enum, enum.replace(f"{after},\n", f"{after},\n    LLM_ARCH_LAGUNA,\n"), "src/arch.h", 1
        )

    ollama = RepoBuilder(tmp_path / "ollama.git")
    patches = "llama/compat/001-hook.patch", "llama/compat/models/002-arch.patch"
    commits = [
        ollama.commit(
            "start",
            {
                "LICENSE": "MIT License (ollama)\n",
                "LLAMA_CPP_VERSION": "b1\n",
                patches[0]: hook(BODY),
                patches[1]: arch(ENUM, "LLM_ARCH_B"),
            },
        )
    ]
    commits.append(
        ollama.commit("llama.cpp update (#1)", {"LLAMA_CPP_VERSION": "b2\n", patches[0]: hook(moved)})
    )
    commits.append(ollama.commit("llama.cpp update (#2)", {"LLAMA_CPP_VERSION": "b3\n"}))
    # the maintainers put the entry at the top, where no rule would: the engine's result cannot equal theirs
    commits.append(
        ollama.commit("fix the arch patch (follow up to #2)", {patches[1]: arch(appended, "LLM_ARCH_A")})
    )
    return llama, ollama, commits


def test_extract_on_a_small_history_writes_what_the_engine_runs_on(tmp_path, monkeypatch, capsys):
    """End to end without the mirrors: bumps found, follow-up fix taken as the maintainers' result, refs
    resolved by count, fixtures written; the engine's result is then measured against the maintainers'."""
    llama, ollama, commits = _ollama_history(tmp_path)
    monkeypatch.setenv("LLAMA_BOT_REAL_OLLAMA", str(ollama.path))
    monkeypatch.setenv("LLAMA_BOT_REAL_LLAMA_CPP", str(llama.path))
    out = tmp_path / "real"
    assert extract.main(["--out", str(out)]) == 0
    assert "MIT License (llama)" in (out / "NOTICE").read_text()
    merged, appended = all_cases(out)
    assert (merged.id, appended.id) == ("b1-b2", "b2-b3")
    assert appended.meta["ollama"]["commit"] == str(commits[2])
    assert appended.meta["ollama"]["follow_ups"] == [str(commits[3])]
    line = [str(c.id) for c in llama.repo.walk(llama.head)][::-1]
    assert (appended.meta["upstream"]["old_commit"], appended.meta["upstream"]["new_commit"]) == (
        line[1],
        line[2],
    )
    assert [(c.before, c.change) for c in appended.changes] == [
        ("001-hook.patch", "unchanged"),
        ("models/002-arch.patch", "refreshed"),
    ]

    results = {}
    for case in (merged, appended):
        up = build_upstream(case, tmp_path / f"{case.id}.git")
        results[case.id] = {m.patch: m for m in measure(case, run_engine(case, fixture_upstream(up, case)))}
    hook = results["b1-b2"]["001-hook.patch"]
    assert hook.result.status == "regenerated" and hook.equal
    arch = results["b2-b3"]["models/002-arch.patch"]
    assert arch.applies is False and arch.equal is False
    rebuilt = arch.result.status in ("regenerated", "fuzzy")
    assert arch.differing == (["src/arch.h"] if rebuilt else [])
    assert arch.result.message in arch.why
