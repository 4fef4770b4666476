"""The pin dashboard's pure parts: which boxes a body ticks, when a scheduled look refreshes it, what each
pin's line says, and the `[dashboard]` configuration."""

from __future__ import annotations

import re

import pytest

from bot.config import Dashboard, parse_config
from bot.decisions.bump import RefChoice
from bot.decisions.dashboard import BODY_LIMIT, MARKER, box_id, days_between, due, fit, state_of, ticked
from bot.model import AnalysisError, Finding, PatchResult, PinReport

PINS = ("llama.cpp", "mlx", "mlx-c")


def test_only_the_bots_own_boxes_of_configured_pins_count_as_ticked():
    body = "\n".join(
        [
            f"- [x] Bump llama.cpp {box_id('llama.cpp')}",
            f"* [X] Bump mlx {box_id('mlx')}",
            f"- [ ] Bump mlx-c {box_id('mlx-c')}",
            f"- [x] Bump other {box_id('other')}",  # no such pin
            f"> - [x] quoted {box_id('mlx-c')} and more",  # the id is not at the end of a task line
            f"- [x] Bump llama.cpp again {box_id('llama.cpp')}",
            "- [x] <!-- id:bump-mlx-c -->-->",
        ]
    )
    assert ticked(body, PINS) == ["llama.cpp", "mlx"]
    assert ticked("", PINS) == [] and ticked("x" * 100_000, PINS) == []


def test_a_pin_name_the_hidden_id_cannot_carry_gets_no_box():
    assert box_id("llama.cpp") == "<!-- id:bump-llama.cpp -->"
    assert box_id("a --> b") == "" and box_id("") == "" and box_id("x" * 101) == ""


def test_a_scheduled_look_refreshes_when_never_shown_an_upstream_moved_or_the_period_passed():
    newest = {"llama.cpp": "b200"}
    assert due(None, newest, 0.0, 3600, 10.0)
    assert not due(newest, newest, 1000.0, 3600, 1000.0 + 3599)
    assert due(newest, newest, 1000.0, 3600, 1000.0 + 3600)
    assert due({"llama.cpp": "b100"}, newest, 1000.0, 3600, 1001.0)
    assert due(newest, {}, 1000.0, 3600, 1001.0)  # a pin whose newest can no longer be told


def test_a_pins_line_carries_the_forecast_of_its_bump():
    report = PinReport(
        "llama.cpp",
        "LLAMA_CPP_VERSION",
        "b100",
        "b200",
        compare_url="https://example/compare/b100...b200",
        commit_count=12,
        old_time=0,
        new_time=3 * 86400 + 5,
        patches=[PatchResult("llama/compat/0001.patch", "regenerated", "")],
        findings=[
            Finding("server", "info", "a note", "", "", None),
            Finding("server", "medium", "later", "", "", None),
            Finding("build", "high", "first", "", "", None),
        ],
    )
    state = state_of(RefChoice("llama.cpp", "b100", "b200"), report)
    assert state.behind and state.commits == 12 and state.days == 3
    assert state.patches == (("llama/compat/0001.patch", "regenerated"),)
    assert state.findings == (("high", "first"), ("medium", "later"))  # graver first, info left out

    at_newest = state_of(RefChoice("llama.cpp", "b200", "b200"), None)
    assert not at_newest.behind and at_newest.newest is None
    refused = state_of(RefChoice("mlx", None, None, refusal="no version file"), None)
    assert refused.why == "no version file" and not refused.behind
    failed = state_of(RefChoice("llama.cpp", "b100", "b200"), None, "the analysis ran out of memory")
    assert failed.behind and failed.why == "the analysis ran out of memory"
    assert days_between(100, 50) == 0 and days_between(None, 5) is None
    back = PinReport("mlx", "MLX_VERSION", "a" * 40, "v0.31.0", commit_count=0, reverted_count=21)
    older = state_of(RefChoice("mlx", "a" * 40, "v0.31.0"), back)
    assert not older.behind and "(21 upstream commits would be taken away)" in older.why


def test_the_body_keeps_its_marker_first_and_fits_githubs_limit():
    body = fit("x" * (2 * BODY_LIMIT))
    assert body.startswith(MARKER) and len(body) <= BODY_LIMIT and body.endswith("(cut to fit)")


def test_the_dashboard_is_off_unless_enabled_and_its_keys_are_checked():
    assert parse_config(None).dashboard == Dashboard()
    on = parse_config('[dashboard]\nenabled = true\ntitle = "Pins"\nlabel = "deps"\nevery = "12h"\n')
    assert on.dashboard == Dashboard(True, "Pins", "deps", 12 * 3600)
    for text, error in [
        ("[dashboard]\nenabld = true\n", "dashboard.enabld: unknown key (did you mean `enabled`?)"),
        ('[dashboard]\nenabled = "yes"\n', "dashboard.enabled: expected bool, got str"),
        ('[dashboard]\nlabel = "a,b"\n', "dashboard.label: must be 1 to 50 characters, without a comma"),
        ('[dashboard]\ntitle = ""\n', "dashboard.title: must be 1 to 200 characters"),
        ('[dashboard]\nevery = "30m"\n', "dashboard.every: '30m' is shorter than an hour"),
    ]:
        with pytest.raises(AnalysisError, match=re.escape(error)):
            parse_config(text)
