"""The webhook endpoint, health and metrics, settings and logs: the service's HTTP edge."""

import io
import json
import logging
import statistics
import time
from pathlib import Path

import pytest

from bot.service.app import MAX_BODY, name_old_state, signature_valid
from bot.service.logs import JsonFormatter, configure_logging
from bot.service.settings import Settings, SettingsError
from tests.conftest import SECRET
from tests.fakegithub import _default_key, payload, sign


def test_signature_check_uses_githubs_test_vector():
    good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature_valid(b"Hello, World!", good, "It's a Secret to Everybody")
    assert not signature_valid(b"Hello, World!", good, "another secret")
    assert not signature_valid(b"Hello, World!", None, "It's a Secret to Everybody")
    assert not signature_valid(b"Hello, World!", "sha1=abc", "It's a Secret to Everybody")


async def test_missing_or_forged_signature_is_401(bot, scenario):
    data = scenario.pull_event("opened")
    assert (await bot.deliver("pull_request", data, headers={"X-Hub-Signature-256": None}))[0] == 401
    assert (await bot.deliver("pull_request", data, secret="not the secret"))[0] == 401
    assert (await bot.queue.counts())["queued"] == 0
    assert scenario.fake.requests == []


async def test_missing_signature_is_401_even_with_the_legacy_sha1_header(bot, scenario):
    status, _ = await bot.deliver(
        "pull_request",
        scenario.pull_event(),
        headers={"X-Hub-Signature-256": None, "X-Hub-Signature": "sha1=0000"},
    )
    assert status == 401


async def test_body_that_is_not_json_is_400(bot):
    assert (await bot.deliver("pull_request", b"{not json"))[0] == 400
    assert (await bot.deliver("pull_request", b"[1, 2]"))[0] == 400


async def test_missing_event_header_is_400(bot, scenario):
    assert (await bot.deliver(None, scenario.pull_event()))[0] == 400  # type: ignore[arg-type]


async def test_payload_missing_fields_is_400(bot):
    assert (await bot.deliver("pull_request", {"action": "opened"}))[0] == 400


async def test_payload_with_fields_of_another_shape_is_400(bot, scenario):
    data = scenario.pull_event("opened")
    data["installation"] = 5
    status, answer = await bot.deliver("pull_request", data)
    assert status == 400 and "shape" in answer["error"]


async def test_a_delivery_without_its_id_is_queued_once_by_its_body(bot, scenario):
    data = scenario.pull_event("opened")
    first = await bot.deliver("pull_request", data, headers={"X-GitHub-Delivery": None})
    again = await bot.deliver("pull_request", data, headers={"X-GitHub-Delivery": None})
    assert (first[0], again) == (202, (200, {"status": "duplicate"}))
    await bot.settle()


async def test_ordinary_comments_are_ignored_at_the_door(bot, scenario):
    for body in ["@alice thanks", "**Note**: later", ":+1:", "- item"]:
        assert await bot.deliver("issue_comment", scenario.comment_event(body)) == (
            200,
            {"status": "ignored"},
        )
    assert (await bot.deliver("issue_comment", scenario.comment_event("/llama help")))[0] == 202
    await bot.settle()


async def test_body_over_25_mib_is_413(bot):
    body = b'{"pad": "' + b"x" * MAX_BODY + b'"}'
    status, answer = await bot.deliver("pull_request", body)
    assert status == 413 and "25 MiB" in answer["error"]


async def test_ignored_events_are_200(bot, scenario):
    assert (await bot.deliver("ping", payload("ping")))[0] == 200
    assert (await bot.deliver("issue_comment", scenario.comment_event("nice work")))[0] == 200
    assert (await bot.queue.counts())["queued"] == 0


async def test_queued_delivery_is_202_and_a_redelivery_is_acknowledged_once(bot, scenario):
    data = scenario.pull_event("opened")
    status, answer = await bot.deliver("pull_request", data, delivery="delivery-1")
    assert status == 202 and len(answer["jobs"]) == 1
    status, answer = await bot.deliver("pull_request", data, delivery="delivery-1")
    assert (status, answer["status"]) == (200, "duplicate")
    await bot.settle()
    assert len(scenario.bot_comments()) == 1
    assert len([r for r in scenario.fake.check_run_requests if r["method"] == "POST"]) == 2


async def test_webhook_answers_in_under_100_ms(bot, scenario):
    """Measured on loopback, signature check and durable insert included; analysis runs after."""
    data = scenario.pull_event("opened")
    timings = []
    for n in range(20):
        started = time.perf_counter()
        status, _ = await bot.deliver("pull_request", data, delivery=f"latency-{n}")
        timings.append(time.perf_counter() - started)
        assert status == 202
    assert statistics.median(timings) < 0.1 and max(timings) < 1.0, timings
    await bot.settle()


async def test_healthz_and_metrics(bot, scenario):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.deliver("ping", payload("ping"))
    await bot.settle()
    assert bot.session is not None
    async with bot.session.get(bot.url + "healthz") as resp:
        assert resp.status == 200
        health = await resp.json()
    assert health["status"] == "ok" and health["jobs"]["done"] == 1
    async with bot.session.get(bot.url + "metrics") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        text = await resp.text()
    assert 'llama_bot_webhook_deliveries_total{event="pull_request",outcome="queued"} 1.0' in text
    assert 'llama_bot_webhook_deliveries_total{event="ping",outcome="ignored"} 1.0' in text
    assert 'llama_bot_job_duration_seconds_count{kind="analysis",outcome="done"} 1.0' in text
    assert 'llama_bot_queue_jobs{status="done"} 1.0' in text
    assert 'llama_bot_github_requests_total{method="POST",status="201"}' in text


