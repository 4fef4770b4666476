"""The merge and placement rules on Ollama's real bumps (tests/data/real/): each rule gives the file the
maintainers committed, byte for byte, and the hunk names the rule."""

from __future__ import annotations

import pytest

from tests.realcases import (
    all_cases,
    build_upstream,
    fixture_upstream,
    git_apply_files,
    rebuilt_stack,
    run_engine,
)

CASES = {c.id: c for c in all_cases()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """case id -> (the engine's report, the new ref's files with the engine's stack, with the maintainers')."""
    out = {}
    for case_id in ("b9479-b9493", "b9509-b9626", "b9672-b9781", "b9781-b9840", "b10091-b10242"):
        case = CASES[case_id]
        up = build_upstream(case, tmp_path_factory.mktemp(case_id) / "upstream.git")
        pin = run_engine(case, fixture_upstream(up, case))
        ours = git_apply_files(case.upstream("new"), rebuilt_stack(pin))[1]
        theirs = git_apply_files(case.upstream("new"), case.stack("after"))[1]
        out[case_id] = (pin, ours, theirs)
    return out


def _details(pin, patch: str, file: str) -> list[str]:
    (result,) = [p for p in pin.patches if p.path.endswith(patch)]
    return [h.detail for h in result.hunks if h.file == file and h.detail]


def test_an_entry_upstream_also_appended_to_goes_after_upstreams_and_is_renumbered_and_aligned(runs):
    """b9479: upstream appended MELLUM (arch) and two pre-types taking 54 and 55, and re-aligned the enum."""
    pin, ours, theirs = runs["b9479-b9493"]
    for path in ("src/llama-arch.cpp", "src/llama-arch.h", "src/llama-vocab.h", "src/llama-model-loader.cpp"):
        assert ours[path] == theirs[path], path
    assert (
        "    LLAMA_VOCAB_PRE_TYPE_MELLUM2           = 55,\n    LLAMA_VOCAB_PRE_TYPE_LAGUNA            = 56,\n};"
        in (ours["src/llama-vocab.h"].decode())
    )
    (vocab,) = _details(pin, "llama-cpp-laguna.patch", "src/llama-vocab.h")
    assert vocab.endswith("renumbered from 54 to 56: upstream now uses 54 and 55")
    assert "added lines re-spaced like upstream's re-aligned neighbours" in vocab
    (loader,) = _details(pin, "llama-cpp-laguna.patch", "src/llama-model-loader.cpp")
    assert loader == "upstream re-spaced the neighbouring lines"


@pytest.mark.parametrize("case_id", ["b9509-b9626", "b9781-b9840"])
def test_an_arch_appended_before_the_terminator_stays_last(runs, case_id):
    pin, ours, theirs = runs[case_id]
    assert ours["src/llama-arch.h"] == theirs["src/llama-arch.h"]
    assert _details(pin, "laguna.patch", "src/llama-arch.h") == [
        "upstream inserted 1 line at the same place: kept theirs first, ours after"
    ]


def test_a_hook_in_code_upstream_nested_is_nested_through_the_merge(runs):
    pin, ours, theirs = runs["b9672-b9781"]
    assert ours["tools/mtmd/clip.cpp"] == theirs["tools/mtmd/clip.cpp"]
    assert _details(pin, "hooks.patch", "tools/mtmd/clip.cpp") == [
        "added lines re-indented by +4 columns like their neighbours"
    ]


def test_an_include_upstream_also_added_after_the_same_line_goes_after_upstreams(runs):
    """b10091: upstream added `#include "llama.h"` where the patch adds its include, like the maintainers."""
    pin, ours, theirs = runs["b10091-b10242"]
    head = b"\n".join(ours["src/llama-model-loader.cpp"].split(b"\n")[:12])
    assert head == b"\n".join(theirs["src/llama-model-loader.cpp"].split(b"\n")[:12])
    assert b'#include "llama.h"\n#include "llama-ollama-compat.h"\n' in head
    assert "upstream inserted 1 line at the same place: kept theirs first, ours after" in _details(
        pin, "hooks.patch", "src/llama-model-loader.cpp"
    )
