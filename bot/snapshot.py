"""Read-only views of a repository at one revision.

The engine reads the Ollama repository and the upstream trees only through
`Snapshot`, so the same analysis runs on a local git checkout (the CLI), on
files fetched through the REST API (the service) and on git objects of an
upstream mirror.
"""

from __future__ import annotations

from typing import Protocol

import pygit2


class Snapshot(Protocol):
    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when there is no such file."""

    def files(self, prefix: str = "") -> list[str]:
        """Paths of all files under `prefix` (a directory, '' for all), sorted."""


class GitSnapshot:
    """A commit's tree in a pygit2 repository: reads git objects, never a working tree."""

    def __init__(self, repo: pygit2.Repository, commit: pygit2.Commit | str):
        self.repo = repo
        self.commit = repo[commit].peel(pygit2.Commit) if isinstance(commit, str) else commit
        self.tree = self.commit.tree
        self._files: list[str] | None = None

    def entry(self, path: str) -> pygit2.Object | None:
        try:
            return self.tree[path]
        except KeyError:
            return None

    def read(self, path: str) -> bytes | None:
        obj = self.entry(path)
        if not isinstance(obj, pygit2.Blob):
            return None
        return obj.data

    def files(self, prefix: str = "") -> list[str]:
        if self._files is None:
            found: list[str] = []
            stack: list[tuple[str, pygit2.Tree]] = [("", self.tree)]
            while stack:
                base, tree = stack.pop()
                for entry in tree:
                    path = base + (entry.name or "")
                    if isinstance(entry, pygit2.Tree):
                        stack.append((path + "/", entry))
                    elif entry.type == pygit2.GIT_OBJECT_BLOB:
                        found.append(path)
            self._files = sorted(found)
        if not prefix:
            return list(self._files)
        prefix = prefix.rstrip("/") + "/"
        return [p for p in self._files if p.startswith(prefix)]


class MemorySnapshot:
    """Files already in memory: what the service fetched through the REST API."""

    def __init__(self, files: dict[str, bytes]):
        self._data = dict(files)

    def read(self, path: str) -> bytes | None:
        return self._data.get(path)

    def files(self, prefix: str = "") -> list[str]:
        if not prefix:
            return sorted(self._data)
        prefix = prefix.rstrip("/") + "/"
        return sorted(p for p in self._data if p.startswith(prefix))
