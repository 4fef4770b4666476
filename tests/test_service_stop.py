"""Stopping always stops: the workers end even when the stop arrives just as one of them is woken."""

import asyncio

import aiohttp

from bot.gh.github import GitHubApp
from bot.stores.jobs import JobRequest
from bot.stores.sqlitejobs import SqliteJobQueue
from bot.worker.metrics import Metrics
from bot.worker.runner import Service
from tests.conftest import NAME, OWNER

ROUNDS = 40  # each round stops the service at another moment of the workers' loop


def service(tmp_path, n: int, queue: SqliteJobQueue, session: aiohttp.ClientSession, fake) -> Service:
    github = GitHubApp(session, app_id=str(fake.app_id), private_key=fake.private_key_pem, base_url=fake.url)
    return Service(
        queue=queue,
        github=github,
        data_dir=tmp_path / f"data-{n}",
        url_instead_of=None,
        workers=2,
        metrics=Metrics(),
        poll_interval=0.05,
    )


async def test_a_stop_that_arrives_as_a_worker_is_woken_stops_every_worker(fake_github, session, tmp_path):
    """On Python 3.11 `wait_for` drops a cancellation that arrives as the awaited event is set: a worker
    woken by a delivery in the same instant as the stop then went on polling, and `stop()` hung."""
    for n in range(ROUNDS):
        queue = SqliteJobQueue(tmp_path / f"jobs-{n}.sqlite3")
        bot = service(tmp_path, n, queue, session, fake_github)
        bot.start()
        for _ in range(n % 6):  # let the workers get some way into claiming and waiting
            await asyncio.sleep(0.002)
        bot.wake()
        await bot.stop()
        assert not bot.running, f"round {n}: a worker is still going after stop()"
        await queue.close()


async def test_a_job_claimed_as_the_service_stops_is_given_back(fake_github, session, tmp_path):
    """Whatever moment the stop lands on, the job ends queued (to be resumed) or done, never held by a
    worker that is gone."""
    for n in range(20):
        queue = SqliteJobQueue(tmp_path / f"jobs-{n}.sqlite3")
        bot = service(tmp_path, n, queue, session, fake_github)
        bot.start()
        await asyncio.sleep(0.002 * (n % 5))
        (job_id,) = await queue.enqueue(
            f"d-{n}",
            "workflow_run",
            [
                JobRequest(
                    "closed",
                    f"{OWNER}/{NAME}#7",
                    {
                        "installation_id": fake_github.installation_id,
                        "owner": OWNER,
                        "repo": NAME,
                        "number": 7,
                        "fork": False,
                    },
                )
            ],
        )
        bot.wake()
        await bot.stop()
        assert not bot.running
        job = await queue.get(job_id)
        assert job is not None and job.status in ("queued", "done"), (n, job)
        await queue.close()
