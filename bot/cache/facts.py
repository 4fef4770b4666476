"""Upstream facts kept across analyses, addressed by content.

What the review reads out of an upstream blob (its comment-free code, its CMake readings) or a pair of
them (their diff, which hunks change code) depends on nothing but those blobs and the code that reads
them. A re-check of the same refs (another push to the pull request, `/llama recheck`, a second pull
request on the same bump) finds every such fact here instead of computing it again.

An entry's key is the extractor's name, its version, a fingerprint of the code it runs, and the
ids of its inputs (git blob or tree ids, or the SHA-1 of a text); never a report. The entries live in
one SQLite file (`bot.cache.entries`); each carries the CRC-32 of its payload and its own key, and one
that is truncated, corrupt or for another key is a miss, and is removed. The store is bounded on disk:
when its file outgrows the bound, whichever process wrote it, the least recently used entries go first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import io
import os
import pickle
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from bot.cache.entries import Entries
from bot.cache.imports import code_of

T = TypeVar("T")
S = TypeVar("S", str, bytes)

FACTS_DIR = "facts"
DEFAULT_MAX_MB = 256
MAX_MB_SETTING = "LLAMA_BOT_FACTS_MAX_MB"
MAGIC = b"llama-bot fact 2\n"
ROOT = Path(__file__).resolve().parent.parent  # bot/: an extractor's sources are named from here


class _PlainUnpickler(pickle.Unpickler):
    """Loads only builtin containers and llama-bot's own data classes: an entry is read, never run."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in ("frozenset", "set", "tuple", "list", "dict", "range"):
            return super().find_class(module, name)
        if module.startswith("bot.") and name[:1].isupper():
            found = super().find_class(module, name)
            if isinstance(found, type) and (dataclasses.is_dataclass(found) or issubclass(found, tuple)):
                return found  # a data class or a named tuple: its constructor only keeps its fields
        raise pickle.UnpicklingError(f"{module}.{name} is not a plain fact")


@dataclass(frozen=True)
class Extractor:
    """One kind of fact: its name, its version (raised when its meaning changes) and the module that computes
    it. The fingerprint covers the sources of that module and of every llama-bot module it imports, and the
    versions of the installed packages they import (a change to any of them is a new fingerprint: the old
    entries miss)."""

    name: str
    version: int
    module: str  # the computing module's __name__

    @property
    def fingerprint(self) -> str:
        return _fingerprint(self.module)


@cache
def _fingerprint(module: str) -> str:
    sources, packages = code_of(module)
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.encode() + b"\0" + _source_digest(source) + b"\0")
    for package in packages:
        digest.update(f"{package}=={_version(package)}\0".encode())
    return digest.hexdigest()[:16]


@cache
def _source_digest(source: str) -> bytes:
    """A source file's digest, read once however many extractors name it."""
    return hashlib.sha256((ROOT / source).read_bytes()).digest()


@cache
def _version(module: str) -> str:
    """An installed package's version, looked up once: the name of the dist-info directory beside the module
    it imports, as pip installs it (importlib.metadata reads every installed package's metadata, 11 ms for
    five packages), else the version of the distribution metadata says provides it."""
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.origin is not None:
        installed = Path(spec.origin).parent.parent
        prefix, suffix = module.lower() + "-", ".dist-info"
        with contextlib.suppress(OSError):
            for entry in os.scandir(installed):
                name = entry.name.lower()
                if name.startswith(prefix) and name.endswith(suffix):
                    return entry.name[len(prefix) : -len(suffix)]
    from importlib import metadata

    for distribution in metadata.packages_distributions().get(module, ()):
        return metadata.version(distribution)
    return "unknown"


def text_id(text: str) -> str:
    """A text's content address, where no blob id is at hand."""
    return "text:" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def texts_id(texts: Mapping[str, str]) -> str:
    """One content address for named texts (path -> text): their paths and each text's."""
    return text_id("\n".join(f"{path}\0{text_id(texts[path])}" for path in sorted(texts)))


