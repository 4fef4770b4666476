"""The facts store's entries in one SQLite file: id -> bytes, the least recently used out past a bound.

One file rather than a file per entry: a first analysis keeps about a thousand entries, and creating as
many files cost more than computing some of them. Writes wait in memory (about a megabyte) and go in one
transaction when they outgrow that or at `flush`, so a process holds the write lock for milliseconds,
never for an analysis; other processes (the service's jobs, a review's forked copy) read and write the
same file meanwhile (write-ahead log).

The bound is on the file (the SQLite file and its write-ahead log), whichever process wrote to it: after each
write the writer looks at the file's size, and one over the bound loses its least recently used entries.

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
KEPT_SHARE = 0.75  # an eviction frees the file down to this share of its bound
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
# The entries used the longest ago whose data come to at least `?` bytes (at least one entry).
REMOVE_LEAST_RECENTLY_USED = """
DELETE FROM entry WHERE id IN (
    SELECT id FROM (SELECT id, size, sum(size) OVER (ORDER BY used, id) AS running FROM entry)
    WHERE running - size < ?
)
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
        used, data = row
        if not (isinstance(used, int) and isinstance(data, bytes)):  # not written by a store: never read
            self.drop(entry_id)
            return None
        if used < time.time() - USED_GRAIN:
            self._used.add(entry_id)
        return data

    def write(self, entry_id: bytes, data: bytes) -> None:
        """Keeps the entry: written with the others waiting, now if they outgrow WAITING_BYTES."""
        if self._connection() is None:
            return
        self._waiting_bytes += len(data) - len(self._waiting.get(entry_id, b""))
        self._waiting[entry_id] = data
        if self._waiting_bytes > WAITING_BYTES:
            self.flush()

    def drop(self, entry_id: bytes) -> None:
        """Removes a damaged entry, or a row that is no entry."""
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
        another process holding the file too long only costs the next analysis its time); then keeps the
        file within its bound."""
        waiting, used = self._waiting, self._used
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
        self._keep_bound()

    def _keep_bound(self) -> None:
        """Brings a file over its bound back under it: the write-ahead log folded into the file, then, if that
        is not enough, the least recently used entries removed down to KEPT_SHARE of the bound. Two `stat`
        calls when the file is within it, once a written batch."""
        db = self._connection()
        if db is None or self.file_bytes() <= self.max_bytes:
            return
        try:
            _checkpoint(db)
            if self.file_bytes() > self.max_bytes:
                _remove_least_recently_used(db, int(self.max_bytes * KEPT_SHARE))
                _checkpoint(db)
        except sqlite3.Error as exc:
            self._failed(exc)

    def file_bytes(self) -> int:
        """The size of the store on disk: the SQLite file and its write-ahead log."""
        path = self.root / DB_NAME
        return sum(_size(file) for file in (path, path.with_name(f"{DB_NAME}-wal")))

    def close(self) -> None:
        """Closes the connection (the waiting entries stay waiting; the next use opens it again)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def _forked(self) -> None:
        """In a forked copy: what waited is the parent's to write, and readable here."""
        self._inherited = {**self._inherited, **self._waiting}
        self._waiting, self._used, self._waiting_bytes = {}, set(), 0

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


def _remove_least_recently_used(db: sqlite3.Connection, target: int) -> None:
    """Removes the entries used the longest ago until the pages in use come to at most `target` bytes (another
    process may have done it meanwhile), and gives the pages freed back to the file system."""
    (page_size,) = db.execute("PRAGMA page_size").fetchone()
    while True:
        with _transaction(db):
            (pages,) = db.execute("PRAGMA page_count").fetchone()
            (free,) = db.execute("PRAGMA freelist_count").fetchone()
            (stored,) = db.execute("SELECT total(size) FROM entry").fetchone()
            in_use = (pages - free) * page_size
            if in_use <= target or not stored:
                break
            # the entries' data are that share of the pages in use: as much of the excess is removed
            db.execute(REMOVE_LEAST_RECENTLY_USED, ((in_use - target) * stored / in_use,))
    # every free page, one a step: executescript steps it to the end, where `execute` steps it once
    db.executescript("PRAGMA incremental_vacuum")


def _checkpoint(db: sqlite3.Connection) -> None:
    """Folds the write-ahead log into the file and empties it (a reader in the middle of a read holds it back
    for BUSY_SECONDS at most; the log then stays as it is, and the next look tries again)."""
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


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
