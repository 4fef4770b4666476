"""A load client in its own process, so that its timings do not wait on the fake GitHub's event loop."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path

import aiohttp

from tests.fakegithub import sign


async def load(url: str, body: bytes, secret: str, count: int, concurrency: int) -> list[float]:
    signature = sign(body, secret)
    gate = asyncio.Semaphore(concurrency)
    times: list[float] = []

    async def one(session: aiohttp.ClientSession) -> None:
        headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": str(uuid.uuid4()),
                   "X-Hub-Signature-256": signature, "Content-Type": "application/json"}
        async with gate:
            started = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as resp:
                await resp.read()
                if resp.status != 202:
                    raise RuntimeError(f"answer {resp.status}")
            times.append(time.perf_counter() - started)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        await asyncio.gather(*(one(session) for _ in range(count)))
    return times


if __name__ == "__main__":
    url, body_file, secret, count, concurrency = sys.argv[1:6]
    result = asyncio.run(load(url, Path(body_file).read_bytes(), secret, int(count), int(concurrency)))
    print(json.dumps(result))