ENV = {
    "GITHUB_APP_ID": "42",
    "GITHUB_PRIVATE_KEY": _default_key(),
    "GITHUB_WEBHOOK_SECRET": "s3cret-of-20-chars!",
}


def test_settings_defaults_follow_the_contract(tmp_path, monkeypatch, caplog):
    settings = Settings.from_env(ENV)
    assert (
        settings.api_url,
        settings.host,
        settings.port,
        settings.data_dir,
        settings.workers,
        settings.url_instead_of,
    ) == ("https://api.github.com", "0.0.0.0", 8080, Path.home() / ".local/state/llama-bot", 2, None)
    assert "s3cret" not in repr(settings) and "PRIVATE" not in repr(settings)
    state = Settings.from_env({**ENV, "XDG_STATE_HOME": str(tmp_path / "state")})
    assert state.data_dir == tmp_path / "state" / "llama-bot"
    # a ./var an earlier version kept its jobs in is named at start, not read
    monkeypatch.chdir(tmp_path)
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "jobs.sqlite3").write_bytes(b"")
    caplog.set_level(logging.WARNING)
    name_old_state(state.data_dir)
    (record,) = [
        r for r in caplog.records if r.getMessage().startswith("found the state of an earlier version")
    ]
    assert f"set LLAMA_BOT_DATA_DIR={tmp_path / 'var'} to keep using it" in record.getMessage()
    caplog.clear()
    name_old_state(tmp_path / "var")  # the data directory it is: nothing to say
    assert caplog.records == []


def test_settings_read_every_variable(tmp_path):
    key = tmp_path / "key.pem"
    key.write_text(_default_key())
    env = {
        "GITHUB_APP_ID": "42",
        "GITHUB_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": "s" * 16,
        "GITHUB_API_URL": "http://127.0.0.1:9/",
        "HOST": "127.0.0.1",
        "PORT": "9000",
        "LLAMA_BOT_DATA_DIR": str(tmp_path),
        "LLAMA_BOT_URL_INSTEADOF": "/srv/=https://github.com/",
        "LLAMA_BOT_WORKERS": "4",
    }
    settings = Settings.from_env(env)
    assert (
        settings.private_key,
        settings.api_url,
        settings.host,
        settings.port,
        settings.data_dir,
        settings.url_instead_of,
        settings.workers,
    ) == (_default_key(), "http://127.0.0.1:9", "127.0.0.1", 9000, tmp_path, "/srv/=https://github.com/", 4)


@pytest.mark.parametrize("missing", ["GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID", "GITHUB_PRIVATE_KEY"])
def test_settings_refuse_to_start_without_credentials(missing):
    with pytest.raises(SettingsError, match=missing.split("_")[1]):
        Settings.from_env({k: v for k, v in ENV.items() if k != missing})


@pytest.mark.parametrize("key", ["PEM", "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n"])
def test_settings_refuse_a_private_key_that_is_not_one(key):
    with pytest.raises(SettingsError, match="private key is not an unencrypted PEM private key"):
        Settings.from_env({**ENV, "GITHUB_PRIVATE_KEY": key})


def test_serve_refuses_to_start_without_the_webhook_secret(monkeypatch, capsys):
    from bot.service.app import serve

    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_APP_ID", "1")
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", "x")
    with pytest.raises(SystemExit) as exit_info:
        serve("127.0.0.1", 0)
    assert exit_info.value.code == 2
    assert "GITHUB_WEBHOOK_SECRET" in capsys.readouterr().err


def test_log_lines_are_json_and_secrets_are_masked():
    pem = ENV["GITHUB_PRIVATE_KEY"]
    formatter = JsonFormatter(("s3cret", pem.strip()))
    record = logging.LogRecord(
        "bot", logging.INFO, __file__, 1, "got %s and %s", ("s3cret", "ghs_" + "a" * 36), None
    )
    record.delivery_id = "abc"
    record.header = f"token ghs_{'b' * 36}"
    record.key = pem
    line = formatter.format(record)
    entry = json.loads(line)
    assert entry["delivery_id"] == "abc" and entry["level"] == "INFO"
    for secret in ("s3cret", "ghs_", "BEGIN PRIVATE KEY", "abc\n"):
        assert secret not in line


async def test_secret_pem_and_installation_token_never_reach_the_logs(bot, scenario):
    """A full run (PR analysis, a command, a retried call) with every log line captured."""
    stream = io.StringIO()
    handler = configure_logging(bot.settings, stream)
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        scenario.fake.fail("POST", r"/check-runs$", 502, times=1)
        await bot.deliver("pull_request", scenario.pull_event("opened"))
        await bot.settle()
        await bot.deliver("issue_comment", scenario.comment_event("/llama recheck"))
        await bot.settle()
        scenario.fake.expire_all_tokens()
        await bot.deliver("issue_comment", scenario.comment_event("/llama help"))
        await bot.settle()
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)
    logs = stream.getvalue()
    lines = logs.splitlines()
    assert lines and all(json.loads(line) for line in lines)
    assert any(json.loads(line).get("delivery_id") for line in lines)
    tokens = list(scenario.fake._tokens)
    assert len(tokens) == 2
    for secret in [SECRET, *scenario.fake.private_key_pem.strip().splitlines()[1:-1], *tokens]:
        assert secret not in logs
    assert sign(b"x", SECRET) not in logs
