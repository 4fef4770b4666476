"""Webhook answer latency and delivery-to-comment time, against the fake GitHub on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
import pygit2

from tests.conftest import HOOK_PATCH, NEW_SOURCE, OLD_SOURCE, PATCH_PATH, SECRET, UPSTREAM_URL, Scenario
from tests.fakegithub import FakeGitHub, commit, sign
from tests.fixtures import RepoBuilder
from tests.gitutil import upstream_pair

DELIVERIES, CONCURRENCY, BURSTS = 1000, 50, 3
PRS = 20  # pull requests timed from delivery to checklist, one after another
RELEASES = 3  # new upstream releases timed from their bump PR's delivery to its checklist, each way
# the repository's configuration: the one pin, and the pin dashboard on
CONFIG = f"""[[pin]]
name = "llama.cpp"
version_file = "LLAMA_CPP_VERSION"
patches = "llama/compat"
upstream = "{UPSTREAM_URL}"
release_tags = 'v(\\d+)'

[dashboard]
enabled = true
"""


def delivery_headers(event: str, body: bytes) -> dict[str, str]:
    """The headers of a webhook delivery of `body`, signed with the tests' secret, as GitHub sends them."""
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(body, SECRET),
        "Content-Type": "application/json",
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _scenario(fake: FakeGitHub, root: Path) -> tuple[Scenario, RepoBuilder]:
    up = upstream_pair(root, {"src/f.c": OLD_SOURCE}, {"src/f.c": NEW_SOURCE})
    git = pygit2.init_repository(str(root / "ollama.git"), bare=True)
    files = {"README.md": "ollama\n", "LLAMA_CPP_VERSION": "v1\n", PATCH_PATH: HOOK_PATCH}
    base = commit(git, {**files, ".github/llama-bot.toml": CONFIG}, ref="refs/heads/main", message="pin")
    head = commit(git, {"LLAMA_CPP_VERSION": "v2\n"}, parents=[base], ref="refs/heads/bump", message="bump")
    fake.add_repo("ollama", "ollama", git)
    fake.add_pull("ollama", "ollama", 7, head, "bump")
    fake.permissions[("ollama/ollama", "maintainer")] = "maintain"  # who asks for the dashboard
    return Scenario(fake, git, up.path, base, head), up


async def _latency(url: str, scenario: Scenario, root: Path, concurrency: int = CONCURRENCY) -> list[float]:
    body = root / "synchronize.json"
    body.write_bytes(json.dumps(scenario.pull_event("synchronize")).encode())
    client = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.loadgen",
        url + "webhook",
        str(body),
        SECRET,
        str(DELIVERIES),
        str(concurrency),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await client.communicate()
    if client.returncode:
        raise RuntimeError("the load client failed")
    return sorted(json.loads(out))


async def _to_comment(url: str, scenario: Scenario) -> float:
    """Seconds from an `opened` delivery to the finished checklist comment (the mirror is warm by now)."""
    scenario.fake.comments.clear()
    body = json.dumps(scenario.pull_event("opened")).encode()
    started = time.perf_counter()
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + "webhook", data=body, headers=delivery_headers("pull_request", body)) as resp,
    ):
        assert resp.status == 202, resp.status
    while True:
        bodies = [c["body"] for c in scenario.bot_comments()]
        if any("### Before merging" in b for b in bodies):
            return time.perf_counter() - started
        if time.perf_counter() - started > 60:
            raise RuntimeError("no checklist comment within 60 s")
        await asyncio.sleep(0.005)


async def _new_release_to_comment(
    url: str, scenario: Scenario, up: RepoBuilder, release: int, dashboard: bool
) -> float:
    """Seconds from the `opened` delivery of the PR bumping to a new upstream release to its checklist: with
    `dashboard`, after `/llama dashboard` has forecast that release (its analysis leaves the facts behind)."""
    tag = f"v{release}"
    up.commit(f"release {tag} (#{release})", {"src/f.c": NEW_SOURCE + f"/* {tag} */\n"})
    up.tag(tag)
    if dashboard:
        body = json.dumps(scenario.comment_event("/llama dashboard")).encode()
        await _post(url, "issue_comment", body)
        await _until(lambda: any(f"to `{tag}`" in i["body"] for i in scenario.fake.issues.values()), 120)
    head = commit(scenario.git, {"LLAMA_CPP_VERSION": f"{tag}\n"}, parents=[scenario.base_sha])
    number = 1000 + release  # clear of the dashboard issue's number
    scenario.fake.add_pull("ollama", "ollama", number, head, f"bump-{tag}")
    body = json.dumps(scenario.pull_event("opened", number=number)).encode()
    started = time.perf_counter()
    await _post(url, "pull_request", body)
    await _until(lambda: any("### Before merging" in c["body"] for c in scenario.bot_comments(number)), 60)
    return time.perf_counter() - started


async def _post(url: str, event: str, body: bytes) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + "webhook", data=body, headers=delivery_headers(event, body)) as resp,
    ):
        assert resp.status == 202, resp.status


