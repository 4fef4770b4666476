"""The soak: `python -m bot serve` as real processes, killed with SIGKILL at random moments, against the fake
GitHub answering a random share of requests with 502, 503 or a secondary rate limit and losing the answers of
some POSTs it carried out.

Pull requests are opened, pushed to, commented on (`/llama recheck`, `help`, `regenerate-patches`,
`validate`), their validation runs move, and deliveries are sent again under the same id. After the queue
drains, `verdict` reads what GitHub holds and what the job store says, and `Figures` is what is printed.
One instance runs on SQLite in its data dir (restarted on it after each kill); with `DATABASE_URL`, two
instances share it, each with its own data dir, and a killed one stays down until the survivor has finished
the jobs it held. `python -m tests.soak` runs the full soak (`make soak`); tests/test_soak.py a short one.
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import dataclasses
import json
import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pygit2

from bot.render.banners import results_of
from bot.render.env import MARKER, RUNNING
from bot.stores.sqlitejobs import DB_NAME
from tests.conftest import HOOK_PATCH, NAME, NEW_SOURCE, OLD_SOURCE, OWNER, PATCH_PATH, SECRET, UPSTREAM_URL
from tests.fakegithub import FakeGitHub, commit, payload, sign
from tests.gitutil import upstream_pair

ROOT = Path(__file__).resolve().parent.parent
FULL = f"{OWNER}/{NAME}"
WORKFLOW = "test-llamacpp-update.yaml"
MAINTAINER = "maintainer"
FINAL = ("done", "superseded", "failed")
COMMANDS = ("/llama recheck", "/llama help", "/llama regenerate-patches", "/llama validate cuda")
# How often each kind of delivery is picked after the PRs are opened.
_JOB_IN_SUMMARY = re.compile(r"\(llama-bot job (\d+)\)")  # in a check run's first summary (bot/templates/)
MIX = {"synchronize": 3, "comment": 4, "workflow_run": 1.5, "redelivery": 1.5}


@dataclass(frozen=True)
class Plan:
    pulls: int = 30
    deliveries: int = 300
    kills: int = 5
    fault_rate: float = 0.05  # of all requests: 502, 503 or a secondary rate limit instead of an answer
    lost_rate: float = 0.05  # of the POSTs left: carried out, the answer lost
    database_url: str | None = None  # None: SQLite, one instance; else two instances on it
    seed: int = 17
    pace: float = 0.06  # mean seconds between two deliveries
    drain_timeout: float = 600.0

    @property
    def instances(self) -> int:
        return 2 if self.database_url else 1


@dataclass
class Delivery:
    id: str
    event: str
    body: bytes
    answers: list[int | str] = field(default_factory=list)  # HTTP status, or "no answer"


@dataclass
class Figures:
    store: str
    instances: int
    deliveries: int = 0
    redeliveries: int = 0
    kills: int = 0
    faults: Counter = field(default_factory=Counter)
    jobs: Counter = field(default_factory=Counter)
    duplicates: int = 0
    lost: int = 0
    violations: int = 0
    latencies: list[float] = field(default_factory=list)
    takeovers: list[float] = field(default_factory=list)  # seconds for the killed instance's jobs to finish
    # seconds from each restart to the first job the restarted instance finished; None: it finished none
    restarts: list[float | None] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        ms = sorted(x * 1000 for x in self.latencies) or [0.0]
        p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
        faults = ", ".join(f"{kind} {n}" for kind, n in sorted(self.faults.items())) or "none"
        takeover = (
            f"{max(self.takeovers):.1f} s at most, {statistics.mean(self.takeovers):.1f} s mean "
            f"over {len(self.takeovers)} kills"
            if self.takeovers
            else "no kill left jobs behind"
        )
        who = "the surviving instance" if self.instances > 1 else "the restarted instance"
        restarts = ", ".join("none" if r is None else f"{r:.1f}" for r in self.restarts) or "no restart"
        return [
            f"soak on {self.store}, {self.instances} instance(s), {self.seconds:.0f} s",
            f"  deliveries {self.deliveries} ({self.redeliveries} redeliveries), kills {self.kills}",
            f"  injected faults {sum(self.faults.values())}: {faults}",
            f"  jobs done {self.jobs['done']}, superseded {self.jobs['superseded']}, failed {self.jobs['failed']}",
            f"  duplicates {self.duplicates}, lost {self.lost}, violations {self.violations}",
            f"  webhook latency p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms",
            f"  jobs of a killed instance finished by {who}: {takeover}",
            f"  seconds from each restart to the first job it finished: {restarts}",
            *(f"  PROBLEM: {p}" for p in self.problems),
        ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_finish(log: str, since: float) -> float | None:
    """Seconds from `since` (epoch) to the first job the service's JSON log says it finished, or None."""
    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # a line the dying process left half written
            continue
        if entry.get("message") == "job finished" and entry.get("outcome") not in ("retry", "released"):
            stamp = entry["time"]  # 2026-01-02T03:04:05.678Z
            at = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) + int(stamp[20:23]) / 1000
            return at - since
    return None


