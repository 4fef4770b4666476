"""RestSnapshot: one tree listing, blobs fetched lazily from a worker thread, cached by sha."""

import asyncio

import aiohttp
import pygit2
import pytest

from bot.github import GitHubApp
from bot.rest import BlobCache, RestSnapshot
from tests.conftest import TEST_POLICY
from tests.fakegithub import commit


@pytest.fixture
async def gh(fake_github):
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(
            session,
            app_id=str(fake_github.app_id),
            private_key=fake_github.private_key_pem,
            base_url=fake_github.url,
            policy=TEST_POLICY,
        )
        yield app.installation(fake_github.installation_id)


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
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, snapshot.read, "dir/b.txt") == b"B\n"
    assert await loop.run_in_executor(None, snapshot.read, "dir/b.txt") == b"B\n"
    assert await loop.run_in_executor(None, snapshot.read, "missing") is None
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


async def test_read_on_the_event_loop_is_refused(gh, sha):
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
