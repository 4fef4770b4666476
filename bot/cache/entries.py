"""The facts store's entries in one SQLite file: id -> bytes, the least recently used out past a bound.

One file rather than a file per entry: a first analysis keeps about a thousand entries, and creating as
many files cost more than computing some of them. Writes wait in memory (about a megabyte) and go in one
transaction when they outgrow that or at `flush`, so a process holds the write lock for milliseconds,
never for an analysis; other processes (the service's jobs, a review's forked copy) read and write the
same file meanwhile (write-ahead log).

A connection must not cross a fork (SQLite's locks are the process's): every store closes its connection
before this process forks, and a copy opens its own. The copy still reads what waited unwritten in the
parent, and writes only what it kept itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
import time
import weakref
from pathlib import Path

log = logging.getLogger(__name__)

DB_NAME = "facts.sqlite3"  # in the store's directory
WAITING_BYTES = 1 << 20  # entries kept waiting in memory before they are written
# A found entry's time of use is written again only when older than this: least recently used to the hour.
USED_GRAIN = 3600
SWEEP_SHARE = 8  # written bytes past this share of the bound since the last look: look at the total again
KEPT_SHARE = 0.75  # an eviction frees the store down to this share of its bound
CACHE_KB = 512  # SQLite's page cache: an entry is read once per analysis, and the peak RSS is bounded
BUSY_SECONDS = 5.0  # how long a write waits for another process's
SCHEMA = """
CREATE TABLE IF NOT EXISTS entry (
    id BLOB PRIMARY KEY,
    used INTEGER NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS entry_used ON entry (used, size, id);
"""
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}


class Entries:
    """The entries under `root`, at most `max_bytes` of their data."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root, self.max_bytes = root, max_bytes
        self._db: sqlite3.Connection | None = None
        self._unusable = False  # the file could not be opened: every look-up misses, nothing is kept
        self._waiting: dict[bytes, bytes] = {}
        self._waiting_bytes = 0
        self._inherited: dict[bytes, bytes] = {}  # what waited in the process this one was forked from
        self._used: set[bytes] = set()  # found, their time of use to be written again
        self._written = 0
        _STORES.add(self)

    def read(self, entry_id: bytes) -> bytes | None:
        """The entry's data, or None."""
        waiting = self._waiting.get(entry_id, self._inherited.get(entry_id))
        if waiting is not None:
            return waiting
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT used, data FROM entry WHERE id = ?", (entry_id,)).fetchone()
        except sqlite3.Error as exc:
            self._failed(exc)
            return None
        if row is None:
            return None
        if row[0] < time.time() - USED_GRAIN:
            self._used.add(entry_id)
        return row[1]

    def write(self, entry_id: bytes, data: bytes) -> None:
        """Keeps the entry: written with the others waiting, now if they outgrow WAITING_BYTES."""
        if self._connection() is None:
            return
        self._waiting_bytes += len(data) - len(self._waiting.get(entry_id, b""))
        self._waiting[entry_id] = data
        if self._waiting_bytes > WAITING_BYTES:
            self.flush()

    def drop(self, entry_id: bytes) -> None:
        """Removes a damaged entry."""
        self._waiting.pop(entry_id, None)
        self._inherited.pop(entry_id, None)
        db = self._connection()
        if db is not None:
            try:
                db.execute("DELETE FROM entry WHERE id = ?", (entry_id,))
            except sqlite3.Error as exc:
                self._failed(exc)

    def flush(self) -> None:
        """Writes the waiting entries and the times of use found old, in one transaction (a full disk or
        another process holding the file too long only costs the next analysis its time)."""
        waiting, used, written = self._waiting, self._used, self._waiting_bytes
        self._waiting, self._used, self._waiting_bytes = {}, set(), 0
        db = self._connection() if waiting or used else None
        if db is None:
            return
        now = int(time.time())
        try:
            with _transaction(db):
                db.executemany(
                    "INSERT OR REPLACE INTO entry (id, used, size, data) VALUES (?, ?, ?, ?)",
                    ((i, now, len(d), d) for i, d in waiting.items()),
                )
                db.executemany("UPDATE entry SET used = ? WHERE id = ?", ((now, i) for i in used))
        except sqlite3.Error as exc:
            self._failed(exc)
            return
        self._written += written
        if self._written > self.max_bytes // SWEEP_SHARE:
            self.sweep()

    def sweep(self) -> None:
        """Removes the least recently used entries while the store is over its bound."""
        self._written = 0
        db = self._connection()
        if db is None:
            return
        try:
            total = self.total()
            if total <= self.max_bytes:
                return
            gone = []
            for entry_id, size in db.execute("SELECT id, size FROM entry ORDER BY used, id").fetchall():
                if total <= self.max_bytes * KEPT_SHARE:
                    break
                gone.append((entry_id,))
                total -= size
            with _transaction(db):
                db.executemany("DELETE FROM entry WHERE id = ?", gone)
            db.execute("PRAGMA incremental_vacuum")  # the freed pages back to the file system
        except sqlite3.Error as exc:
            self._failed(exc)

    def total(self) -> int:
        """The bytes of the entries written."""
        db = self._connection()
        return int(db.execute("SELECT total(size) FROM entry").fetchone()[0]) if db is not None else 0

    def close(self) -> None:
        """Closes the connection (the waiting entries stay waiting; the next use opens it again)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def _forked(self) -> None:
        """In a forked copy: what waited is the parent's to write, and readable here."""
        self._inherited = {**self._inherited, **self._waiting}
        self._waiting, self._used, self._waiting_bytes, self._written = {}, set(), 0, 0

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is None and not self._unusable:
            self._db = self._opened()
            self._unusable = self._db is None
        return self._db

    def _opened(self, damaged_once: bool = False) -> sqlite3.Connection | None:
        path = self.root / DB_NAME
        db = None
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            _remove_entry_files(self.root)
            db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_SECONDS)
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # takes effect in a new file only
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a crash may lose the last writes, never the file
            db.execute(f"PRAGMA cache_size = -{CACHE_KB}")
            db.executescript(SCHEMA)
            return db
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            if _damaged(exc) and not damaged_once:
                _remove_database(path)
                return self._opened(damaged_once=True)
            log.warning("the facts store %s cannot be used (%s): every fact is computed", path, exc)
            return None

    def _failed(self, exc: sqlite3.Error) -> None:
        """A damaged file is started again; anything else (another process's write lasting too long, a
        full disk) costs only what was not read or written."""
        if _damaged(exc):
            log.warning("the facts store %s is damaged (%s): started again", self.root / DB_NAME, exc)
            self.close()
            _remove_database(self.root / DB_NAME)
        else:
            log.info("the facts store %s: %s", self.root / DB_NAME, exc)


def _damaged(exc: Exception) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in _DAMAGED


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection):
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _remove_database(path: Path) -> None:
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        with contextlib.suppress(OSError):
            (path.parent / name).unlink()


def _remove_entry_files(root: Path) -> None:
    """Earlier versions kept each entry in a file of its own, under directories named by two hex digits:
    those files are never read again."""
    for entry in os.scandir(root):
        if len(entry.name) == 2 and entry.is_dir() and all(c in "0123456789abcdef" for c in entry.name):
            shutil.rmtree(entry.path, ignore_errors=True)


_STORES: weakref.WeakSet[Entries] = weakref.WeakSet()


def _before_fork() -> None:
    for entries in list(_STORES):
        entries.close()


def _in_forked_copy() -> None:
    for entries in list(_STORES):
        entries._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_in_forked_copy)