# -- the world on the fake GitHub --------------------------------------------------------------------


class World:
    """ollama/ollama with `pulls` PRs bumping llama.cpp v1 -> v2, each carrying a patch that needs
    regenerating; the upstream is a local repository the service reaches through LLAMA_BOT_URL_INSTEADOF."""

    def __init__(self, fake: FakeGitHub, root: Path, pulls: int):
        self.fake = fake
        self.upstream = upstream_pair(root, {"src/f.c": OLD_SOURCE}, {"src/f.c": NEW_SOURCE}).path
        self.git = pygit2.init_repository(str(root / "ollama.git"), bare=True)
        self.base = commit(
            self.git,
            {"README.md": "ollama\n", "LLAMA_CPP_VERSION": "v1\n", PATCH_PATH: HOOK_PATCH},
            ref="refs/heads/main",
            message="pin llama.cpp v1",
        )
        fake.add_repo(OWNER, NAME, self.git)
        fake.add_workflow(OWNER, NAME, WORKFLOW)
        fake.permissions[(FULL, MAINTAINER)] = "maintain"
        self.numbers = list(range(101, 101 + pulls))
        self.heads: dict[int, str] = {}  # the head each PR had when its last pull_request event was sent
        for number in self.numbers:
            sha = commit(
                self.git,
                {"LLAMA_CPP_VERSION": "v2\n"},
                parents=[self.base],
                ref=f"refs/heads/pr-{number}",
                message=f"llama: update llama.cpp to v2 (#{number})",
            )
            fake.add_pull(OWNER, NAME, number, sha, f"pr-{number}")

    def head(self, number: int) -> str:
        return self.fake.pulls[(FULL, number)]["head"]["sha"]

    def push(self, number: int, seed: int) -> None:
        """A contributor's push: a new commit on the PR's branch."""
        sha = commit(
            self.git,
            {"README.md": f"ollama, push {seed}\n"},
            parents=[self.head(number)],
            message=f"more work {seed}",
        )
        self.fake.set_pull_head(OWNER, NAME, number, sha)

    def moved_by_the_bot(self) -> list[int]:
        """PRs whose head moved without a pull_request event yet (a regenerate-patches commit)."""
        return [n for n in self.numbers if n in self.heads and self.heads[n] != self.head(n)]

    def _installation(self) -> dict:
        return {"id": self.fake.installation_id, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}

    def pull_event(self, action: str, number: int) -> dict:
        self.heads[number] = self.head(number)
        pr = json.loads(json.dumps(self.fake.pulls[(FULL, number)]))
        return payload(
            f"pull_request.{action}",
            action=action,
            number=number,
            pull_request=pr,
            repository=self.fake._repo_json(FULL),
            installation=self._installation(),
        )

    def comment_event(self, number: int, body: str) -> dict:
        comment = self.fake.add_comment(OWNER, NAME, number, body, MAINTAINER, "User")
        data = payload(
            "issue_comment.created",
            repository=self.fake._repo_json(FULL),
            installation=self._installation(),
            comment=json.loads(json.dumps(comment)),
        )
        data["issue"].update(
            number=number,
            pull_request={
                "url": f"{self.fake.url}/repos/{FULL}/pulls/{number}",
                "html_url": f"https://github.com/{FULL}/pull/{number}",
                "diff_url": f"https://github.com/{FULL}/pull/{number}.diff",
                "patch_url": f"https://github.com/{FULL}/pull/{number}.patch",
                "merged_at": None,
            },
        )
        return data

    def open_runs(self) -> list[dict]:
        return [r for r in self.fake.workflow_runs.values() if r["status"] != "completed"]


