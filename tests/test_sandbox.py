"""The analysis runs in a child process held to a memory and a time limit: past either, the user is told in
one sentence which limit stopped it and what it was doing, and the bot goes on working.

A git fetch from an upstream whose `packed-refs` is a FIFO never ends (upload-pack blocks opening it):
a stand-in for any step that does not finish, which no test can make fast by mistake.
"""

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import pygit2
import pytest

from bot import cli
from bot.child.sandbox import Limits
from bot.gh.rest import RestSnapshot
from bot.service.app import SERVICE
from tests.conftest import PATCH_PATH, ROOT, SECRET, UPSTREAM_URL, Bot, bot_settings
from tests.fakegithub import sign
from tests.test_service_restart import free_port, wait_until

PATCHES_CHECK = "llama.cpp: patches"


def hanging_upstream(where: Path) -> Path:
    """A bare repository from which every fetch hangs."""
    pygit2.init_repository(str(where), bare=True)
    os.mkfifo(where / "packed-refs")
    return where


def processes_reading(path: Path) -> list[int]:
    """The processes whose command line names `path` (a git upload-pack serving it)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(path).encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def ollama_bump(tmp_path: Path, scenario) -> Path:
    """The scenario's Ollama repository as a local clone at the bump."""
    clone = tmp_path / "ollama"
    pygit2.clone_repository(str(scenario.git.path), str(clone), checkout_branch="bump")
    return clone


def slow_placing(*args, **kwargs):
    time.sleep(60)


def huge_placing(*args, **kwargs):
    return bytearray(4 << 30)  # more than any limit a test sets


@pytest.mark.parametrize(
    ("placing", "options", "sentence"),
    [
        (slow_placing, ["--timeout", "2"], "stopped after 2 s (its time limit, --timeout) while placing"),
        (
            huge_placing,
            ["--max-memory-mb", "400"],
            "stopped at its memory limit of 400 MB (--max-memory-mb) while placing",
        ),
    ],
)
def test_the_cli_names_the_limit_and_the_patch_it_was_placing(
    monkeypatch, capsys, tmp_path, scenario, placing, options, sentence
):
    monkeypatch.setattr("bot.engine.pins.check_patch", placing)  # the child is forked: it runs this one
    repo = ollama_bump(tmp_path, scenario)
    started = time.monotonic()
    code = cli.main(
        [
            "check",
            "--repo",
            str(repo),
            "--base",
            "origin/main",
            "--upstream-dir",
            f"llama.cpp={scenario.upstream_path}",
            "--quiet",
            *options,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"The analysis {sentence} {PATCH_PATH}." in err
    assert time.monotonic() - started < 30


async def test_a_check_run_says_the_time_limit_stopped_it_and_the_worker_goes_on(
    fake_github, scenario, tmp_path
):
    stuck = hanging_upstream(tmp_path / "stuck.git")
    settings = bot_settings(fake_github, scenario, tmp_path / "var", workers=1)
    settings = settings.__class__(
        **{
            **settings.__dict__,
            "url_instead_of": f"{stuck}={UPSTREAM_URL}",
            "analysis_limits": Limits(timeout=2),
        }
    )
    bot = await Bot(settings).start()
    try:
        await bot.deliver("pull_request", scenario.pull_event("opened"))
        await bot.deliver("issue_comment", scenario.comment_event("/llama help"))
        await bot.settle(timeout=60)
        (patches,) = [r for r in scenario.check_runs(scenario.head_sha) if r["name"] == PATCHES_CHECK]
        sentence = (
            "The analysis stopped after 2 s (its time limit, LLAMA_BOT_ANALYSIS_TIMEOUT) while getting "
            f"llama.cpp v1 and v2 from {UPSTREAM_URL}."
        )
        assert patches["conclusion"] == "failure" and sentence in patches["output"]["summary"]
        comments = [c["body"] for c in scenario.bot_comments()]
        assert any(sentence in body for body in comments), "the checklist says why there is no report"
        assert any("/llama validate" in body for body in comments), "the next job (help) was answered"
        assert processes_reading(stuck) == [], "the stuck fetch was killed with the analysis"
    finally:
        await bot.close()


async def test_a_check_run_says_the_memory_limit_stopped_it(fake_github, scenario, tmp_path, monkeypatch):
    """A file too large for the limit: the child cannot take it, the service says so and stays up."""
    read = RestSnapshot.read

    def huge(snapshot, path):
        return b"x" * (700 << 20) if path == PATCH_PATH else read(snapshot, path)

    monkeypatch.setattr(RestSnapshot, "read", huge)
    settings = bot_settings(fake_github, scenario, tmp_path / "var", workers=1)
    settings = settings.__class__(**{**settings.__dict__, "analysis_limits": Limits(memory_mb=400)})
    bot = await Bot(settings).start()
    try:
        await bot.deliver("pull_request", scenario.pull_event("opened"))
        await bot.settle(timeout=60)
        (patches,) = [r for r in scenario.check_runs(scenario.head_sha) if r["name"] == PATCHES_CHECK]
        assert patches["conclusion"] == "failure"
        assert (
            "stopped at its memory limit of 400 MB (LLAMA_BOT_ANALYSIS_MEMORY_MB) while "
            in (patches["output"]["summary"])
        )
        assert bot.app[SERVICE].running
    finally:
        await bot.close()


async def test_sigterm_stops_a_running_analysis_within_seconds(fake_github, scenario, tmp_path):
    stuck = hanging_upstream(tmp_path / "stuck.git")
    port = free_port()
    env = {
        **os.environ,
        "GITHUB_APP_ID": str(fake_github.app_id),
        "GITHUB_PRIVATE_KEY": fake_github.private_key_pem,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": fake_github.url,
        "LLAMA_BOT_DATA_DIR": str(tmp_path / "var"),
        "LLAMA_BOT_URL_INSTEADOF": f"{stuck}={UPSTREAM_URL}",
    }
    server = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:

            async def healthy():
                try:
                    async with session.get(url + "/healthz") as resp:
                        return resp.status == 200
                except aiohttp.ClientError:
                    return False

            await wait_until(healthy)
            body = json.dumps(scenario.pull_event("opened")).encode()
            headers = {
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": str(uuid.uuid4()),
                "X-Hub-Signature-256": sign(body, SECRET),
                "Content-Type": "application/json",
            }
            async with session.post(url + "/webhook", data=body, headers=headers) as resp:
                assert resp.status == 202

            async def fetching():
                return bool(processes_reading(stuck))

            await wait_until(fetching)
        server.send_signal(signal.SIGTERM)
        started = time.monotonic()
        await asyncio.wait_for(server.wait(), 30)
        assert time.monotonic() - started < 15
        await wait_until(fetching_stopped(stuck), timeout=5)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()


def fetching_stopped(path: Path):
    async def stopped():
        return processes_reading(path) == []

    return stopped