async def _until(done, seconds: float) -> None:
    """Wait for `done()`, `seconds` at most."""
    started = time.perf_counter()
    while not done():
        if time.perf_counter() - started > seconds:
            raise RuntimeError(f"not done within {seconds} s")
        await asyncio.sleep(0.005)


async def _served(fake: FakeGitHub, scenario: Scenario, data_dir: Path, port: int, log_file):
    """`python -m bot serve` in its own process, as in production, its JSON log lines in `log_file`; the load
    comes from this one."""
    env = {
        **os.environ,
        "GITHUB_APP_ID": str(fake.app_id),
        "GITHUB_PRIVATE_KEY": fake.private_key_pem,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": fake.url,
        "LLAMA_BOT_DATA_DIR": str(data_dir),
        "LLAMA_BOT_URL_INSTEADOF": f"{scenario.upstream_path}={UPSTREAM_URL}",
        "LLAMA_BOT_WORKERS": os.environ.get("LLAMA_BOT_WORKERS", "2"),
    }
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        env=env,
        stdout=log_file,
        stderr=asyncio.subprocess.DEVNULL,
    )
    async with aiohttp.ClientSession() as session:
        for _ in range(200):
            try:
                async with session.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    if resp.status == 200:
                        return server
            except aiohttp.ClientError:
                await asyncio.sleep(0.05)
    server.kill()
    raise RuntimeError("the service did not start")


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="llama-bot-bench-svc-") as tmp:
        root = Path(tmp)
        fake = FakeGitHub()
        await fake.start()
        scenario, up = await _scenario(fake, root)
        port = free_port()
        log_path = root / "service.log"
        with log_path.open("wb") as log_file:
            server = await _served(fake, scenario, root / "var", port, log_file)
            url = f"http://127.0.0.1:{port}/"
            try:
                await _to_comment(url, scenario)  # fills the mirror
                busy = [await _latency(url, scenario, root) for _ in range(BURSTS)]
                # The fake GitHub's own work (JSON, base64, schema checks) shares this machine's two cores
                # with the service; with its answers held back, the workers wait on I/O as they would on
                # GitHub.
                fake.delay(r"^/repos/", 5.0)
                held = [await _latency(url, scenario, root) for _ in range(BURSTS)]
                alone = await _latency(url, scenario, root, concurrency=1)
                fake.clear_delays()
                await asyncio.sleep(1)  # the analyses the bursts queued end before the clock starts
                timed_from = log_path.stat().st_size  # the service writes its log lines unbuffered
                to_comment = sorted([await _to_comment(url, scenario) for _ in range(PRS)])
                timed_to = log_path.stat().st_size
                # each release newer than those before it: the dashboard offers the newest
                unseen = [
                    await _new_release_to_comment(url, scenario, up, 100 + n, False) for n in range(RELEASES)
                ]
                seen = [
                    await _new_release_to_comment(url, scenario, up, 200 + n, True) for n in range(RELEASES)
                ]
            finally:
                server.terminate()
                await server.wait()
                await fake.close()
        analyses = sorted(_analysis_seconds(log_path.read_bytes()[timed_from:timed_to].decode()))
        unseen, seen = sorted(unseen), sorted(seen)

    def figures(bursts: list[list[float]]) -> str:
        return (
            f"p50 {' / '.join(f'{_percentile(t, 0.50) * 1000:.1f}' for t in bursts)} ms, "
            f"p99 {' / '.join(f'{_percentile(t, 0.99) * 1000:.1f}' for t in bursts)} ms"
        )

    print(
        f"webhook answers ({DELIVERIES} signed deliveries, {CONCURRENCY} at a time on keep-alive connections, "
        f"each durably queued; {BURSTS} bursts):"
    )
    print(f"  fake GitHub's answers held back: {figures(held)}  (aim p99 < 50 ms)")
    print(f"  workers hammering the fake GitHub on the same two cores: {figures(busy)}")
    print(f"  one at a time: {figures([alone])}")
    print(
        f"PR delivery to checklist comment on the fake GitHub, warm mirror, {PRS} PRs: {_median_p90(to_comment)}"
    )
    print(f"  the analysis in its child process ({len(analyses)} analyses): {_median_p90(analyses)}")
    print(f"a new upstream release's bump PR, delivery to checklist ({RELEASES} releases each way):")
    print(f"  the pin dashboard had not seen the release: {_median_p90(unseen)}")
    print(f"  the pin dashboard had forecast it first: {_median_p90(seen)}  (aim < 2000 ms)")


def _analysis_seconds(log: str) -> list[float]:
    """The run time of each analysis child the service's log lines name."""
    entries = (json.loads(line) for line in log.splitlines() if line.startswith("{"))
    return [entry["seconds"] for entry in entries if entry.get("message") == "analysis finished"]


def _median_p90(times: list[float]) -> str:
    if not times:
        return "none"
    return f"median {statistics.median(times) * 1000:.0f} ms, p90 {_percentile(times, 0.90) * 1000:.0f} ms"


def _percentile(times: list[float], fraction: float) -> float:
    return times[min(len(times) - 1, int(len(times) * fraction))]


def service_stage() -> None:
    asyncio.run(run())