# -- the service processes ----------------------------------------------------------------------------


class Instance:
    """One `python -m bot serve` on a loopback port, its log in its data dir."""

    def __init__(self, name: str, env: dict[str, str], data_dir: Path):
        self.name, self.env, self.data_dir = name, env, data_dir
        self.process: asyncio.subprocess.Process | None = None
        self.url = ""
        self.starts = 0
        self.spawned: list[float] = []  # when each start began (epoch seconds)
        self.ready = False  # answered /healthz since it was last started: a starting one is not killed

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def up(self) -> bool:
        return self.running and self.ready

    async def start(self, session: aiohttp.ClientSession) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        self.ready = False
        log = open(self.data_dir / f"serve-{self.starts}.log", "wb")  # noqa: SIM115, ASYNC230 - the process writes it
        self.spawned.append(time.time())
        self.process = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "bot", "serve"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            cwd=ROOT,
            env={**self.env, "LLAMA_BOT_DATA_DIR": str(self.data_dir)},
            stdout=log,
            stderr=log,
        )
        log.close()
        deadline = time.monotonic() + 60
        while True:
            if self.process.returncode is not None:
                raise RuntimeError(
                    f"instance {self.name} exited with {self.process.returncode}:\n"
                    + (self.data_dir / f"serve-{self.starts}.log").read_text()[-2000:]
                )
            try:
                async with session.get(self.url + "/healthz") as resp:
                    if resp.status == 200:
                        self.ready = True
                        return
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"instance {self.name} did not answer /healthz within 60 s")
            await asyncio.sleep(0.1)

    async def kill(self) -> int:
        """SIGKILL; the pid it had, which names its workers' leases."""
        assert self.process is not None
        pid = self.process.pid
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        return pid

    async def stop(self) -> None:
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


# -- the job store, read from outside ------------------------------------------------------------------


class JobStore:
    """The `jobs` table, SQLite in the instance's data dir or PostgreSQL: the same columns either way."""

    def __init__(self, sqlite_path: Path | None, database_url: str | None):
        self.sqlite_path, self.database_url = sqlite_path, database_url

    def _rows(self, sql: str, args: tuple = ()) -> list[dict]:
        if self.database_url:
            import psycopg
            from psycopg.rows import dict_row

            with psycopg.connect(self.database_url, row_factory=dict_row) as db:
                return list(db.execute(sql.replace("?", "%s"), args).fetchall())
        assert self.sqlite_path is not None
        if not self.sqlite_path.exists():
            return []
        db = sqlite3.connect(f"file:{self.sqlite_path}?mode=ro", uri=True, timeout=5.0)
        db.row_factory = sqlite3.Row
        try:
            return [dict(row) for row in db.execute(sql, args).fetchall()]
        finally:
            db.close()

    def jobs(self) -> list[dict]:
        return self._rows(
            "SELECT id, kind, key, payload, status, error, delivery_id, lease_owner FROM jobs ORDER BY id"
        )

    def held_by(self, pid: int) -> set[int]:
        """Jobs running under a lease of a worker of process `pid` (worker names are host:pid:n)."""
        return {
            row["id"]
            for row in self._rows(
                "SELECT id FROM jobs WHERE status = 'running' AND lease_owner LIKE ?", (f"%:{pid}:%",)
            )
        }

    def unfinished(self, ids: set[int]) -> set[int]:
        return {row["id"] for row in self.jobs() if row["id"] in ids and row["status"] not in FINAL}

    def busy(self) -> int:
        return sum(row["status"] in ("queued", "running") for row in self.jobs())


# -- the verdict: pure, over what GitHub and the job store hold -----------------------------------------


