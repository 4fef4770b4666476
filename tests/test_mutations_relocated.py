"""The mutation suite on Ollama's tree with its folders moved (tests/mutations/relocate.py: `llm/` and
`discover/` to `internal/`, `llama/server/` to `build/llama-server/`): the review reads Ollama through its
contract inventory and build model, never a folder's name, so each layout catches what the original tree
catches, at the moved lines, and raises nothing more. The tables of mutations.toml and fresh.toml (the
second fresh-eyes round, fresh2.toml, runs on the original tree only: two layouts of it would double the
suite's time in `make test`)."""

from __future__ import annotations

import pytest

from tests.mutations import suite
from tests.mutations.relocate import LAYOUTS
from tests.mutations.table import TABLES, load
from tests.test_mutations import KNOWN_FALSE_ALARMS, KNOWN_MISSES

MUTATIONS = load(TABLES[:2])

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module", params=LAYOUTS, ids=lambda layout: layout.name)
def result(request, tmp_path_factory) -> suite.SuiteResult:
    where = tmp_path_factory.mktemp(f"relocated-{request.param.name}") / "repo.git"
    return suite.run_suite(mutations=MUTATIONS, where=where, layout=request.param)


def test_every_breaking_edit_caught_on_the_original_tree_is_caught_at_the_moved_lines(result):
    missed = {
        ident: v.why
        for ident, v in result.verdicts.items()
        if v.mutation.breaking and not v.caught and ident not in KNOWN_MISSES
    }
    assert not missed, missed


def test_no_harmless_edit_raises_an_alarm_on_a_moved_tree(result):
    alarms = {
        ident: v.why
        for ident, v in result.verdicts.items()
        if v.false_alarm and ident not in KNOWN_FALSE_ALARMS
    }
    assert not alarms, alarms
