"""`check --fail-on`: what exit 1 means, for a CI that gates on findings as well as patches."""

import pytest

from bot.model import Finding, PatchResult, PinReport, Report


def report(statuses: list[str], severities: list[str]) -> Report:
    pin = PinReport("llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2")
    pin.patches = [PatchResult(f"llama/compat/{n}.patch", s, "") for n, s in enumerate(statuses)]
    pin.findings = [
        Finding("server", s, f"finding {n}", "", "tools/server/server.cpp", 1)
        for n, s in enumerate(severities)
    ]
    return Report(pins=[pin])


@pytest.mark.parametrize(
    ("statuses", "severities", "fails"),
    [
        (["clean"], ["high"], {"patches": False, "high": True, "medium": True}),
        (["clean"], ["medium", "info"], {"patches": False, "high": False, "medium": True}),
        (["offset"], ["info"], {"patches": False, "high": False, "medium": False}),
        (["regenerated"], [], {"patches": True, "high": True, "medium": True}),
    ],
)
def test_fail_on_adds_the_findings_of_that_severity_or_graver(statuses, severities, fails):
    assert {gate: report(statuses, severities).fails(gate) for gate in fails} == fails