def verdict(
    fake_state: dict,
    jobs: list[dict],
    deliveries: list[Delivery],
    final_heads: dict[int, str],
    bot_login: str,
) -> tuple[int, int, list[str]]:
    """(duplicates, lost, problems) of a finished soak. `fake_state` holds the fake's comments, check runs
    and each PR branch's commits (newest first) as plain data."""
    problems: list[str] = []
    duplicates = lost = 0
    comments = [c for c in fake_state["comments"] if c["user"]["login"] == bot_login]
    for number, head in final_heads.items():
        issue = f"/issues/{number}"
        checklists = [c for c in comments if c["issue_url"].endswith(issue) and MARKER in c["body"]]
        if len(checklists) != 1:
            duplicates += max(0, len(checklists) - 1)
            problems.append(f"PR {number} has {len(checklists)} checklist comments")
            continue
        body = checklists[0]["body"]
        results = results_of(body)
        if RUNNING in body or results is None or not head.startswith(results[0]):
            problems.append(
                f"PR {number}: the checklist does not describe its final head {head[:12]} "
                f"(results for {results[0][:12] if results else 'nothing'})"
            )
        runs = [r for r in fake_state["check_runs"] if r["head_sha"] == head]
        if not {"llama.cpp: patches", "llama.cpp: upstream review"} <= {r["name"] for r in runs}:
            problems.append(
                f"PR {number}: its head {head[:12]} lacks check runs ({sorted({r['name'] for r in runs})})"
            )
        for run in runs:
            if run["status"] != "completed":
                answers = [
                    r["status"]
                    for r in fake_state["check_run_posts"]
                    if (r["head_sha"], r["name"]) == (head, run["name"])
                ]
                problems.append(
                    f"PR {number}: check run {run['id']} {run['name']!r} on {head[:12]} is {run['status']} "
                    f"(the POSTs of {run['name']!r} on it were answered {answers})"
                )
    # Each analysis makes its own check runs (a re-check makes new ones); one job making two of a name is a
    # duplicate.
    made = Counter(
        (r["body"]["head_sha"], r["body"]["name"], found[1])
        for r in fake_state["check_run_requests"]
        if r["method"] == "POST"
        and (found := _JOB_IN_SUMMARY.search((r["body"].get("output") or {}).get("summary") or ""))
    )
    for (head, name, job_id), count in made.items():
        if count > 1:
            duplicates += count - 1
            answers = [
                r["status"]
                for r in fake_state["check_run_posts"]
                if (r["head_sha"], r["name"], r["job"]) == (head, name, job_id)
            ]
            problems.append(
                f"job {job_id} made {count} check runs {name!r} on {head[:12]} "
                f"(its POSTs were answered {answers})"
            )
    reply_keys = Counter(
        line for c in comments for line in c["body"].splitlines() if line.startswith("<!-- llama-bot:reply ")
    )
    for key, count in reply_keys.items():
        if count > 1:
            duplicates += count - 1
            problems.append(f"reply {key} posted {count} times")
    command_of = {
        row["id"]: json.loads(row["payload"]).get("comment_id") for row in jobs if row["kind"] == "command"
    }
    answered: dict[int, set[int]] = {}
    for key in reply_keys:
        job_id = int(key.split()[2].split(".")[0])
        if command_of.get(job_id) is not None:
            answered.setdefault(command_of[job_id], set()).add(job_id)
    for comment_id, job_ids in answered.items():
        if len(job_ids) > 1:
            duplicates += len(job_ids) - 1
            problems.append(f"comment {comment_id} answered by jobs {sorted(job_ids)}")
    for number, branch in fake_state["branches"].items():
        trees = [c["tree"] for c in branch if c["author"] == bot_login]
        repeated = (
            len(trees)
            - len(set(trees))
            + sum(c["author"] == bot_login and c["tree"] == c["parent_tree"] for c in branch)
        )
        if repeated:
            duplicates += repeated
            problems.append(f"PR {number}: {repeated} regenerate commits repeat one already on pr-{number}")
    for request_id, count in Counter(fake_state["dispatched"]).items():
        if count > 1:  # each one a workflow run on the platform's runners
            duplicates += count - 1
            problems.append(f"dispatch {request_id} started {count} workflow runs")
    by_delivery: dict[str, list[dict]] = {}
    for row in jobs:
        by_delivery.setdefault(row["delivery_id"] or "", []).append(row)
    for delivery in deliveries:
        if 202 in delivery.answers and not by_delivery.get(delivery.id):
            lost += 1
            problems.append(f"delivery {delivery.id} ({delivery.event}) was queued but has no job")
    for row in jobs:
        if row["status"] not in FINAL or (row["status"] == "failed" and not row["error"]):
            lost += 1
            problems.append(
                f"job {row['id']} ({row['kind']} {row['key']}, delivery {row['delivery_id']}) is "
                f"{row['status']} {row['error'] or ''}".rstrip()
            )
    return duplicates, lost, problems