def bytes_id(data: bytes) -> str:
    """The content address of bytes: their git blob id, as the upstream's tree names them."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FactStore:
    """The facts under `root`, at most `max_bytes` of them; `hits` and `misses` count this process's
    look-ups."""

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_MB << 20) -> None:
        self.root = root
        self.hits = 0
        self.misses = 0
        self._entries = Entries(root, max_bytes)

    def get(
        self, extractor: Extractor, key: tuple[str, ...], pick: Callable[[Any], Any] | None = None
    ) -> tuple[bool, Any]:
        """(True, the fact) when the store holds it whole, else (False, None). `pick` makes the fact of what
        is held (a reading among those kept, say): None from it is a miss too."""
        entry_id, label = _where(extractor, key)
        data = self._entries.read(entry_id)
        value = _CORRUPT if data is None else _decoded(data, label)
        if value is _CORRUPT:
            self.misses += 1
            if data is not None:
                self._entries.drop(entry_id)
            return False, None
        if pick is not None and (value := pick(value)) is None:
            self.misses += 1
            return False, None
        self.hits += 1
        return True, value

    def put(self, extractor: Extractor, key: tuple[str, ...], value: Any) -> None:
        """Keeps a fact (written with others; a full disk or an unwritable store only costs the next run its
        time)."""
        entry_id, label = _where(extractor, key)
        payload = pickle.dumps((label, value), protocol=5)
        self._entries.write(entry_id, MAGIC + checksum(payload) + b"\n" + payload)

    def remembered(self, extractor: Extractor, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """The fact, from the store or computed (and kept)."""
        found, value = self.get(extractor, key)
        if found:
            return value
        value = compute()
        self.put(extractor, key, value)
        return value

    def flush(self) -> None:
        """Writes the facts kept since the last flush."""
        self._entries.flush()

    def close(self) -> None:
        """Writes what waits and lets the file go (a later use opens it again)."""
        self._entries.flush()
        self._entries.close()


def _where(extractor: Extractor, key: tuple[str, ...]) -> tuple[bytes, str]:
    """An entry's id and the label it carries: the extractor's name, version and fingerprint, and the key."""
    label = "\0".join((extractor.name, str(extractor.version), extractor.fingerprint, *key))
    return hashlib.sha256(label.encode("utf-8", "surrogatepass")).digest(), label


_CORRUPT = object()


def checksum(payload: bytes) -> bytes:
    """What an entry's payload is checked against: CRC-32 finds a torn or altered write (the entry's key, in
    it, finds a foreign one) at a few times the speed of a cryptographic digest, over 12 MB a re-check."""
    return b"%08x" % zlib.crc32(payload)


def _decoded(data: bytes, label: str) -> Any:
    """The value an entry holds for `label`, or _CORRUPT for a truncated, altered or foreign entry."""
    if not data.startswith(MAGIC):
        return _CORRUPT
    stored, _, payload = data[len(MAGIC) :].partition(b"\n")
    if checksum(payload) != stored:
        return _CORRUPT
    try:
        stored_label, value = _PlainUnpickler(io.BytesIO(payload)).load()
    except Exception:  # noqa: BLE001 - whatever loading it raises (a class since renamed, an opcode's length
        # past what memory holds, a memo index out of range), a checksummed payload that does not load is no fact
        return _CORRUPT
    return value if stored_label == label else _CORRUPT


def store_in(data_dir: Path) -> FactStore:
    """The store under a data directory, bounded by LLAMA_BOT_FACTS_MAX_MB (a bad value: the default)."""
    try:
        max_mb = int(os.environ.get(MAX_MB_SETTING, DEFAULT_MAX_MB))
    except ValueError:
        max_mb = DEFAULT_MAX_MB
    return FactStore(Path(data_dir) / FACTS_DIR, max(max_mb, 1) << 20)


_active: FactStore | None = None


@contextlib.contextmanager
def using(store: FactStore | None) -> Iterator[FactStore | None]:
    """Makes `store` the one extractors consult for the duration (None: compute every fact)."""
    global _active
    previous, _active = _active, store
    try:
        yield store
    finally:
        _active = previous
        if store is not None:
            store.flush()


def remembered(extractor: Extractor, key: tuple[str, ...], compute: Callable[[], T]) -> T:
    """The fact from the store in use, or computed when there is none."""
    if _active is None:
        return compute()
    return _active.remembered(extractor, key, compute)


def by_content(extractor: Extractor) -> Callable[[Callable[[S], T]], Callable[[S], T]]:
    """A reading of one text (or blob's bytes) made a fact kept under its content: the store in use serves
    it to any later reading of the same content by the same code."""

    def keep(read: Callable[[S], T]) -> Callable[[S], T]:
        @functools.wraps(read)
        def kept(source: S) -> T:
            key = bytes_id(source) if isinstance(source, bytes) else text_id(source)
            return remembered(extractor, (key,), lambda: read(source))

        return kept

    return keep


def in_use() -> bool:
    """Whether a store is in use (else every fact is computed, and none kept)."""
    return _active is not None


def looked_up() -> tuple[int, int]:
    """The store in use's (hits, misses) so far; (0, 0) when none is in use."""
    return (_active.hits, _active.misses) if _active is not None else (0, 0)


def count_looked_up(hits: int, misses: int) -> None:
    """Adds the look-ups of a forked copy of this process to the counts of the store in use."""
    if _active is not None:
        _active.hits += hits
        _active.misses += misses


def flush() -> None:
    """Writes what the store in use keeps waiting (a forked copy does before it answers)."""
    if _active is not None:
        _active.flush()


def get(
    extractor: Extractor, key: tuple[str, ...], pick: Callable[[Any], Any] | None = None
) -> tuple[bool, Any]:
    """(True, the fact) from the store in use; (False, None) when it lacks it, `pick` finds nothing in what
    it holds, or none is in use."""
    return _active.get(extractor, key, pick) if _active is not None else (False, None)


def put(extractor: Extractor, key: tuple[str, ...], value: Any) -> None:
    """Keeps a fact in the store in use, if any."""
    if _active is not None:
        _active.put(extractor, key, value)
