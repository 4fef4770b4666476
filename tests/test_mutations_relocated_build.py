"""The build edits of the mutation suite on Ollama's tree with its llama.cpp build moved elsewhere
(tests/mutations/relocate.py, layout B): the review finds where Ollama sets upstream's options from its build
model, not from a folder's name, so it catches the same edits, at the moved lines, and raises nothing more."""

from __future__ import annotations

import pytest

from tests.mutations import suite
from tests.mutations.relocate import LAYOUTS

BUILD = [m for m in suite.load() if m.area == "build"]
MOVED_BUILD = next(layout for layout in LAYOUTS if layout.name == "B")

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> suite.SuiteResult:
    where = tmp_path_factory.mktemp("relocated-build") / "repo.git"
    return suite.run_suite(mutations=BUILD, where=where, layout=MOVED_BUILD)


@pytest.mark.parametrize("ident", [m.id for m in BUILD if m.breaking])
def test_a_breaking_build_edit_is_caught_at_the_moved_lines(result, ident):
    v = result.verdicts[ident]
    assert v.caught, v.why


@pytest.mark.parametrize("ident", [m.id for m in BUILD if not m.breaking])
def test_a_harmless_build_edit_raises_nothing_above_info(result, ident):
    v = result.verdicts[ident]
    assert not v.false_alarm, v.why