def fake_state(fake: FakeGitHub, world: World) -> dict:
    """What `verdict` reads from the fake: comments, check runs, and each PR branch back to main."""
    git = world.git
    branches = {}
    for number in world.numbers:
        walker = git.walk(git.references[f"refs/heads/pr-{number}"].target)
        walker.hide(pygit2.Oid(hex=world.base))
        branches[number] = [
            {
                "author": c.author.name,
                "tree": str(c.tree_id),
                "parent_tree": str(c.parents[0].tree_id) if c.parents else "",
            }
            for c in walker
        ]
    return {
        "comments": list(fake.comments.values()),
        "check_runs": list(fake.check_runs.values()),
        "check_run_requests": list(fake.check_run_requests),
        "branches": branches,
        "dispatched": [d["inputs"]["request_id"] for d in fake.dispatches],
        "check_run_posts": [
            {
                "head_sha": r["json"]["head_sha"],
                "name": r["json"]["name"],
                "status": r["status"],
                "job": found[1] if found else None,
            }
            for r in fake.requests
            if r["method"] == "POST" and r["path"].endswith("/check-runs")
            for found in [_JOB_IN_SUMMARY.search(str(r["json"].get("output")))]
        ],
    }


# -- the soak ------------------------------------------------------------------------------------------


class Soak:
    def __init__(self, plan: Plan, root: Path):
        self.plan, self.root = plan, root
        self.rng = random.Random(plan.seed)
        self.deliveries: list[Delivery] = []
        self.figures = Figures("PostgreSQL" if plan.database_url else "SQLite", plan.instances)
        self.instances: list[Instance] = []
        self.store = JobStore(None if plan.database_url else root / "a" / DB_NAME, plan.database_url)
        self._turn = 0
        self._recoveries: list[asyncio.Task] = []

    async def run(self) -> Figures:
        started = time.monotonic()
        async with (
            FakeGitHub() as fake,
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session,
        ):
            self.fake, self.session = fake, session
            self.world = World(fake, self.root, self.plan.pulls)
            env = {
                **os.environ,
                "GITHUB_APP_ID": str(fake.app_id),
                "GITHUB_PRIVATE_KEY": fake.private_key_pem,
                "GITHUB_WEBHOOK_SECRET": SECRET,
                "GITHUB_API_URL": fake.url,
                "LLAMA_BOT_WORKERS": "2",
                "LLAMA_BOT_URL_INSTEADOF": f"{self.world.upstream}={UPSTREAM_URL}",
            }
            env.pop("DATABASE_URL", None)
            if self.plan.database_url:
                env["DATABASE_URL"] = self.plan.database_url
            for name in "ab"[: self.plan.instances]:
                self.instances.append(Instance(name, env, self.root / name))
            for instance in self.instances:
                await instance.start(session)
            faults = fake.inject_faults(
                self.plan.fault_rate, lost_rate=self.plan.lost_rate, seed=self.plan.seed
            )
            try:
                killer = asyncio.create_task(self._kill_at_random())
                await self._deliver_all()
                await killer
                await asyncio.gather(*self._recoveries)
                await self._drain()
                fake.random_faults = None  # the verdict's own reads are not the service's
                self.figures.faults = Counter(faults.injected)
                jobs = self.store.jobs()
                heads = {n: self.world.head(n) for n in self.world.numbers}
                duplicates, lost, problems = verdict(
                    fake_state(fake, self.world), jobs, self.deliveries, heads, fake.bot_login
                )
            finally:
                for instance in self.instances:
                    await instance.stop()
            self.figures.restarts = self._restart_seconds()
            self.figures.jobs = Counter(row["status"] for row in jobs)
            self.figures.duplicates, self.figures.lost = duplicates, lost
            self.figures.problems = problems + list(fake.violations)
            self.figures.violations = len(fake.violations)
        self.figures.seconds = time.monotonic() - started
        return self.figures

    def _restart_seconds(self) -> list[float | None]:
        """For each restart, in order, seconds from its start to the first job that instance finished."""
        restarts = sorted(
            (since, instance.data_dir / f"serve-{n}.log")
            for instance in self.instances
            for n, since in enumerate(instance.spawned, start=1)
            if n > 1
        )
        return [first_finish(log.read_text(errors="replace"), since) for since, log in restarts]

    # -- deliveries --

    def _live(self) -> list[Instance]:
        return [i for i in self.instances if i.up]

    async def _send(self, delivery: Delivery) -> None:
        """POST the delivery to a live instance (in turn); one whose answer never came is sent again, under
        its id, as a redelivery from GitHub's settings would be."""
        headers = {
            "X-GitHub-Event": delivery.event,
            "X-GitHub-Delivery": delivery.id,
            "X-Hub-Signature-256": sign(delivery.body, SECRET),
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/soak",
        }
        for _ in range(100):
            live = self._live()
            if not live:
                await asyncio.sleep(0.1)
                continue
            self._turn += 1
            target = live[self._turn % len(live)]
            started = time.perf_counter()
            try:
                async with self.session.post(
                    target.url + "/webhook", data=delivery.body, headers=headers
                ) as resp:
                    await resp.read()
                    delivery.answers.append(resp.status)
            except (aiohttp.ClientError, TimeoutError):
                delivery.answers.append("no answer")
                await asyncio.sleep(0.1)
                continue
            self.figures.latencies.append(time.perf_counter() - started)
            if resp.status not in (200, 202):
                self.figures.problems.append(
                    f"delivery {delivery.id} ({delivery.event}) answered {resp.status}"
                )
            return
        raise RuntimeError(f"delivery {delivery.id} found no live instance")

    async def _deliver(self, event: str, data: dict) -> None:
        delivery = Delivery(str(uuid.uuid4()), event, json.dumps(data).encode())
        self.deliveries.append(delivery)
        self.figures.deliveries += 1
        await self._send(delivery)

    async def _deliver_all(self) -> None:
        unopened = list(self.world.numbers)
        self.rng.shuffle(unopened)
        opened: list[int] = []
        while self.figures.deliveries < self.plan.deliveries:
            await asyncio.sleep(self.rng.expovariate(1 / self.plan.pace))
            for number in self.world.moved_by_the_bot():  # GitHub tells of the bot's own push too
                await self._deliver("pull_request", self.world.pull_event("synchronize", number))
            share = len(unopened) / max(1, self.plan.deliveries - self.figures.deliveries)
            if unopened and (not opened or self.rng.random() < max(share, 0.3)):
                number = unopened.pop()
                opened.append(number)
                await self._deliver("pull_request", self.world.pull_event("opened", number))
                continue
            await self._deliver_one(self.rng.choices(list(MIX), weights=list(MIX.values()))[0], opened)
        while unopened:
            number = unopened.pop()
            await self._deliver("pull_request", self.world.pull_event("opened", number))

    async def _deliver_one(self, kind: str, opened: list[int]) -> None:
        number = self.rng.choice(opened)
        if kind == "synchronize":
            self.world.push(number, self.figures.deliveries)
            await self._deliver("pull_request", self.world.pull_event("synchronize", number))
        elif kind == "comment":
            await self._deliver("issue_comment", self.world.comment_event(number, self.rng.choice(COMMANDS)))
        elif kind == "workflow_run" and self.world.open_runs():
            await self._move_run(self.rng.choice(self.world.open_runs()))
        elif kind == "redelivery" and self.deliveries:
            again = self.rng.choice(self.deliveries)
            self.figures.deliveries += 1
            self.figures.redeliveries += 1
            await self._send(again)
        else:
            await self._deliver("issue_comment", self.world.comment_event(number, "/llama help"))

    async def _move_run(self, run: dict) -> None:
        """The next workflow_run event of a dispatched run: in_progress, then completed."""
        if run["status"] == "in_progress":
            conclusion = self.rng.choice(("success", "failure"))
            data = self.fake.workflow_run_payload(run["id"], "completed", "completed", conclusion)
        else:
            data = self.fake.workflow_run_payload(run["id"], "in_progress", "in_progress")
        await self._deliver("workflow_run", data)

    # -- kills --

    async def _kill_at_random(self) -> None:
        """`plan.kills` SIGKILLs spread over the deliveries; each instance comes back (see `_recover`)."""
        span = self.plan.deliveries * self.plan.pace
        moments = sorted(self.rng.uniform(0.1 * span, 0.9 * span) for _ in range(self.plan.kills))
        begun = time.monotonic()
        for moment in moments:
            await asyncio.sleep(max(0.0, begun + moment - time.monotonic()))
            while len(self._live()) < len(self.instances):  # one instance down at a time
                await asyncio.sleep(0.1)
            victim = self.rng.choice(self.instances)
            pid = await victim.kill()
            held = self.store.held_by(pid)
            self.figures.kills += 1
            self._recoveries.append(asyncio.create_task(self._recover(victim, held, time.monotonic())))
            if self.plan.instances == 1:
                await self._recoveries[-1]

    async def _recover(self, victim: Instance, held: set[int], killed_at: float) -> None:
        """One instance: restart it at once on its data dir. Two: the survivor finishes what the dead one
        held, then it restarts. Either way the time until those jobs ended is a takeover figure."""
        if self.plan.instances == 1:
            await victim.start(self.session)
        deadline = time.monotonic() + self.plan.drain_timeout
        while held and self.store.unfinished(held):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"jobs {sorted(self.store.unfinished(held))} of a killed instance never ended"
                )
            await asyncio.sleep(0.1)
        if held:
            self.figures.takeovers.append(time.monotonic() - killed_at)
        if not victim.up:
            await victim.start(self.session)

    # -- the end --

    async def _drain(self) -> None:
        """Until the queue is empty twice in a row and GitHub has nothing more to tell: the bot's own pushes
        get their synchronize, dispatched runs their events until completed."""
        deadline = time.monotonic() + self.plan.drain_timeout
        idle = 0
        while idle < 2:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the queue did not drain in {self.plan.drain_timeout:.0f} s: "
                    f"{Counter(r['status'] for r in self.store.jobs())}"
                )
            await asyncio.sleep(0.5)
            if self.store.busy():
                idle = 0
                continue
            moved, runs = self.world.moved_by_the_bot(), self.world.open_runs()
            for number in moved:
                await self._deliver("pull_request", self.world.pull_event("synchronize", number))
            for run in runs:
                await self._move_run(run)
            idle = 0 if moved or runs else idle + 1


