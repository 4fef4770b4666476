"""What the readers of the consumer model share: the option names, path globs and patterns, and small helpers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from tree_sitter import Node

from bot.cache import facts
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.source import globs

BACKEND_ROOT = "ggml/src/"


CPP_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc", ".cu", ".cuh", ".m", ".mm")


OLLAMA_CMAKE = globs("CMakeLists.txt", "**/CMakeLists.txt", "**/*.cmake")


# Ollama's files that run build commands, known by their kind wherever they are: Dockerfiles, CI workflows
# and other YAML, shell, PowerShell and batch scripts
COMMAND_LINE_KINDS = ("Dockerfile", "Dockerfile.*", "*.yml", "*.yaml", "*.sh", "*.ps1", "*.bat", "*.cmd")
OLLAMA_COMMAND_LINES = globs(*COMMAND_LINE_KINDS, *(f"**/{kind}" for kind in COMMAND_LINE_KINDS))


PARTIAL_SETTERS = (
    "CMakePresets.json",
    ".yml",
    ".yaml",
    "Dockerfile",
)  # files setting a value for some builds only


ON_VALUES = {"ON", "TRUE", "YES", "Y", "1"}


_OFF = {"OFF", "FALSE", "NO", "N", "0", "", "IGNORE", "NOTFOUND"}


SETTABLE = re.compile(r"(?:GGML|LLAMA)_[A-Z0-9_]+")


DEFINE = re.compile(r"(?<![\w-])-D([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s\"'\\]*)")


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


URL_PATH = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s]*(/[^\s?#\"]*)")


JSON_TAG = re.compile(r'\bjson:"([^",]*)')


CMAKE_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\(|\)|[^\s()"]+')


@dataclass(frozen=True)
class OptionSetting:
    value: str
    ref: LocalRef


def go_string(node: Node) -> str:
    """The value of a Go string literal (interpreted or raw)."""
    text = node_text(node)
    if node.type == "raw_string_literal":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text[1:-1]


def text_of(files: Mapping[str, str], path: str) -> str | None:
    try:
        return files[path]
    except (KeyError, LookupError):
        return None


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def truth_of(value: str) -> bool | None:
    upper = value.strip().strip('"').upper()
    if upper in ON_VALUES:
        return True
    if upper in _OFF or upper.endswith("-NOTFOUND"):
        return False
    return None


Refs = dict[str, dict[LocalRef, None]]  # name -> its places, in order, each once


def add_ref(found: Refs, key: str, ref: LocalRef) -> None:
    found.setdefault(key, {})[ref] = None


def frozen_refs(found: Refs) -> dict[str, tuple[LocalRef, ...]]:
    return {k: tuple(v) for k, v in sorted(found.items())}


class TextsRead(Mapping[str, str]):
    """A tree's texts, the id of each one read kept (`text_id_in`; None for a path that is not there):
    another tree whose listing and those texts are the same gives the same answers."""

    def __init__(self, texts: Mapping[str, str]):
        self.texts = texts
        self.read: dict[str, str | None] = {}

    def __getitem__(self, path: str) -> str:
        try:
            text = self.texts[path]
        except KeyError:
            self.read[path] = None
            raise
        self.read[path] = text_id_in(self.texts, path)
        return text

    def source_id(self, path: str) -> str | None:
        """The id of a path's text in the tree read (`text_id_in`), noted as read."""
        self.read[path] = found = text_id_in(self.texts, path)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)


T = TypeVar("T")


def remembered_reading(
    extractor: facts.Extractor,
    key: tuple[str, ...],
    texts: Mapping[str, str],
    compute: Callable[[Mapping[str, str]], T],
) -> T:
    """What `compute` makes of `texts`, from the facts store when each text it read there reads the same in
    `texts` (a path that was not there still is not); else computed, and kept with the ids of what it read."""
    return remembered_readings(extractor, key, (texts,), compute)


def remembered_readings(
    extractor: facts.Extractor,
    key: tuple[str, ...],
    trees: tuple[Mapping[str, str], ...],
    compute: Callable[..., T],
) -> T:
    """What `compute` makes of the trees (given one argument per tree), from the facts store when each text
    it read there reads the same in its tree now; else computed, and kept with the ids of what it read of
    each. The key names what else the answer depends on (the trees' listings, say)."""
    found, value = kept_reading(extractor, key, trees)
    if found:
        return value
    recorded = tuple(TextsRead(texts) for texts in trees)
    value = compute(*recorded)
    facts.put(extractor, key, (tuple(r.read for r in recorded), value))
    return value


def kept_reading(
    extractor: facts.Extractor, key: tuple[str, ...], trees: tuple[Mapping[str, str], ...]
) -> tuple[bool, Any]:
    """(True, what `remembered_readings` kept under `key`) when each text it was read from reads the same in
    its tree now; (False, None) otherwise."""

    def pick(kept: tuple[tuple[dict[str, str | None], ...], Any]) -> tuple[tuple, Any] | None:
        reads = kept[0]
        same = len(reads) == len(trees) and all(
            text_id_in(texts, path) == read
            for texts, read_of in zip(trees, reads)
            for path, read in read_of.items()
        )
        return kept if same else None  # the entry, not its value: a value may be None

    found, kept = facts.get(extractor, key, pick)
    return (True, kept[1]) if found else (False, None)


def text_id_in(texts: Mapping[str, str], path: str) -> str | None:
    """The id of a path's text (None when it is not there): of the bytes it is read from, where the tree
    tells it (a snapshot's texts: comparing needs no comment stripping), else of the text."""
    source_id = getattr(texts, "source_id", None)
    if source_id is not None:
        return source_id(path)
    try:
        return facts.text_id(texts[path])
    except KeyError:
        return None
