"""`python -m bot serve` before and after a delivery's signature is verified: what an unsigned request can
make the service count or log, and what the headers of a signed one can."""

import asyncio
import contextlib
import json
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import pytest

from tests.conftest import ROOT, SECRET
from tests.fakegithub import _default_key, sign

DELIVERIES = 300
LONG = 4000  # characters of a made-up header value; aiohttp takes up to 8190


@dataclass
class Served:
    """The service in a child process, and its log lines, read as they come so that it never waits on them."""

    url: str
    process: asyncio.subprocess.Process
    lines: list[dict] = field(default_factory=list)

    async def read_logs(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.lines.append(json.loads(line))

    async def logged(self, count: int, message: str) -> list[dict]:
        """The log lines so far once `count` of them have this message (each is written before its answer)."""
        for _ in range(600):
            if sum(entry["message"] == message for entry in self.lines) >= count:
                return self.lines
            await asyncio.sleep(0.05)
        raise AssertionError(f"fewer than {count} log lines {message!r}")

    async def metrics(self, session: aiohttp.ClientSession) -> str:
        async with session.get(self.url + "metrics") as resp:
            assert resp.status == 200
            return await resp.text()


@contextlib.asynccontextmanager
async def served(tmp_path) -> AsyncIterator[Served]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "LLAMA_BOT_"))}
    env.update(
        GITHUB_APP_ID="4242",
        GITHUB_PRIVATE_KEY=_default_key(),
        GITHUB_WEBHOOK_SECRET=SECRET,
        GITHUB_API_URL="http://127.0.0.1:9",  # nothing here calls GitHub
        HOST="127.0.0.1",
        PORT="0",
        LLAMA_BOT_DATA_DIR=str(tmp_path / "var"),
    )
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", "serve"),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        started = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        assert started["message"].startswith("service started")
        bot = Served(f"http://127.0.0.1:{started['port']}/", process)
        reading = asyncio.create_task(bot.read_logs())
        yield bot
    finally:
        process.terminate()
        await process.wait()
    await reading
    assert process.stderr is not None and await process.stderr.read() == b""
    assert not [entry for entry in bot.lines if entry["level"] not in ("INFO", "DEBUG")]


def delivery_series(metrics: str) -> dict[tuple[str, str], float]:
    """`llama_bot_webhook_deliveries_total` by (event, outcome)."""
    found = re.findall(
        r'^llama_bot_webhook_deliveries_total\{event="([^"]*)",outcome="([^"]*)"\} (\S+)$',
        metrics,
        re.MULTILINE,
    )
    return {(event, outcome): float(count) for event, outcome, count in found}


def made_up(n: int) -> str:
    return f"made-up-{n}-" + uuid.uuid4().hex * (LONG // 32)


async def post(session, url: str, body: bytes, headers: dict[str, str]) -> int:
    async with session.post(url + "webhook", data=body, headers=headers) as resp:
        return resp.status


async def test_unsigned_requests_leave_no_trace_in_the_metrics_or_the_logs(session, tmp_path):
    async with served(tmp_path) as bot:
        names = [made_up(n) for n in range(DELIVERIES + 1)]
        ids = [made_up(n) for n in range(DELIVERIES + 1)]

        def unsigned(n: int) -> dict[str, str]:
            return {
                "X-GitHub-Event": names[n],
                "X-GitHub-Delivery": ids[n],
                "X-Hub-Signature-256": "sha256=0",
            }

        assert await post(session, bot.url, b"{}", unsigned(0)) == 401
        first = await bot.metrics(session)
        statuses = await asyncio.gather(
            *(post(session, bot.url, b"{}", unsigned(n)) for n in range(1, DELIVERIES + 1))
        )
        assert set(statuses) == {401}
        after = await bot.metrics(session)
        lines = await bot.logged(DELIVERIES + 1, "webhook unauthorized")
    assert delivery_series(after) == {("unverified", "unauthorized"): DELIVERIES + 1}
    assert len(after) - len(first) < 20  # only the count's digits grew
    log = json.dumps(lines)
    assert not any(name[:40] in after or name[:40] in log for name in names + ids)
    refused = [entry for entry in lines if entry["message"] == "webhook unauthorized"]
    assert {(entry["event"], entry["status"], "delivery_id" in entry) for entry in refused} == {
        ("unverified", 401, False)
    }


async def test_signed_deliveries_of_events_the_bot_does_not_know_count_as_one_other(session, tmp_path):
    body = b"{}"

    def signed(event: str, delivery: str) -> dict[str, str]:
        return {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign(body, SECRET),
        }

    async with served(tmp_path) as bot:
        names = [made_up(n) for n in range(DELIVERIES)]
        statuses = await asyncio.gather(
            *(post(session, bot.url, body, signed(name, str(uuid.uuid4()))) for name in names)
        )
        assert set(statuses) == {200}
        assert await post(session, bot.url, body, signed("ping", "x" * LONG)) == 200
        metrics = await bot.metrics(session)
        lines = await bot.logged(DELIVERIES + 1, "webhook ignored")
    assert delivery_series(metrics) == {("other", "ignored"): DELIVERIES, ("ping", "ignored"): 1}
    ignored = [entry for entry in lines if entry["message"] == "webhook ignored"]
    assert {entry["event"] for entry in ignored} == {"other", "ping"}
    assert max(len(entry["delivery_id"]) for entry in ignored) <= 71  # "sha256:" and 64 hex digits at most
    assert not any(name[:40] in json.dumps(lines) for name in names)


async def raw_post(port: int, headers: bytes, body: bytes) -> bytes:
    """The answer to a POST /webhook written byte for byte, header values that are not UTF-8 included."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        + headers
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    return answer


@pytest.mark.parametrize(
    "signature",
    [b"sha256=\xff\xfe\x80", sign(b"{}", SECRET).encode()[:-1] + "é".encode("latin-1")],
    ids=["not-utf-8", "latin-1"],
)
async def test_a_signature_header_that_is_not_ascii_is_401(tmp_path, signature):
    async with served(tmp_path) as bot:
        headers = b"X-GitHub-Event: ping\r\nX-Hub-Signature-256: " + signature + b"\r\n"
        answer = await raw_post(int(bot.url.split(":")[2].strip("/")), headers, b"{}")
        assert answer.startswith(b"HTTP/1.1 401 ") and b"missing or wrong X-Hub-Signature-256" in answer
        await bot.logged(1, "webhook unauthorized")


async def test_a_signed_delivery_id_that_is_not_short_text_is_kept_short_and_counted_once(bot, scenario):
    """The delivery header is not signed: an id that is not UTF-8 or is kilobytes long is stored and logged
    under a bounded key, and a redelivery with the same id is still a duplicate."""
    body = json.dumps(scenario.pull_event("opened")).encode()
    port = int(bot.url.split(":")[2].strip("/"))
    answers = []
    for delivery in [b"\xff\xfe-1", b"\xff\xfe-1", b"d" * LONG, b"d" * LONG]:
        headers = b"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: %s\r\nX-Hub-Signature-256: %s\r\n" % (
            delivery,
            sign(body, SECRET).encode(),
        )
        answers.append(json.loads((await raw_post(port, headers, body)).partition(b"\r\n\r\n")[2]))
    assert [answer["status"] for answer in answers] == ["queued", "duplicate", "queued", "duplicate"]
    await bot.settle()
    for answer in (answers[0], answers[2]):
        (job_id,) = answer["jobs"]
        job = await bot.queue.get(job_id)
        assert job is not None and job.delivery_id is not None
        assert job.delivery_id.isascii() and len(job.delivery_id) <= 71
