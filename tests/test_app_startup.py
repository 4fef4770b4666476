"""`python -m bot serve` starting and stopping: where it listens, what stops it, what it refuses."""

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import uuid
from asyncio.subprocess import PIPE

import pytest

from bot.service.settings import Settings, SettingsError
from tests.conftest import ROOT, SECRET, UPSTREAM_URL
from tests.fakegithub import _default_key, sign

BASE_ENV = {
    "GITHUB_APP_ID": "4242",
    "GITHUB_PRIVATE_KEY": _default_key(),
    "GITHUB_WEBHOOK_SECRET": SECRET,
    "GITHUB_API_URL": "http://127.0.0.1:9",
    "HOST": "127.0.0.1",
}


def serve_env(tmp_path, **settings: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "LLAMA_BOT_")) and k not in ("HOST", "PORT")
    }
    return {**env, **BASE_ENV, "LLAMA_BOT_DATA_DIR": str(tmp_path / "var"), **settings}


def bot(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`python -m bot ...` run to its end (these all stop by themselves)."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = bot(serve_env(tmp_path, PORT=str(port)), "serve")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"llama-bot serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    assert not (tmp_path / "var").exists()  # refused before anything was opened


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        (
            "GITHUB_APP_ID",
            "my-app",
            "GITHUB_APP_ID must be the App's numeric id (its settings page shows it), not 'my-app'",
        ),
        ("PORT", "eighty", "PORT must be a whole number, not 'eighty'"),
        ("PORT", "70000", "PORT must be a port number from 0 to 65535, not 70000"),
        (
            "GITHUB_WEBHOOK_SECRET",
            "hunter2",
            "GITHUB_WEBHOOK_SECRET is 7 characters long: use at least 16 random ones",
        ),
        (
            "LLAMA_BOT_URL_INSTEADOF",
            "/srv/mirrors/",
            "LLAMA_BOT_URL_INSTEADOF item '/srv/mirrors/': expected NEW=OLD",
        ),
    ],
)
def test_a_setting_that_cannot_work_is_one_line_and_exit_2(tmp_path, name, value, says):
    done = bot(serve_env(tmp_path, **{name: value}), "serve")
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"llama-bot serve: {says}")
    if name == "GITHUB_WEBHOOK_SECRET":
        assert value not in line


def test_port_on_the_command_line_is_checked_and_wins_over_the_environment(tmp_path):
    done = bot(serve_env(tmp_path), "serve", "--port", "eighty")
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "llama-bot serve: argument --port: invalid int value: 'eighty'"
    ]
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = bot(serve_env(tmp_path, PORT="eighty"), "serve", "--port", str(port))
    assert (
        done.returncode == 2 and "cannot listen on 127.0.0.1" in done.stderr
    )  # --port was used, PORT ignored


def test_port_in_the_shell_is_read_only_by_serve(tmp_path):
    env = serve_env(tmp_path, PORT="abc", HOST="")
    assert bot(env, "--help").returncode == 0
    done = bot(env, "jobs")
    assert done.returncode == 2 and "Traceback" not in done.stderr and "no job store" in done.stderr


def test_settings_refuse_a_short_webhook_secret_without_showing_it():
    with pytest.raises(SettingsError, match="at least 16") as refused:
        Settings.from_env({**BASE_ENV, "GITHUB_WEBHOOK_SECRET": "fifteen-chars!!"})
    assert "fifteen" not in str(refused.value)
    assert Settings.from_env({**BASE_ENV, "GITHUB_WEBHOOK_SECRET": "sixteen-chars!!!"}).webhook_secret


async def read_log(stream: asyncio.StreamReader, message: str) -> dict:
    """The next JSON log line whose message starts with `message`."""
    while True:
        line = await stream.readline()
        assert line, f"the service ended its output before logging {message!r}"
        entry = json.loads(line)
        if entry["message"].startswith(message):
            return entry


async def test_serve_says_where_it_listens_and_stops_on_sigterm_right_after_a_delivery(
    fake_github, scenario, session, tmp_path
):
    env = serve_env(
        tmp_path,
        PORT="0",
        GITHUB_APP_ID=str(fake_github.app_id),
        GITHUB_PRIVATE_KEY=fake_github.private_key_pem,
        GITHUB_API_URL=fake_github.url,
        LLAMA_BOT_URL_INSTEADOF=f"{scenario.upstream_path}={UPSTREAM_URL}",
    )
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        started = await read_log(server.stdout, "service started")
        port = started["port"]
        assert started["message"] == f"service started, listening on 127.0.0.1:{port}" and port > 0
        body = json.dumps(scenario.pull_event("opened")).encode()
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body, SECRET),
            "Content-Type": "application/json",
        }
        # the socket answers as soon as the line is logged
        async with session.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=headers) as resp:
            assert resp.status == 202
        server.send_signal(signal.SIGTERM)  # a worker is being woken by that delivery now
        await read_log(server.stdout, "service stopped")
        assert await asyncio.wait_for(server.wait(), 60) == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert server.stderr is not None and await server.stderr.read() == b""
    jobs = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "jobs", cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await jobs.communicate()
    (job,) = [json.loads(line) for line in out.decode().splitlines()]
    assert job["status"] in ("queued", "done")  # given back to the queue, or finished: never left running


async def test_a_second_service_on_the_same_data_dir_refuses_to_start(
    fake_github, scenario, session, tmp_path
):
    """The SQLite job store is one instance's: a second `serve` on its data dir would take the first one's
    running jobs for a dead instance's. It is one line and exit 2; the first goes on serving."""
    env = serve_env(
        tmp_path,
        PORT="0",
        GITHUB_APP_ID=str(fake_github.app_id),
        GITHUB_PRIVATE_KEY=fake_github.private_key_pem,
        GITHUB_API_URL=fake_github.url,
        LLAMA_BOT_URL_INSTEADOF=f"{scenario.upstream_path}={UPSTREAM_URL}",
    )
    first = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", cwd=ROOT, env=env, stdout=PIPE
    )
    try:
        assert first.stdout is not None
        port = (await read_log(first.stdout, "service started"))["port"]
        second = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "bot", "serve"), cwd=ROOT, env=env, stdout=PIPE, stderr=PIPE
        )
        try:
            out, err = await asyncio.wait_for(second.communicate(), 60)
        except TimeoutError:
            second.kill()
            await second.wait()
            pytest.fail("a second service started on the data dir the first one serves")
        assert second.returncode == 2 and out == b""
        refusal = (
            f"llama-bot serve: cannot open the job store in {tmp_path / 'var'}: another instance"
            f" (pid {first.pid}) has it open; one data directory serves one instance at a time"
            " (several instances share a DATABASE_URL)"
        )
        assert err.decode().splitlines() == [refusal]
        async with session.get(f"http://127.0.0.1:{port}/healthz") as resp:
            assert resp.status == 200 and (await resp.json())["status"] == "ok"
    finally:
        first.send_signal(signal.SIGTERM)
        await first.wait()
    assert first.returncode == 0
    assert bot(env, "jobs").returncode == 0  # the store the refused start left alone still reads
