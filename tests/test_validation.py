"""Platform validation: choosing platforms, the dispatch, matching runs, check-run bodies, rows, the store."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import sqlite3

import aiohttp
import jsonschema
import pygit2
import pytest
from gidgethub import BadRequest

from bot.config import Platform, parse_config
from bot.decisions.validation import (
    CHECK_CONCLUSIONS,
    Dispatch,
    apply_run,
    check_conclusion,
    check_name,
    dispatch_body,
    dispatch_ref,
    fork_branch,
    is_fork,
    match_run,
    new_dispatch,
    new_request_id,
    platform_of_check,
    runs_query,
    select_platforms,
)
from bot.model import PinReport, Report
from bot.render.checklist import build_checklist, render_markdown
from bot.render.checkruns import check_run_create, check_run_update, dispatch_failed_update
from bot.render.platforms import platform_rows
from bot.render.replies import TEMPLATE, dispatch_error_reply, validate_reply
from bot.render.words import format_duration
from bot.stores.validationstore import ValidationStore
from bot.times import iso, utc_now
from tests import fakegithub
from tests.fakegithub import Spec, commit, installation_gh, payload

fake_github = fakegithub.fake_github

CONFIG = parse_config(None)
CUDA = next(p for p in CONFIG.platforms if p.name == "cuda")
WORKFLOW = "test-llamacpp-update.yaml"
SHA, OLD_SHA = "a" * 40, "b" * 40
T0 = "2026-05-01T10:00:00Z"


def spec() -> Spec:
    return Spec(fakegithub._load("openapi/github-subset.json"))


def operation(s: Spec, method: str, path: str) -> dict:
    return s.doc["paths"][path][method]


def dispatch(platform="cuda", request_id="lb-000000000001", at=T0, sha=SHA, **changes) -> Dispatch:
    d = Dispatch("ollama/ollama", 12, platform, WORKFLOW, "bump-llama", sha, request_id, at, check_run_id=77)
    return dataclasses.replace(d, **changes)


def run(**changes) -> dict:
    """A workflow_run object as a webhook carries it, from the stored example payload."""
    data = copy.deepcopy(payload("workflow_run.requested")["workflow_run"])
    data.update(
        id=5001,
        path=f".github/workflows/{WORKFLOW}",
        head_sha=SHA,
        head_branch="bump-llama",
        event="workflow_dispatch",
        display_title="test-llamacpp-update",
        name="test-llamacpp-update",
        created_at="2026-05-01T10:00:05Z",
        run_started_at="2026-05-01T10:00:05Z",
        updated_at="2026-05-01T10:12:08Z",
        run_number=41,
        run_attempt=1,
        html_url="https://github.com/ollama/ollama/actions/runs/5001",
    )
    data.update(changes)
    return data


def pull(number=12, fork=False, head_repo="ollama/ollama") -> dict:
    data = copy.deepcopy(payload("pull_request.opened")["pull_request"])
    data["number"] = number
    data["base"]["repo"]["full_name"] = "ollama/ollama"
    data["head"].update(ref="bump-llama", sha=SHA)
    data["head"]["repo"]["full_name"] = "someone/ollama" if fork else head_repo
    return data


# -- choosing platforms and building the dispatch ---------------------------------------------------


def test_select_all_keeps_config_order_and_drops_duplicates():
    names = [p.name for p in CONFIG.platforms]
    chosen, unknown = select_platforms(["cuda", "all", "metal"], CONFIG)
    assert [p.name for p in chosen] == ["cuda", *[n for n in names if n != "cuda"]]
    assert unknown == []


def test_select_reports_unknown_names_once_and_accepts_commas_and_case():
    chosen, unknown = select_platforms(["CUDA,rocm", "tpu", "rocm", "tpu", "x86,"], CONFIG)
    assert [p.name for p in chosen] == ["cuda", "rocm"]
    assert unknown == ["tpu", "x86"]


def test_request_ids_are_unique_short_and_safe_in_a_run_name():
    ids = {new_request_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"lb-[0-9a-f]{12}", i) for i in ids)


def test_dispatch_body_adds_pr_and_request_id_to_the_configured_inputs():
    body = dispatch_body(
        Platform("cuda", WORKFLOW, {"platform": "cuda", "pr": "spoofed"}), "bump-llama", 12, "lb-00000000000a"
    )
    assert body == {
        "ref": "bump-llama",
        "return_run_details": True,
        "inputs": {"platform": "cuda", "pr": "12", "request_id": "lb-00000000000a"},
    }


def test_dispatch_body_matches_the_openapi_request_schema():
    s = spec()
    op = operation(s, "post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches")
    params = {"owner": "ollama", "repo": "ollama", "workflow_id": WORKFLOW}
    for platform in CONFIG.platforms:
        assert (
            s.check_request(op, params, {}, dispatch_body(platform, "bump-llama", 12, new_request_id())) == []
        )
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    jsonschema.validate(dispatch_body(CUDA, "llama-bot/pr-3", 3, "lb-0123456789ab"), schema)
    crowded = Platform("big", WORKFLOW, {f"k{i}": "v" for i in range(24)})
    with pytest.raises(jsonschema.ValidationError):  # the validation has teeth: 26 inputs are too many
        jsonschema.validate(dispatch_body(crowded, "main", 1, "lb-0123456789ab"), schema)


def test_fork_detection_and_branch():
    assert not is_fork(pull())
    assert is_fork(pull(fork=True))
    deleted = pull()
    deleted["head"]["repo"] = None
    assert is_fork(deleted)
    assert fork_branch(57) == "llama-bot/pr-57"
    assert dispatch_ref(pull()) == "bump-llama"
    assert dispatch_ref(pull(number=57, fork=True)) == "llama-bot/pr-57"


def test_new_dispatch_is_queued_on_the_approved_commit():
    d = new_dispatch("ollama/ollama", pull(fork=True), SHA, CUDA, T0, "lb-0000000000ff")
    assert (d.pr, d.platform, d.workflow, d.ref, d.head_sha, d.request_id, d.dispatched_at, d.status) == (
        12,
        "cuda",
        WORKFLOW,
        "llama-bot/pr-12",
        SHA,
        "lb-0000000000ff",
        T0,
        "queued",
    )
    assert d.run_id is None and d.check_run_id is None


# -- replies ---------------------------------------------------------------------------------------


def test_404_reply_names_the_file_and_gives_the_block():
    text = dispatch_error_reply(CUDA, 404, "Not Found")
    assert f"`.github/workflows/{WORKFLOW}`" in text and "404" in text
    assert "run-name:" in text and "${{ inputs.request_id }}" in text and "workflow_dispatch:" in text
    assert "platforms.cuda.workflow" in text


def test_422_without_trigger_says_to_add_workflow_dispatch():
    text = dispatch_error_reply(CUDA, 422, "Workflow does not have 'workflow_dispatch' trigger")
    assert "has no `workflow_dispatch` trigger" in text
    assert (
        "request_id:" in text and "pr:" in text and "platform:" in text and "under the existing `on:`" in text
    )


def test_422_unexpected_inputs_lists_exactly_those_inputs():
    text = dispatch_error_reply(CUDA, 422, 'Unexpected inputs provided: ["pr", "request_id"]')
    assert "`pr`, `request_id`" in text
    snippet = text.split("```yaml\n", 1)[1]
    assert re.findall(r"^      (\w+):$", snippet, re.MULTILINE) == ["pr", "request_id"]
    assert "${{ inputs.request_id }}" in snippet  # the run-name goes with request_id
    single = dispatch_error_reply(CUDA, 422, 'Unexpected inputs provided: ["gpu"]')
    assert "the input `gpu`" in single and "run-name" not in single.split("```yaml\n", 1)[1]


def test_other_refusals_quote_github():
    assert "No ref found for: llama-bot/pr-3" in dispatch_error_reply(
        CUDA, 422, "No ref found for: llama-bot/pr-3"
    )
    assert "(403: Resource not accessible by integration)" in dispatch_error_reply(
        CUDA, 403, "Resource not accessible by integration"
    )
    generic = dispatch_error_reply(CUDA, 422, "Required input 'x' not provided")
    assert "Required input 'x' not provided" in generic and "workflow_dispatch:" in generic


def test_validate_reply_for_a_fork_warns_about_secrets():
    pr = pull(number=57, fork=True)
    d = new_dispatch("ollama/ollama", pr, SHA, CUDA, T0, "lb-0000000000aa")
    text = validate_reply([d], ["tpu"], ["**rocm**: refused"], CONFIG, pr, "maintainer")
    assert "`cuda`" in text and "`llama-bot/pr-57`" in text and "`someone/ollama`" in text
    assert "the run uses the fork's code with this repository's secrets" in text and "@maintainer" in text
    assert (
        "Unknown platform `tpu`" in text
        and "`metal`, `cuda`, `rocm`, `vulkan`, `windows`, `mlx-metal`, `mlx-cuda`, `contract-probe`, or `all`"
        in text
    )
    assert text.rstrip().endswith("**rocm**: refused")
    same_repo = validate_reply([dispatch()], [], [], CONFIG, pull(), "maintainer")
    assert "secrets" not in same_repo and "`bump-llama`" in same_repo


def test_validate_reply_without_configured_platforms():
    empty = dataclasses.replace(CONFIG, platforms=())
    assert "add them under `[platforms]`" in validate_reply([], ["cuda"], [], empty, pull(), "m")


# -- matching runs ---------------------------------------------------------------------------------


def test_match_by_run_id_first():
    attached = dispatch("rocm", "lb-000000000002", run_id=5001)
    waiting = dispatch("cuda", "lb-000000000001")
    assert match_run([waiting, attached], run(display_title="x lb-000000000001")) is attached


def test_match_by_request_id_in_display_title_or_name():
    a, b = dispatch("cuda", "lb-000000000001"), dispatch("rocm", "lb-000000000002")
    assert match_run([a, b], run(display_title="llama-bot rocm PR #12 (lb-000000000002)")) is b
    assert match_run([a, b], run(display_title="", name="llama-bot cuda (lb-000000000001)")) is a


def test_a_title_naming_another_request_is_nobodys_run():
    a = dispatch("cuda", "lb-000000000001")
    assert match_run([a], run(display_title="llama-bot cuda PR #12 (lb-0000000000ff)")) is None
    taken = dispatch("cuda", "lb-000000000001", run_id=4000)
    assert match_run([taken], run(display_title="llama-bot cuda PR #12 (lb-000000000001)")) is None


def test_fallback_by_workflow_sha_and_time_takes_the_oldest():
    older = dispatch("cuda", "lb-000000000001", at="2026-05-01T09:59:58Z")
    newer = dispatch("rocm", "lb-000000000002", at="2026-05-01T10:00:01Z")
    assert match_run([newer, older], run()) is older
    assert match_run([newer], run()) is newer


def test_fallback_allows_small_clock_skew_only():
    late = dispatch(at="2026-05-01T10:00:50Z")  # the bot's clock is 45s ahead of GitHub's
    assert match_run([late], run()) is late
    assert match_run([dispatch(at="2026-05-01T10:02:00Z")], run()) is None  # run created before the dispatch
    assert match_run([dispatch(at="2026-05-01T08:00:00Z")], run()) is None  # long before: not its run


@pytest.mark.parametrize(
    "changes",
    [
        {"head_sha": OLD_SHA},
        {"path": ".github/workflows/other.yaml"},
        {"path": ".github/workflows/x-test-llamacpp-update.yaml"},
        {"event": "pull_request"},
    ],
)
def test_unmatched_runs_are_ignored(changes):
    assert match_run([dispatch()], run(**changes)) is None


def test_fallback_skips_dispatches_that_have_a_run_or_are_finished():
    assert match_run([dispatch(run_id=4000)], run()) is None
    assert match_run([dispatch(status="completed", conclusion="failure")], run()) is None


def test_example_payload_matches_nothing():
    """The stored example run (repository_dispatch, unrelated sha) is someone else's."""
    assert match_run([dispatch()], payload("workflow_run.completed")["workflow_run"]) is None


