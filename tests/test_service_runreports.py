"""A platform run's report (the contract probe's JSON, uploaded as an artifact) read back into the checklist:
signed webhooks into the bot, the fake GitHub's Actions API and artifact downloads."""

import io
import json
import zipfile

import pytest

from bot.decisions.runreport import REPORT_BYTES
from tests.conftest import NAME, OWNER
from tests.test_service_validation import checklist, command, run_event

PROBE = "contract-probe"
ARTIFACT = "llama-bot-probe"


@pytest.fixture
def probe_workflow(scenario):
    return scenario.fake.add_workflow(OWNER, NAME, "llama-bot-probe.yaml")


def zipped(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


def report(*findings: dict) -> bytes:
    return json.dumps(
        {
            "pins": [{"name": "llama.cpp", "old_ref": "b1", "new_ref": "b2", "findings": list(findings)}],
            "skipped": [],
        }
    ).encode()


REFUSED = {
    "area": "server",
    "severity": "high",
    "title": "llama-server now refuses POST /completion repeat_last_n=-1, which Ollama can send",
    "detail": "POST /completion with repeat_last_n = -1: 200 at b1; 400 at b2 (Value must be between 0 and 2147483647).",
    "upstream_path": "",
    "upstream_line": 0,
    "upstream_commits": [],
    "local_refs": [{"path": "llm/server.go", "line": 12}],
    "check": "probe.refused",
}


async def probe_run(bot, scenario, archive: bytes | None, conclusion="failure") -> int:
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    await command(bot, scenario, f"/llama validate {PROBE}")
    run_id = scenario.fake.dispatches[-1]["run_id"]
    if archive is not None:
        scenario.fake.add_artifact(run_id, ARTIFACT, archive)
    await run_event(bot, scenario, run_id, "completed", "completed", conclusion)
    return run_id


async def test_the_probe_runs_findings_join_the_review_in_the_checklist(bot, scenario, probe_workflow):
    await probe_run(bot, scenario, zipped({"probe.json": report(REFUSED)}))
    body = checklist(scenario)
    review = body.split("### Upstream review")[1].split("### Platform validation")[0]
    assert (
        "- [ ] **high** llama-server now refuses POST /completion repeat_last_n=-1, which Ollama can send"
        in review
    )
    assert "400 at b2" in review and "`llm/server.go:12`" in review
    assert "The contract-probe run's report: 1 finding, in the upstream review above." in body
    assert "| contract-probe | completed | failure |" in body
    # the archive was fetched from where GitHub pointed, without the installation token
    (download,) = scenario.fake.blob_requests
    assert "Authorization" not in download


async def test_a_report_that_found_nothing_says_so(bot, scenario, probe_workflow):
    await probe_run(bot, scenario, zipped({"probe.json": report()}), conclusion="success")
    body = checklist(scenario)
    assert "The contract-probe run's report: nothing differs that Ollama reads." in body
    assert (
        "### Upstream review" not in body
        or "probe" not in body.split("### Upstream review")[1].split("###")[0]
    )


@pytest.mark.parametrize(
    ("archive", "said"),
    [
        (None, "the run uploaded no artifact llama-bot-probe"),
        (b"not a zip", "the artifact is not a readable zip archive (BadZipFile)"),
        (zipped({"probe.json": b"{"}), "the report is not JSON"),
        (
            zipped({"probe.json": b'{"pins": [{"findings": [{"severity": "loud"}]}]}'}),
            "a finding of the report has no known severity",
        ),
        (zipped({"a.json": report(), "b.json": report()}), "the artifact holds 2 JSON files, not one report"),
        (zipped({"probe.json": b" " * (REPORT_BYTES + 10)}), "the report is larger than 4 MiB"),
    ],
)
async def test_a_report_that_cannot_be_read_is_said_in_the_checklist(
    bot, scenario, probe_workflow, archive, said
):
    await probe_run(bot, scenario, archive)
    body = checklist(scenario)
    assert f"- The contract-probe run's report could not be read: {said}" in body
    assert "Traceback" not in body


async def test_a_reports_text_is_shown_as_text(bot, scenario, probe_workflow):
    hostile = {
        **REFUSED,
        "title": "<!-- id:integration-tests --> [x] @maintainers see http://evil.example",
        "detail": "line one\n- [x] Integration tests <!-- id:integration-tests -->\n<img src=x onerror=alert(1)>",
        "check": "probe.refused",
    }
    await probe_run(bot, scenario, zipped({"probe.json": report(hostile)}))
    body = checklist(scenario)
    assert "<img" not in body and "<!-- id:integration-tests --> [x]" not in body
    assert body.count("<!-- id:integration-tests -->") == 1  # the checklist's own box, not one forged
    assert "@maintainers" not in body.replace("@\u200bmaintainers", "")
