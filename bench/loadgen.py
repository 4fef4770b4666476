"""A load client in its own process: signed deliveries over keep-alive connections, timed one by one.

It writes HTTP/1.1 by hand over asyncio protocols instead of using aiohttp's
client, whose own per-request work (about as much as the service's on this
machine) would otherwise be counted as the service's latency. Connections
are opened before the clock starts, as a proxy in front of the service
keeps them open; each request is timed from its first byte written to its
answer's last byte read.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from tests.fakegithub import sign


class Connection(asyncio.Protocol):
    """One keep-alive connection sending deliveries one after another, while `remaining` lasts."""

    def __init__(
        self, requests: list[bytes], times: list[float], statuses: list[int], finished: asyncio.Future
    ):
        self.requests, self.times, self.statuses, self.finished = requests, times, statuses, finished
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.started = 0.0

    def connection_made(self, transport) -> None:
        self.transport = transport

    def send_next(self) -> None:
        if not self.requests:
            if not self.finished.done():
                self.finished.set_result(None)
            return
        request = self.requests.pop()
        self.started = time.perf_counter()
        assert self.transport is not None
        self.transport.write(request)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head_end = self.buffer.find(b"\r\n\r\n")
        if head_end < 0:
            return
        head = self.buffer[:head_end].decode("latin-1").lower()
        length = int(head.split("content-length:", 1)[1].split("\r\n", 1)[0])
        if len(self.buffer) < head_end + 4 + length:
            return
        self.times.append(time.perf_counter() - self.started)
        self.statuses.append(int(head.split(" ", 2)[1]))
        self.buffer = self.buffer[head_end + 4 + length :]
        self.send_next()

    def connection_lost(self, exc) -> None:
        if not self.finished.done():
            self.finished.set_exception(ConnectionError(f"connection lost: {exc}"))


def requests_for(url: str, body: bytes, secret: str, count: int) -> list[bytes]:
    """`count` deliveries of the same signed body, each with its own delivery id (built before timing)."""
    parts = urlsplit(url)
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-Hub-Signature-256: {sign(body, secret)}\r\n"
        f"Content-Length: {len(body)}\r\n"
    )
    return [f"{head}X-GitHub-Delivery: {uuid.uuid4()}\r\n\r\n".encode() + body for _ in range(count)]


async def load(url: str, body: bytes, secret: str, count: int, concurrency: int) -> list[float]:
    loop = asyncio.get_running_loop()
    parts = urlsplit(url)
    pending = requests_for(url, body, secret, count)
    times: list[float] = []
    statuses: list[int] = []
    connections = []
    for _ in range(concurrency):
        finished = loop.create_future()
        _, protocol = await loop.create_connection(
            lambda finished=finished: Connection(pending, times, statuses, finished),
            parts.hostname,
            parts.port,
        )
        connections.append(protocol)
    for protocol in connections:
        protocol.send_next()
    await asyncio.gather(*(protocol.finished for protocol in connections))
    for protocol in connections:
        protocol.transport.close()
    wrong = [s for s in statuses if s != 202]
    if wrong:
        raise RuntimeError(f"{len(wrong)} answers were not 202 (first: {wrong[0]})")
    return times


if __name__ == "__main__":
    url, body_file, secret, count, concurrency = sys.argv[1:6]
    result = asyncio.run(load(url, Path(body_file).read_bytes(), secret, int(count), int(concurrency)))
    print(json.dumps(result))
