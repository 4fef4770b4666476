"""Builders of real git repositories for the tests, the demo and the benchmark.

Commits are written straight into the object database with pygit2 (no
working tree, no subprocess), so a history of hundreds of commits takes
well under a second.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import pygit2

SIGNATURE = pygit2.Signature("Fixture Author", "fixture@example.com", int(time.time()) - 86400 * 30, 0)
Files = Mapping[str, "bytes | str | None"]


def _as_bytes(content: bytes | str) -> bytes:
    return content.encode() if isinstance(content, str) else content


class RepoBuilder:
    """A repository whose branch `main` grows by `commit()` calls."""

    def __init__(self, path: str | Path, bare: bool = True):
        self.repo = pygit2.init_repository(str(path), bare=bare, initial_head="main")
        self.path = Path(path)
        self.files: dict[str, bytes] = {}
        self.head: pygit2.Oid | None = None
        self._index = pygit2.Index()  # kept between commits: only changed files are hashed again
        self._tick = 0

    def commit(self, message: str, changes: Files) -> pygit2.Oid:
        """Apply `changes` (path -> content, None deletes) and commit them on main."""
        for path, content in changes.items():
            if content is None:
                if self.files.pop(path, None) is not None:
                    self._index.remove(path)
            else:
                self.files[path] = _as_bytes(content)
                blob = self.repo.create_blob(self.files[path])
                self._index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        self._tick += 1
        sig = pygit2.Signature(SIGNATURE.name, SIGNATURE.email, SIGNATURE.time + self._tick * 60, 0)
        parents = [self.head] if self.head is not None else []
        tree = self._index.write_tree(self.repo)
        self.head = self.repo.create_commit("refs/heads/main", sig, sig, message, tree, parents)
        if (
            not self.repo.is_bare and self.repo.head.name == "refs/heads/main"
        ):  # a clean working tree, as after `git commit`
            self.repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
        return self.head

    def link(self, path: str, target: str) -> None:
        """Stage a symbolic link `path` -> `target` for the next commit."""
        self.files[path] = target.encode()
        self._index.add(pygit2.IndexEntry(path, self.repo.create_blob(target), pygit2.enums.FileMode.LINK))

    def tag(self, name: str, target: pygit2.Oid | None = None) -> None:
        self.repo.references.create(f"refs/tags/{name}", self._target(target), force=True)

    def branch(self, name: str, target: pygit2.Oid | None = None) -> None:
        self.repo.references.create(f"refs/heads/{name}", self._target(target), force=True)

    def _target(self, target: pygit2.Oid | None) -> pygit2.Oid:
        chosen = target or self.head
        if chosen is None:
            raise ValueError("nothing committed yet")
        return chosen

    def read(self, path: str) -> bytes:
        return self.files[path]


def review_one_commit(
    tmp_path: Path, upstream: Mapping[str, str], changes: Mapping[str, str], ollama, snapshot=None
):
    """The llama.cpp review of one upstream commit (tags b1 -> b2) that makes `changes` (path -> new text)
    to the `upstream` files, against Ollama's files `ollama` (path -> text) at the head, read through
    `snapshot(ollama)` (a MemorySnapshot by default)."""
    from bot.config import parse_config
    from bot.repos.history import History
    from bot.repos.snapshot import GitSnapshot, MemorySnapshot
    from bot.repos.upstream import Upstream
    from bot.review import ReviewContext, review

    b = RepoBuilder(tmp_path / "u.git")
    b.commit("base", dict(upstream))
    b.tag("b1")
    b.commit("change (#1)", dict(changes))
    b.tag("b2")
    up = Upstream(b.repo, "https://github.com/ggml-org/llama.cpp")
    old, new = up.commit("b1", "V"), up.commit("b2", "V")
    pin = parse_config(None).pins[0]
    snapshots = (GitSnapshot(b.repo, old), GitSnapshot(b.repo, new))
    ctx = ReviewContext(pin, *snapshots, History(up, old, new), (snapshot or MemorySnapshot)(ollama), [], {})
    return review(ctx)
