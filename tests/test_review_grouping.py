"""One upstream commit is one item across detectors; an item ties to the code Ollama ships or is not said."""

from bot.model import Commit, Finding, LocalRef
from bot.review import consumer_linked
from bot.review.changes import Draft
from bot.review.grouping import by_commit

OPENMP = Commit(
    "bf0040e15fd5", "CI: fetch LLVM's OpenMP on Windows (#26678)", "https://example.invalid/c/bf0040e15fd5"
)
OTHER = Commit(
    "2fb989b9e79b", "fit: also take into account n_streams (#27496)", "https://example.invalid/c/2fb989b9e79b"
)


def _finding(area, severity, title, path, line, commit, refs):
    return Finding(area, severity, title, f"{title}.", path, line, [commit], [LocalRef(*r) for r in refs])


def test_one_commits_change_of_one_upstream_file_is_one_item_across_areas():
    tool = _finding(
        "build",
        "medium",
        "New build dependency: tool 7z",
        "ggml/src/CMakeLists.txt",
        261,
        OPENMP,
        [("llama/server/CMakePresets.json", 29)],
    )
    names = _finding(
        "discovery",
        "medium",
        "Runtime library names changed in CMakeLists.txt",
        "ggml/src/CMakeLists.txt",
        255,
        OPENMP,
        [("discover/native_probe_platform.go", 78)],
    )
    elsewhere = _finding(
        "server", "info", "Split mode changed", "common/fit.cpp", 891, OTHER, [("llm/server.go", 9)]
    )
    (item, kept) = by_commit([tool, names, elsewhere])
    assert item.title == "New build dependency: tool 7z"
    assert "Runtime library names changed in CMakeLists.txt (`ggml/src/CMakeLists.txt:255`)" in item.detail
    assert item.local_refs == [
        LocalRef("llama/server/CMakePresets.json", 29),
        LocalRef("discover/native_probe_platform.go", 78),
    ]
    assert kept is elsewhere


def test_a_commits_changes_of_two_files_in_two_areas_stay_two_items():
    a = _finding(
        "build", "medium", "New CMake option X", "CMakeLists.txt", 3, OPENMP, [("CMakeLists.txt", 1)]
    )
    b = _finding("server", "high", "Flag --y removed", "common/arg.cpp", 9, OPENMP, [("llm/server.go", 2)])
    assert len(by_commit([a, b])) == 2


def _draft(severity, title, refs):
    return Draft(
        "server",
        severity,
        title,
        f"{title}.",
        "common/arg.cpp",
        1,
        local_refs=tuple(LocalRef(*r) for r in refs),
    )


def test_references_into_go_tests_are_left_out_and_an_unlinked_info_item_goes():
    tested = _draft("info", "Split mode changed", [("llm/server.go", 4), ("llm/server_test.go", 40)])
    only_tests = _draft("info", "Cadence changed", [("llm/server_test.go", 7)])
    unlinked = _draft("info", "New architecture `x`", [])
    grave = _draft("high", "Flag --y removed", [])
    kept = consumer_linked([tested, only_tests, unlinked, grave])
    assert [d.title for d in kept] == ["Split mode changed", "Flag --y removed"]
    assert kept[0].local_refs == (LocalRef("llm/server.go", 4),)


def test_changes_near_a_patchs_hunks_are_a_part_of_the_item_that_sends_the_maintainer_to_that_patch():
    """b9452 -> b10587: the loader's parameter the hooks patch names is gone (one commit), and upstream changed
    code near three of the patch's hunks (that commit and two more): one item, not two."""
    patch = "llama/compat/llama-cpp-hooks.patch"
    gone = _finding(
        "models",
        "high",
        "Parameter `use_mmap` is gone upstream",
        "src/llama-model-loader.cpp",
        527,
        OPENMP,
        [(patch, 17)],
    )
    near = Finding(
        "patch-context",
        "info",
        "Upstream changed src/llama-model-loader.cpp near hunks 2, 3, 5 of llama-cpp-hooks.patch",
        "...",
        "src/llama-model-loader.cpp",
        554,
        [OPENMP, OTHER],
        [LocalRef(patch, 13), LocalRef(patch, 21)],
    )
    other_file = Finding(
        "patch-context",
        "info",
        "Upstream changed tools/mtmd/clip.cpp near hunk 1",
        "...",
        "tools/mtmd/clip.cpp",
        9,
        [OTHER],
        [LocalRef(patch, 41)],
    )
    (item, alone) = by_commit([gone, near, other_file])
    assert (item.title, item.severity) == (gone.title, "high")
    assert "near hunks 2, 3, 5 of llama-cpp-hooks.patch" in item.detail
    assert item.local_refs == [LocalRef(patch, 17), LocalRef(patch, 13), LocalRef(patch, 21)]
    assert item.upstream_commits == [OPENMP, OTHER]
    assert alone is other_file  # another upstream file: the parameter item says nothing of it