# -- following the run -----------------------------------------------------------------------------


@pytest.mark.parametrize("raw", sorted(CHECK_CONCLUSIONS))
def test_check_conclusions_pass_through(raw):
    assert check_conclusion(raw) == raw


@pytest.mark.parametrize("raw", ["stale", "startup_failure", None, "something_new"])
def test_other_conclusions_are_failures(raw):
    assert check_conclusion(raw) == "failure"


def test_check_run_update_bodies_follow_the_run():
    s = spec()
    op = operation(s, "patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
    params = {"owner": "ollama", "repo": "ollama", "check_run_id": "77"}
    queued = check_run_update(run(status="queued"), "requested", "cuda")
    assert queued["status"] == "queued" and "conclusion" not in queued
    assert queued["details_url"] == "https://github.com/ollama/ollama/actions/runs/5001"
    going = check_run_update(run(status="in_progress"), "in_progress", "cuda")
    assert going["status"] == "in_progress" and going["started_at"] == "2026-05-01T10:00:05Z"
    assert going["output"]["title"] == "cuda: in progress"
    done = check_run_update(run(status="completed", conclusion="timed_out"), "completed", "cuda")
    assert (done["status"], done["conclusion"], done["completed_at"]) == (
        "completed",
        "timed_out",
        "2026-05-01T10:12:08Z",
    )
    assert done["output"]["title"] == "cuda: timed_out in 12m 03s"
    summary = done["output"]["summary"]
    assert "#41" in summary and f"`{SHA[:12]}`" in summary and WORKFLOW in summary and "12m 03s" in summary
    stale = check_run_update(run(status="completed", conclusion="startup_failure"), "completed", "cuda")
    assert stale["conclusion"] == "failure" and "`startup_failure`" in stale["output"]["summary"]
    rerun = check_run_update(run(status="in_progress", run_attempt=2), "in_progress", "cuda")
    assert "attempt 2" in rerun["output"]["summary"]
    for body in (queued, going, done, stale, rerun):
        assert s.check_request(op, params, {}, body) == []


@pytest.mark.parametrize("raw", [*sorted(CHECK_CONCLUSIONS), "stale", "startup_failure"])
def test_every_completed_body_is_a_valid_patch(raw):
    s = spec()
    op = operation(s, "patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
    body = check_run_update(run(status="completed", conclusion=raw), "completed", "metal")
    assert s.check_request(op, {"owner": "o", "repo": "r", "check_run_id": "1"}, {}, body) == []


def test_create_and_failed_bodies_are_valid():
    s = spec()
    create = check_run_create(dispatch())
    assert (create["name"], create["head_sha"], create["status"], create["external_id"]) == (
        "validate: cuda",
        SHA,
        "queued",
        "lb-000000000001",
    )
    assert (
        s.check_request(
            operation(s, "post", "/repos/{owner}/{repo}/check-runs"), {"owner": "o", "repo": "r"}, {}, create
        )
        == []
    )
    failed = dispatch_failed_update("cuda", dispatch_error_reply(CUDA, 404, "Not Found"), T0)
    assert failed["conclusion"] == "failure" and "404" in failed["output"]["summary"]
    assert (
        s.check_request(
            operation(s, "patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
            {"owner": "o", "repo": "r", "check_run_id": "1"},
            {},
            failed,
        )
        == []
    )


def test_check_names():
    assert check_name("cuda") == "validate: cuda"
    assert platform_of_check("validate: cuda") == "cuda"
    assert platform_of_check("validate: ") is None and platform_of_check("llama.cpp: patches") is None


def test_apply_run_moves_forward_and_ignores_late_events():
    d = dispatch()
    queued = apply_run(d, run(status="queued"), "requested")
    assert (queued.run_id, queued.status, queued.run_url) == (
        5001,
        "queued",
        "https://github.com/ollama/ollama/actions/runs/5001",
    )
    going = apply_run(queued, run(status="in_progress"), "in_progress")
    done = apply_run(going, run(status="completed", conclusion="cancelled"), "completed")
    assert (done.status, done.conclusion, done.started_at, done.completed_at) == (
        "completed",
        "cancelled",
        "2026-05-01T10:00:05Z",
        "2026-05-01T10:12:08Z",
    )
    assert apply_run(done, run(status="in_progress"), "in_progress") is None  # delivered late
    assert apply_run(done, run(status="queued"), "requested") is None
    assert apply_run(d, run(), "unknown_action") is None


def test_a_rerun_starts_the_dispatch_over():
    done = dispatch(
        run_id=5001,
        status="completed",
        conclusion="failure",
        started_at="2026-05-01T10:00:05Z",
        completed_at="2026-05-01T10:12:08Z",
    )
    again = apply_run(
        done, run(status="in_progress", run_attempt=2, run_started_at="2026-05-01T11:00:00Z"), "in_progress"
    )
    assert (again.status, again.conclusion, again.completed_at) == ("in_progress", None, None)


def test_runs_query_is_a_valid_list_runs_query():
    s = spec()
    query = runs_query(dispatch(at="2026-05-01T10:00:30Z"))
    assert query["created"] == ">=2026-05-01T09:59:30Z" and query["branch"] == "bump-llama"
    op = operation(s, "get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs")
    params = {"owner": "o", "repo": "r", "workflow_id": WORKFLOW}
    assert s.check_request(op, params, {k: str(v) for k, v in query.items()}, None) == []


# -- checklist rows --------------------------------------------------------------------------------


def test_durations():
    assert format_duration(723) == "12m 03s"
    assert format_duration(45) == "45s"
    assert format_duration(3723) == "1h 02m 03s"


def test_rows_show_the_latest_dispatch_per_platform_and_mark_old_commits_stale():
    old = dispatch(
        "cuda",
        "lb-000000000001",
        at="2026-05-01T09:00:00Z",
        sha=OLD_SHA,
        status="completed",
        conclusion="failure",
        started_at="2026-05-01T09:00:05Z",
        completed_at="2026-05-01T09:30:05Z",
    )
    new = dispatch(
        "cuda",
        "lb-000000000002",
        at="2026-05-01T10:00:00Z",
        status="completed",
        conclusion="success",
        run_url="https://github.com/ollama/ollama/actions/runs/5001",
        started_at="2026-05-01T10:00:05Z",
        completed_at="2026-05-01T10:12:08Z",
    )
    metal = dispatch(
        "metal",
        "lb-000000000003",
        sha=OLD_SHA,
        status="completed",
        conclusion="success",
        started_at="2026-05-01T10:00:05Z",
        completed_at="2026-05-01T10:01:05Z",
    )
    rocm = dispatch("rocm", "lb-000000000004", status="in_progress", started_at="2026-05-01T10:00:05Z")
    rows = platform_rows([new, metal, old, rocm], SHA, CONFIG.platforms)
    assert [r["name"] for r in rows] == [
        "metal",
        "cuda",
        "rocm",
        "vulkan",
        "windows",
        "mlx-metal",
        "mlx-cuda",
        "contract-probe",
    ]
    by = {r["name"]: r for r in rows}
    assert by["cuda"] == {
        "name": "cuda",
        "label": "CUDA on Linux and Windows",
        "state": "completed",
        "conclusion": "success",
        "url": "https://github.com/ollama/ollama/actions/runs/5001",
        "duration": "12m 03s",
        "sha": SHA,
        "stale": False,
        "reported": False,
        "findings": [],
        "report_error": None,
    }
    assert by["metal"]["stale"] and by["metal"]["sha"] == OLD_SHA and by["metal"]["duration"] == "1m 00s"
    assert (by["rocm"]["state"], by["rocm"]["conclusion"], by["rocm"]["duration"]) == (
        "in progress",
        None,
        None,
    )
    assert by["vulkan"]["state"] == "not run" and not by["vulkan"]["stale"]
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "c" * 40, "d" * 40, "https://x/compare/b1...b2"
    )
    table = render_markdown(Report([pin]), [], platforms=rows).split("| platform |", 1)[1]
    assert f"| cuda | completed | success | [run]({new.run_url}) | 12m 03s | `{SHA[:10]}` |" in table
    assert f"| metal | completed (stale) | success |  | 1m 00s | `{OLD_SHA[:10]}` |" in table
    assert "| vulkan | not run |" in table
    assert platform_rows([], SHA, CONFIG.platforms) == []


def test_rows_tick_only_fresh_successes_in_the_checklist():
    done = {"status": "completed", "conclusion": "success", "started_at": T0, "completed_at": T0}
    rows = platform_rows(
        [
            dispatch("cuda", "lb-000000000001", **done),
            dispatch("metal", "lb-000000000002", sha=OLD_SHA, **done),
        ],
        SHA,
        CONFIG.platforms,
    )
    items = {i.id: i.done for i in build_checklist(Report(), [], platforms=rows).platforms}
    assert items["platform-cuda"] and not items["platform-metal"] and not items["platform-rocm"]


def test_rows_keep_platforms_no_longer_configured():
    rows = platform_rows([dispatch("sycl", "lb-000000000001")], SHA, CONFIG.platforms)
    assert rows[-1]["name"] == "sycl" and rows[-1]["label"] == "sycl" and rows[-1]["state"] == "queued"


# -- the store -------------------------------------------------------------------------------------


def test_store_queries(tmp_path):
    store = ValidationStore(tmp_path / "state" / "bot.sqlite3")
    a = dispatch("cuda", "lb-000000000001", at="2026-05-01T09:00:00Z", sha=OLD_SHA, ref="llama-bot/pr-12")
    b = dispatch(
        "rocm",
        "lb-000000000002",
        at="2026-05-01T09:00:00Z",
        sha=OLD_SHA,
        ref="llama-bot/pr-12",
        status="completed",
        conclusion="success",
        run_id=4000,
    )
    c = dispatch("cuda", "lb-000000000003", at="2026-05-01T10:00:00Z", check_run_id=78)
    other = dataclasses.replace(dispatch("cuda", "lb-000000000009"), pr=13, repo="ollama/other")
    for d in (a, b, c, other):
        store.add(d)
    assert store.get("lb-000000000002") == b and store.get("nope") is None
    assert [d.request_id for d in store.find_open("ollama/ollama")] == ["lb-000000000001", "lb-000000000003"]
    assert [d.request_id for d in store.find_open("ollama/ollama", 4000)] == [
        "lb-000000000001",
        "lb-000000000002",
        "lb-000000000003",
    ]
    assert [d.request_id for d in store.for_pr("ollama/ollama", 12)] == [
        a.request_id,
        b.request_id,
        c.request_id,
    ]
    assert store.superseded("ollama/ollama", 12, SHA) == [a]
    assert store.by_check_run("ollama/ollama", 78) == c
    assert store.forks_to_clean("ollama/ollama", 12) == ["llama-bot/pr-12"]
    assert store.forks_to_clean("ollama/other", 13) == []
    store.attach_run("lb-000000000003", 5001, "https://github.com/ollama/ollama/actions/runs/5001")
    assert store.get("lb-000000000003").run_id == 5001
    updated = apply_run(
        store.get("lb-000000000003"), run(status="completed", conclusion="success"), "completed"
    )
    store.update(updated)
    assert store.get("lb-000000000003") == updated
    with pytest.raises(sqlite3.IntegrityError):
        store.add(a)  # a request id is stored once
    store.close()


def test_store_on_a_shared_connection(tmp_path):
    db = sqlite3.connect(tmp_path / "jobs.sqlite3")
    db.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY)")
    store = ValidationStore(db)
    store.add(dispatch())
    store.close()  # the caller's connection stays open
    assert db.execute("SELECT count(*) FROM validation_dispatches").fetchone() == (1,)
    assert {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} >= {
        "jobs",
        "validation_dispatches",
    }
    db.close()


def test_a_dispatch_waiting_for_its_run_survives_a_restart(tmp_path):
    path = tmp_path / "bot.sqlite3"
    store = ValidationStore(path)
    waiting = dispatch("cuda", "lb-00000000c0de", at="2026-05-01T10:00:00Z")
    store.add(waiting)
    store.close()  # the service stops; the run is reported while it is down or after it restarts

    store = ValidationStore(path)
    event = payload("workflow_run.requested")
    event["workflow_run"].update(
        id=6001,
        head_sha=SHA,
        event="workflow_dispatch",
        created_at="2026-05-01T10:00:04Z",
        display_title="llama-bot cuda PR #12 (lb-00000000c0de)",
    )
    found = match_run(store.find_open("ollama/ollama", event["workflow_run"]["id"]), event["workflow_run"])
    assert found == waiting
    store.update(apply_run(found, event["workflow_run"], event["action"]))
    store.close()

    store = ValidationStore(path)
    event["workflow_run"].update(display_title="anything", status="completed", conclusion="success")
    found = match_run(store.find_open("ollama/ollama", 6001), event["workflow_run"])  # now by run id
    assert found.request_id == "lb-00000000c0de" and found.run_id == 6001
    store.update(apply_run(found, event["workflow_run"], "completed"))
    assert store.find_open("ollama/ollama") == []
    assert store.get("lb-00000000c0de").conclusion == "success"
    store.close()


# -- against the fake GitHub -----------------------------------------------------------------------


@pytest.fixture
def ollama(fake_github, tmp_path):
    git = pygit2.init_repository(str(tmp_path / "ollama.git"), bare=True)
    base = commit(git, {"LLAMA_CPP_VERSION": "b1\n"}, ref="refs/heads/main")
    head = commit(git, {"LLAMA_CPP_VERSION": "b2\n"}, parents=[base], ref="refs/heads/bump-llama")
    fake_github.add_repo("ollama", "ollama", git)
    fake_github.add_workflow("ollama", "ollama", WORKFLOW)
    fake_github.add_workflow("ollama", "ollama", "push-only.yaml", dispatchable=False)
    return fake_github.add_pull("ollama", "ollama", 12, head, "bump-llama")


@pytest.mark.parametrize("details", [True, False])
async def test_round_trip_through_the_fake_with_a_restart(fake_github, ollama, tmp_path, details):
    """Dispatch (200 with the run id, or 204), restart, and follow the run's events to its conclusion."""
    fake_github.return_run_details = details
    path = tmp_path / "bot.sqlite3"
    store = ValidationStore(path)
    async with aiohttp.ClientSession() as session:
        gh = await installation_gh(fake_github, session)
        d = new_dispatch("ollama/ollama", ollama, ollama["head"]["sha"], CUDA, iso(utc_now()))
        created = await gh.post("/repos/ollama/ollama/check-runs", data=check_run_create(d))
        d = dataclasses.replace(d, check_run_id=created["id"])
        store.add(d)  # before the dispatch: its run may be reported at once
        answer = await gh.post(
            "/repos/ollama/ollama/actions/workflows/{workflow_id}/dispatches",
            {"workflow_id": d.workflow},
            data=dispatch_body(CUDA, d.ref, d.pr, d.request_id),
        )
        if details:
            store.attach_run(d.request_id, answer["workflow_run_id"], answer["html_url"])
        else:
            assert not answer  # 204: no body
        store.close()

        store = ValidationStore(path)
        run_id = fake_github.dispatches[-1]["run_id"]
        assert fake_github.dispatches[-1]["inputs"] == {
            "platform": "cuda",
            "pr": "12",
            "request_id": d.request_id,
        }
        for action, status, conclusion in [
            ("requested", "queued", None),
            ("in_progress", "in_progress", None),
            ("completed", "completed", "success"),
        ]:
            event = fake_github.workflow_run_payload(run_id, action, status, conclusion)
            event = json.loads(json.dumps(event))  # as it arrives over the wire
            found = match_run(
                store.find_open("ollama/ollama", event["workflow_run"]["id"]), event["workflow_run"]
            )
            assert found is not None and found.request_id == d.request_id
            store.update(apply_run(found, event["workflow_run"], action))
            await gh.patch(
                f"/repos/ollama/ollama/check-runs/{found.check_run_id}",
                data=check_run_update(event["workflow_run"], action, found.platform),
            )
        check = fake_github.check_runs[d.check_run_id]
        assert (check["name"], check["status"], check["conclusion"]) == (
            "validate: cuda",
            "completed",
            "success",
        )
        assert check["details_url"] == fake_github.workflow_runs[run_id]["html_url"]
        assert store.get(d.request_id).status == "completed"
        rows = platform_rows(store.for_pr("ollama/ollama", 12), ollama["head"]["sha"], CONFIG.platforms)
        assert next(r for r in rows if r["name"] == "cuda")["conclusion"] == "success"
        store.close()


async def test_refusals_from_the_fake_become_replies(fake_github, ollama):
    async with aiohttp.ClientSession() as session:
        gh = await installation_gh(fake_github, session)
        url = "/repos/ollama/ollama/actions/workflows/{workflow_id}/dispatches"
        for workflow, status, expected in [
            ("push-only.yaml", 422, "has no `workflow_dispatch` trigger"),
            ("missing.yaml", 404, "has no workflow `.github/workflows/missing.yaml`"),
        ]:
            platform = Platform("cuda", workflow, {"platform": "cuda"})
            with pytest.raises(BadRequest) as caught:
                await gh.post(
                    url,
                    {"workflow_id": workflow},
                    data=dispatch_body(platform, "bump-llama", 12, new_request_id()),
                )
            assert caught.value.status_code == status
            assert expected in dispatch_error_reply(platform, status, str(caught.value))


# -- the workflow side -----------------------------------------------------------------------------


def test_template_declares_what_the_bot_sends():
    text = TEMPLATE.read_text()
    run_name = re.search(r"^run-name: (.+)$", text, re.MULTILINE)[1]
    assert "${{ inputs.request_id }}" in run_name
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is None:  # no PyYAML here: check the structure by its indentation
        assert re.search(r"^on:\n  workflow_dispatch:\n    inputs:\n", text, re.MULTILINE)
        inputs = re.findall(
            r"^      (\w+):\n        description: \"[^\"]+\"\n        type: string$", text, re.MULTILINE
        )
    else:
        data = yaml.safe_load(text)
        trigger = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
        inputs = list(trigger["workflow_dispatch"]["inputs"])
        assert all(
            v["type"] == "string" and v["description"]
            for v in trigger["workflow_dispatch"]["inputs"].values()
        )
        assert "${{ inputs.request_id }}" in data["run-name"]
    sent = set(dispatch_body(CUDA, "main", 1, "lb-0123456789ab")["inputs"])
    assert sorted(inputs) == sorted(sent) == ["platform", "pr", "request_id"]
    assert "test-llamacpp-update.yaml" in text
