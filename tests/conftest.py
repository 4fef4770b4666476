"""Fixtures for the service tests: real repositories, the fake GitHub, and the bot on a loopback port."""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pygit2
import pytest
from aiohttp.test_utils import TestServer

from bot.gh.retries import RetryPolicy
from bot.model import Report
from bot.service.app import QUEUE, create_app
from bot.service.settings import Settings
from bot.stores.jobs import JobQueue
from bot.worker.runner import JobBackoff
from tests.fakegithub import FakeGitHub, commit, fake_github, payload, sign  # noqa: F401  (fixture)
from tests.gitutil import make_patch, upstream_pair
from tests.reportschema import schema_violations

pytest_plugins = (
    "tests.pgserver",
)  # postgres_server, database_url: a real PostgreSQL for the tests that need it

ROOT = Path(__file__).resolve().parent.parent
SECRET = "It's a Secret to Everybody"
OWNER, NAME = "ollama", "ollama"
UPSTREAM_URL = "https://github.com/ggml-org/llama.cpp"
TEST_POLICY = RetryPolicy(
    attempts=3, base_delay=0.05, max_delay=0.2, secondary_wait=0.2, max_wait=5.0, timeout=10.0
)
# A job GitHub fails is failed at once, as after the service's hour of retries; tests of the retries pass
# their own backoff and a queue clock they move (tests/test_service_outage.py).
NO_RETRIES = JobBackoff(total=0)

OLD_SOURCE = "int f(void) {\n" + "".join(f"    {c}();\n" for c in "abcdefg") + "}\n"
NEW_SOURCE = "// upstream comment\n" * 3 + OLD_SOURCE.replace("b();", "b(1);").replace("g();", "g(2);")
PATCH_PATH = "llama/compat/0001-hook.patch"
HOOK_PATCH = make_patch(OLD_SOURCE, OLD_SOURCE.replace("d();\n", "d();\n    ollama_hook();\n"), "src/f.c")


@pytest.fixture(autouse=True, scope="session")
def cli_cache_of_this_run(tmp_path_factory):
    """The CLI keeps its mirrors and facts in the user's cache: a run of the tests gets its own, so that
    neither an earlier run's facts nor the user's decide what a test sees."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture(autouse=True)
def reports_match_the_schema(monkeypatch):
    """Every report a test makes through `Report.to_json` must fit docs/report.schema.json, so the
    documented format cannot drift from what the code prints."""
    violations: list[str] = []
    to_json = Report.to_json

    def checked(self: Report) -> dict:
        data = to_json(self)
        violations.extend(schema_violations(data))
        return data

    monkeypatch.setattr(Report, "to_json", checked)
    yield
    if violations:
        pytest.fail("a report does not fit docs/report.schema.json:\n" + "\n".join(violations), pytrace=False)


@dataclass
class Scenario:
    """ollama/ollama on the fake GitHub: main pins v1 with one carried patch, PR 7 bumps to v2."""

    fake: FakeGitHub
    git: pygit2.Repository
    upstream_path: Path
    base_sha: str
    head_sha: str
    number: int = 7
    branch: str = "bump"

    @property
    def full_name(self) -> str:
        return f"{OWNER}/{NAME}"

    def push(self, files: dict, message: str = "more work") -> str:
        """A new commit on the PR branch, as a contributor's push (moves the PR head)."""
        sha = commit(
            self.git,
            files,
            parents=[self.fake.pulls[(self.full_name, self.number)]["head"]["sha"]],
            message=message,
        )
        self.fake.set_pull_head(OWNER, NAME, self.number, sha)
        return sha

    def open_pull(self, number: int, files: dict, branch: str, **kwargs) -> str:
        sha = commit(
            self.git, files, parents=[self.base_sha], message=f"PR {number}", ref=f"refs/heads/{branch}"
        )
        self.fake.add_pull(OWNER, NAME, number, sha, branch, **kwargs)
        return sha

    def pull_event(self, action: str = "opened", number: int | None = None, **extra) -> dict:
        number = number or self.number
        pr = copy.deepcopy(self.fake.pulls[(self.full_name, number)])
        return payload(
            f"pull_request.{'opened' if action == 'edited' else action}",
            action=action,
            number=number,
            pull_request=pr,
            repository=self.repository(),
            installation=self.installation(),
            **extra,
        )

    def comment_event(
        self, body: str, login: str = "maintainer", user_type: str = "User", number: int | None = None
    ) -> dict:
        number = number or self.number
        comment = self.fake.add_comment(OWNER, NAME, number, body, login, user_type)
        data = payload(
            "issue_comment.created",
            repository=self.repository(),
            installation=self.installation(),
            comment=copy.deepcopy(comment),
        )
        data["issue"].update(
            number=number,
            pull_request={
                "url": f"{self.fake.url}/repos/{self.full_name}/pulls/{number}",
                "html_url": f"https://github.com/{self.full_name}/pull/{number}",
                "diff_url": f"https://github.com/{self.full_name}/pull/{number}.diff",
                "patch_url": f"https://github.com/{self.full_name}/pull/{number}.patch",
                "merged_at": None,
            },
        )
        return data

    def repository(self) -> dict:
        return self.fake._repo_json(self.full_name)

    def installation(self) -> dict:
        return {"id": self.fake.installation_id, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}

    def check_runs(self, sha: str | None = None) -> list[dict]:
        return [r for r in self.fake.check_runs.values() if sha is None or r["head_sha"] == sha]

    def bot_comments(self, number: int | None = None) -> list[dict]:
        issue = f"/issues/{number or self.number}"
        return [
            c
            for c in self.fake.comments.values()
            if c["user"]["type"] == "Bot" and c["issue_url"].endswith(issue)
        ]


