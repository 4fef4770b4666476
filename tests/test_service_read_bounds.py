"""What the service reads of a pull request's files: 8 MiB of one file, 64 MiB for one analysis, a file past
them named on the pull request, never held in memory.

The 95 MiB case runs `python -m bot serve` as its own process so that its memory is its own: the fake
GitHub, which builds what it serves in this process, is not counted.
"""

from __future__ import annotations

import asyncio
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pygit2
import pytest
from aiohttp import web

from bot.gh.github import ANSWER_BYTES, BodyTooLarge, GitHubClient
from bot.gh.rest import FILE_BYTES, RAW, BlobCache, FileNotRead, RestSnapshot, ThreadReader, get_blob
from bot.stores.sqlitejobs import DB_NAME, read_jobs
from tests.conftest import TEST_POLICY, Bot, Scenario
from tests.fakegithub import FakeGitHub, commit
from tests.test_service_rest import blob_gets, installation
from tests.test_service_restart import Served, serve_env, wait_until

HUGE_PATH = "cmake/huge.cmake"
HUGE_BYTES = 95 << 20
# 95 MiB of comment lines: gzip takes them to some 100 kB, and they parse as CMake
HUGE_CMAKE = (b"# " + b"x" * 77 + b"\n") * (HUGE_BYTES // 80)
FINISHED = ("done", "failed", "superseded")
PEAK_GROWTH_MB = 50  # what the service's peak RSS may pass its size after a first analysis by


def memory_kb(pid: int, field: str) -> int:
    """A `Vm*` line of /proc/<pid>/status, in kB."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in lines if line.startswith(f"{field}:"))


def reset_peak(pid: int) -> None:
    """The process's peak RSS (VmHWM) back to its RSS now (proc(5), clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


async def analysed(served: Served, data_dir: Path, scenario: Scenario, event: str) -> None:
    """Deliver a pull_request event and wait until its jobs have finished."""
    status, answer = await served.deliver("pull_request", scenario.pull_event(event))
    assert status == 202, answer

    async def finished() -> bool:
        return all(read_jobs(data_dir / DB_NAME, job_id=j)[0].status in FINISHED for j in answer["jobs"])

    await wait_until(finished, timeout=240)


@pytest.mark.timeout(300)
async def test_a_95_mib_file_is_not_read_and_the_service_memory_stays_flat(
    fake_github: FakeGitHub, scenario: Scenario, tmp_path: Path
):
    data_dir = tmp_path / "var"
    served = await Served.start(serve_env(fake_github, scenario, data_dir), tmp_path / "serve.log")
    try:
        await analysed(served, data_dir, scenario, "opened")  # the warm-up: imports, the mirror, caches
        pid = served.process.pid
        idle_kb = memory_kb(pid, "VmRSS")
        reset_peak(pid)
        head = scenario.push({HUGE_PATH: HUGE_CMAKE}, message="cmake: a large file")
        await analysed(served, data_dir, scenario, "synchronize")
        peak_kb = memory_kb(pid, "VmHWM")
    finally:
        await served.stop()
    growth_mb = (peak_kb - idle_kb) / 1024
    print(
        f"service RSS {idle_kb / 1024:.0f} MB after a first analysis, peak {peak_kb / 1024:.0f} MB with {HUGE_PATH}"
    )

    runs = scenario.check_runs(head)
    assert len(runs) == 2 and {r["conclusion"] for r in runs} == {"failure"}
    said = [f"{r['output']['title']}\n{r['output']['summary']}" for r in runs]
    (comment,) = scenario.bot_comments()
    for text in [*said, comment["body"]]:
        assert f"{HUGE_PATH} is 95 MiB, over the 8 MiB llama-bot reads of one file" in text, text
    assert growth_mb < PEAK_GROWTH_MB, f"the service's peak RSS grew by {growth_mb:.0f} MB"
    huge_blob = str(scenario.git[head].peel(pygit2.Tree)[HUGE_PATH].id)
    assert not [r for r in blob_gets(fake_github) if huge_blob in r["path"]], "refused by its listed size"


async def test_a_file_larger_than_its_listing_says_is_cut_off_as_it_streams_in(bot: Bot, scenario: Scenario):
    """A listing without sizes (the description makes them optional) cannot defeat the bound: the blob is
    read raw and refused at 8 MiB."""
    scenario.fake.list_sizes = False
    head = scenario.push({"cmake/big.cmake": b"# large\n" * (3 << 20)})  # 24 MiB
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    runs = scenario.check_runs(head)
    assert runs and {r["conclusion"] for r in runs} == {"failure"}
    for run in runs:
        assert (
            "cmake/big.cmake is over the 8 MiB llama-bot reads of one file: it was not read"
            in (run["output"]["summary"])
        )


def reading(snapshot: RestSnapshot, reader: ThreadReader, paths: list[str]) -> Callable[[], list]:
    """What reading `paths` in order gives in a worker thread: bytes, or the FileNotRead raised."""

    def read() -> list:
        found: list = []
        with reader:
            for path in paths:
                try:
                    found.append(snapshot.reading_with(reader).read(path))
                except FileNotRead as refusal:
                    found.append(refusal)
        return found

    return read


@pytest.fixture
async def gh(fake_github):
    async with aiohttp.ClientSession() as session:
        yield installation(session, fake_github)


@pytest.fixture
def git(fake_github, tmp_path) -> pygit2.Repository:
    repository = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    fake_github.add_repo("o", "r", repository)
    return repository


async def test_a_file_listed_over_the_bound_is_refused_before_any_download(fake_github, gh, git):
    sha = commit(git, {"huge.cmake": b"x" * (9 << 20), "small.cmake": b"y\n"}, ref="refs/heads/main")
    snapshot = await RestSnapshot.load(gh, "o", "r", sha, BlobCache())
    read = reading(snapshot, await snapshot.thread_reader(), ["huge.cmake", "huge.cmake", "small.cmake"])
    huge, again, small = await asyncio.get_running_loop().run_in_executor(None, read)
    assert str(huge) == "huge.cmake is 9 MiB, over the 8 MiB llama-bot reads of one file: it was not read"
    assert again is huge and small == b"y\n"
    assert len(blob_gets(fake_github)) == 1  # small.cmake's


async def test_one_analysis_reads_so_much_of_the_files_in_all(fake_github, gh, git):
    """Each distinct file counts once, one already cached too; past the bound the next is refused, with what
    was read."""
    sha = commit(
        git, {"a.cmake": b"a" * 40, "b.cmake": b"b" * 40, "c.cmake": b"c" * 40}, ref="refs/heads/main"
    )
    blobs = BlobCache()
    blobs.put(str(git.create_blob(b"a" * 40)), b"a" * 40)
    snapshot = await RestSnapshot.load(gh, "o", "r", sha, blobs)
    reader = ThreadReader(await gh.for_another_loop(), max_bytes=100)
    read = reading(snapshot, reader, ["a.cmake", "a.cmake", "b.cmake", "c.cmake"])
    first, again, second, refused = await asyncio.get_running_loop().run_in_executor(None, read)
    assert first == again == b"a" * 40 and second == b"b" * 40
    assert str(refused) == (
        "c.cmake was not read: llama-bot reads 100 bytes of a pull request's files for one analysis, "
        "and had read 80 bytes of them"
    )
    assert len(blob_gets(fake_github)) == 1  # b.cmake's: a.cmake was cached, c.cmake refused by its size


def inflating_to(size: int) -> bytes:
    """A gzip stream of `size` bytes of "x", made a MiB at a time: about a thousandth of `size`."""
    packer = zlib.compressobj(wbits=31)
    chunk = b"x" * (1 << 20)
    return b"".join(packer.compress(chunk) for _ in range(size >> 20)) + packer.flush()


async def blob_of(gh: GitHubClient) -> object:
    return await get_blob(gh, "o", "r", "0" * 40)


async def listing_of(gh: GitHubClient) -> object:
    return await gh.getitem("/repos/o/r/pulls/7/files?per_page=100")


@pytest.mark.parametrize(("read", "bound"), [(blob_of, FILE_BYTES), (listing_of, ANSWER_BYTES)])
async def test_an_answer_that_inflates_to_95_mib_is_never_held_past_its_bound(aiohttp_server, read, bound):
    """100 kB on the wire, 95 MiB decoded (a file's raw blob, or a JSON answer): the read stops at its
    bound, and holds no more than it."""
    bomb = inflating_to(95 << 20)

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip", "Content-Type": RAW})

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    server = await aiohttp_server(app)
    async with aiohttp.ClientSession() as session:
        gh = GitHubClient(session, base_url=str(server.make_url("")).rstrip("/"), policy=TEST_POLICY)
        tracemalloc.start()
        try:
            with pytest.raises(BodyTooLarge):
                await read(gh)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(bomb) < 200_000
    assert peak < bound * 1.5, f"the read held {peak >> 20} MiB"