async def soak(plan: Plan, root: Path | None = None) -> Figures:
    if root is not None:
        return await Soak(plan, root).run()
    with tempfile.TemporaryDirectory(prefix="llama-bot-soak-") as tmp:
        return await Soak(plan, Path(tmp)).run()


def main(argv: list[str] | None = None) -> int:
    """`make soak`: the full soak on SQLite with one instance, then on PostgreSQL with two."""
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=main.__doc__)
    parser.add_argument("--pulls", type=int, default=Plan.pulls)
    parser.add_argument("--deliveries", type=int, default=Plan.deliveries)
    parser.add_argument("--kills", type=int, default=Plan.kills)
    parser.add_argument("--seed", type=int, default=Plan.seed)
    parser.add_argument("--store", choices=("both", "sqlite", "postgresql"), default="both")
    args = parser.parse_args(argv)
    plan = Plan(pulls=args.pulls, deliveries=args.deliveries, kills=args.kills, seed=args.seed)
    failed = False
    if args.store in ("both", "sqlite"):
        figures = asyncio.run(soak(plan))
        print("\n".join(figures.lines()), flush=True)
        failed |= bool(figures.problems)
    if args.store in ("both", "postgresql"):
        from tests.pgserver import start_server

        try:
            server = start_server()
        except BaseException as exc:  # pytest.skip's exception when PostgreSQL is missing
            if type(exc).__name__ != "Skipped":
                raise
            print(f"soak on PostgreSQL skipped: {exc}", flush=True)
        else:
            try:
                figures = asyncio.run(soak(dataclasses.replace(plan, database_url=server.new_database())))
                print("\n".join(figures.lines()), flush=True)
                failed |= bool(figures.problems)
            finally:
                server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
