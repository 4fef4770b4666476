"""RestSnapshot: one tree listing, blobs fetched lazily from a worker thread, cached by sha."""

import asyncio
import threading

import aiohttp
import pygit2
import pytest

from bot.gh.github import GitHubApp
from bot.gh.rest import BlobCache, RestSnapshot
from tests.conftest import TEST_POLICY
from tests.fakegithub import FakeGitHub, commit


def installation(session: aiohttp.ClientSession, fake: FakeGitHub):
    app = GitHubApp(
        session,
        app_id=str(fake.app_id),
        private_key=fake.private_key_pem,
        base_url=fake.url,
        policy=TEST_POLICY,
    )
    return app.installation(fake.installation_id)


@pytest.fixture
async def gh(fake_github):
    async with aiohttp.ClientSession() as session:
        yield installation(session, fake_github)


@pytest.fixture
def sha(fake_github, tmp_path):
    git = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    fake_github.add_repo("o", "r", git)
    return commit(
        git,
        {"a.txt": "A\n", "dir/b.txt": "B\n", "dir/sub/c.txt": "C\n", "dir2/d.txt": "D\n"},
        ref="refs/heads/main",
    )


def blob_gets(fake):
    return [r for r in fake.requests if r["method"] == "GET" and "/git/blobs/" in r["path"]]


async def test_files_come_from_one_tree_listing_and_blobs_lazily(fake_github, gh, sha):
    snapshot = await RestSnapshot.load(gh, "o", "r", sha, BlobCache())
    assert snapshot.files() == ["a.txt", "dir/b.txt", "dir/sub/c.txt", "dir2/d.txt"]
    assert snapshot.files("dir") == ["dir/b.txt", "dir/sub/c.txt"]
    assert snapshot.mode("a.txt") == "100644"
    assert blob_gets(fake_github) == []
    reader = await snapshot.thread_reader()

    def reads() -> list[bytes | None]:
        with reader:
            reading = snapshot.reading_with(reader)
            return [reading.read("dir/b.txt"), reading.read("dir/b.txt"), reading.read("missing")]

    assert await asyncio.get_running_loop().run_in_executor(None, reads) == [b"B\n", b"B\n", None]
    assert len(blob_gets(fake_github)) == 1
    assert [r["path"].rsplit("/", 2)[-2] for r in fake_github.requests if "/git/trees/" in r["path"]] == [
        "trees"
    ]


async def test_blob_cache_is_shared_by_sha(fake_github, gh, sha):
    blobs = BlobCache()
    first = await RestSnapshot.load(gh, "o", "r", sha, blobs)
    second = await RestSnapshot.load(gh, "o", "r", sha, blobs)
    assert await first.fetch("a.txt") == await second.fetch("a.txt") == b"A\n"
    assert len(blob_gets(fake_github)) == 1


async def test_a_tree_is_listed_once_for_every_commit_that_has_it(fake_github, gh, sha, tmp_path):
    """A second pull request, or a push that leaves the base where it was, lists no tree GitHub listed
    before: a tree's files are those of its sha."""
    git = pygit2.Repository(str(tmp_path / "r.git"))
    head = git[sha].peel(pygit2.Commit)
    same_tree = git.create_commit(None, head.author, head.committer, "again", head.tree_id, [head.id])
    other = commit(git, {"a.txt": "A2\n"}, parents=[sha])
    blobs = BlobCache()
    first = await RestSnapshot.load(gh, "o", "r", sha, blobs)
    again = await RestSnapshot.load(gh, "o", "r", str(same_tree), blobs)
    changed = await RestSnapshot.load(gh, "o", "r", other, blobs)
    listed = [r["path"] for r in fake_github.requests if "/git/trees/" in r["path"]]
    assert listed == [
        f"/repos/o/r/git/trees/{head.tree_id}",
        f"/repos/o/r/git/trees/{git[other].peel(pygit2.Commit).tree_id}",
    ]
    assert again.files() == first.files() and again.commit_sha == str(same_tree)
    assert changed.entries["a.txt"][0] != first.entries["a.txt"][0]


def test_a_worker_thread_reads_while_the_loop_that_loaded_the_snapshot_is_blocked(tmp_path):
    """The analysis thread's reads never wait on the service's event loop: here that loop is stuck until
    the thread has read, which would deadlock a read handed to it."""
    github_loop = asyncio.new_event_loop()  # the fake GitHub answers from its own thread
    threading.Thread(target=github_loop.run_forever, daemon=True).start()
    fake = FakeGitHub()
    asyncio.run_coroutine_threadsafe(fake.start(), github_loop).result(30)
    git = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    fake.add_repo("o", "r", git)
    sha = commit(git, {"a.txt": "A\n"}, ref="refs/heads/main")

    async def service() -> list[bytes | None]:
        async with aiohttp.ClientSession() as session:
            snapshot = await RestSnapshot.load(installation(session, fake), "o", "r", sha, BlobCache())
            reader = await snapshot.thread_reader()
            read: list[bytes | None] = []

            def analysis() -> None:
                with reader:
                    read.append(snapshot.reading_with(reader).read("a.txt"))

            worker = threading.Thread(target=analysis)
            worker.start()
            worker.join(30)  # blocks this event loop while the thread reads
            return read

    try:
        assert asyncio.run(service()) == [b"A\n"]
        assert len(blob_gets(fake)) == 1
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), github_loop).result(30)
        github_loop.call_soon_threadsafe(github_loop.stop)


async def test_read_without_a_reader_is_refused(gh, sha):
    snapshot = await RestSnapshot.load(gh, "o", "r", sha, BlobCache())
    with pytest.raises(RuntimeError, match="fetch"):
        snapshot.read("a.txt")


def test_blob_cache_is_bounded_by_size():
    cache = BlobCache(max_bytes=10)
    cache.put("a", b"12345")
    cache.put("b", b"12345")
    cache.put("c", b"12345")
    assert cache.get("a") is None and cache.get("c") == b"12345"
    cache.put("huge", b"x" * 11)  # larger than the whole cache: simply not kept
    assert cache.get("huge") is None


def test_the_listings_kept_are_bounded_by_their_files(monkeypatch):
    """A pull request's tree of many files is not kept whole many times over: the listings kept hold at most
    KEPT_LISTED_FILES files together, the least recently used out first, one larger than that not at all."""
    from bot.gh import rest

    monkeypatch.setattr(rest, "KEPT_LISTED_FILES", 10)
    cache = BlobCache()

    def listing(files: int) -> dict[str, tuple[str, str, int]]:
        return {f"f{n}": ("0" * 40, "100644", 1) for n in range(files)}

    for tree in ("a", "b", "c"):
        cache.keep_listing(tree, listing(4))
    assert cache.listing("a") is None and cache.listing("c") == listing(4)
    cache.keep_listing("huge", listing(11))
    assert cache.listing("huge") is None and cache.listing("c") == listing(4)