@pytest.fixture
def scenario(fake_github, tmp_path) -> Scenario:  # noqa: F811
    up = upstream_pair(tmp_path, {"src/f.c": OLD_SOURCE}, {"src/f.c": NEW_SOURCE})
    git = pygit2.init_repository(str(tmp_path / "ollama.git"), bare=True)
    base = commit(
        git,
        {"README.md": "ollama\n", "LLAMA_CPP_VERSION": "v1\n", PATCH_PATH: HOOK_PATCH},
        ref="refs/heads/main",
        message="pin llama.cpp v1",
    )
    head = commit(
        git,
        {"LLAMA_CPP_VERSION": "v2\n"},
        parents=[base],
        ref="refs/heads/bump",
        message="llama: update llama.cpp to v2",
    )
    fake_github.add_repo(OWNER, NAME, git)
    fake_github.add_pull(OWNER, NAME, 7, head, "bump")
    fake_github.permissions[(f"{OWNER}/{NAME}", "maintainer")] = "maintain"
    return Scenario(fake_github, git, up.path, base, head)


def bot_settings(fake: FakeGitHub, scenario: Scenario, data_dir: Path, workers: int = 2) -> Settings:
    return Settings(
        app_id=str(fake.app_id),
        private_key=fake.private_key_pem,
        webhook_secret=SECRET,
        api_url=fake.url,
        host="127.0.0.1",
        port=0,
        data_dir=data_dir,
        url_instead_of=f"{scenario.upstream_path}={UPSTREAM_URL}",
        workers=workers,
    )


class Bot:
    """The service on a loopback port, with helpers to deliver webhooks and wait for the workers."""

    def __init__(self, settings: Settings, queue: JobQueue | None = None, backoff: JobBackoff = NO_RETRIES):
        self.settings = settings
        self.app = create_app(settings, queue=queue, policy=TEST_POLICY, poll_interval=0.05, backoff=backoff)
        self.server = TestServer(self.app, host="127.0.0.1")
        self.session: aiohttp.ClientSession | None = None

    async def start(self) -> Bot:
        await self.server.start_server()
        self.session = aiohttp.ClientSession()
        return self

    async def close(self) -> None:
        if self.session:
            await self.session.close()
        await self.server.close()

    @property
    def url(self) -> str:
        return str(self.server.make_url("/"))

    @property
    def queue(self) -> JobQueue:
        return self.app[QUEUE]

    async def deliver(
        self,
        event: str,
        data: dict | bytes,
        delivery: str | None = None,
        secret: str = SECRET,
        headers: dict | None = None,
    ) -> tuple[int, dict]:
        body = data if isinstance(data, bytes) else json.dumps(data).encode()
        sent = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body, secret),
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/test",
            **(headers or {}),
        }
        sent = {k: v for k, v in sent.items() if v is not None}
        assert self.session is not None
        async with self.session.post(self.url + "webhook", data=body, headers=sent) as resp:
            return resp.status, await resp.json(content_type=None)

    async def settle(self, timeout: float = 60.0) -> dict[str, int]:
        """Wait until no job is queued or running, twice in a row: a job's last write is visible before its
        fsync and the bookkeeping after it are done."""
        deadline = time.monotonic() + timeout
        idle = 0
        while True:
            counts = await self.queue.counts()
            idle = idle + 1 if counts["queued"] == 0 and counts["running"] == 0 else 0
            if idle == 2:
                return counts
            if time.monotonic() > deadline:
                raise AssertionError(f"jobs did not finish: {counts}")
            await asyncio.sleep(0.05)


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
async def bot(fake_github, scenario, tmp_path):  # noqa: F811
    running = await Bot(bot_settings(fake_github, scenario, tmp_path / "var")).start()
    yield running
    await running.close()
