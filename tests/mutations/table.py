"""The mutation tables (mutations.toml, and fresh.toml to fresh8.toml: cases written by someone who had not read the review,
scored once before any fix) as typed data, checked against the texts they edit and cite."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "mutations.toml"
TABLES = (
    TABLE,
    *(
        TABLE.with_name(f"{name}.toml")
        for name in (
            "fresh",
            "fresh2",
            "fresh3",
            "fresh4",
            "fresh5",
            "fresh6",
            "fresh7",
            "fresh8",
            "fresh9",
            "fresh10",
            "fresh11",
        )
    ),
)
AREAS = ("build", "discovery", "server", "streaming", "models")
_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class TableError(Exception):
    """The table is malformed or no longer fits the texts it edits or cites: one line naming the mutation."""


@dataclass(frozen=True)
class Edit:
    path: str
    search: str
    replace: str
    count: int = 1  # how many times `search` occurs in the file; each is replaced


@dataclass(frozen=True)
class Consumer:
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Mutation:
    id: str
    area: str
    breaking: bool
    what: str
    edits: tuple[Edit, ...]
    breaks: str = ""
    names: tuple[str, ...] = ()  # what a finding must name (any one)
    consumers: tuple[Consumer, ...] = ()  # the Ollama lines a finding must point at (any one)
    consumer_text: tuple[str, ...] = ()  # each consumers line holds one of these

    def apply(self, read: Callable[[str], str]) -> dict[str, str]:
        """The edited files' new texts, from `read(path)` (the old texts); each search text must occur as
        many times as its edit says, in the text the edits before it left."""
        texts: dict[str, str] = {}
        for edit in self.edits:
            text = texts[edit.path] if edit.path in texts else read(edit.path)
            count = text.count(edit.search)
            if count != edit.count:
                raise TableError(
                    f"{self.id}: the search text occurs {count} times in {edit.path}, not {edit.count}"
                )
            texts[edit.path] = text.replace(edit.search, edit.replace)
        return texts


def load(paths: tuple[Path, ...] = TABLES) -> list[Mutation]:
    """Every mutation of the tables, in order; TableError for a malformed entry."""
    entries = []
    for path in paths:
        try:
            entries += tomllib.loads(path.read_text())["mutation"]
        except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
            raise TableError(f"{path}: {exc}") from None
    mutations = [_mutation(entry) for entry in entries]
    seen: set[str] = set()
    for m in mutations:
        if m.id in seen:
            raise TableError(f"{m.id}: the id is used twice")
        seen.add(m.id)
    return mutations


def _mutation(entry: dict) -> Mutation:
    ident = str(entry.get("id", ""))
    if not _ID.fullmatch(ident):
        raise TableError(f"{ident!r}: an id is kebab-case")
    if entry.get("area") not in AREAS:
        raise TableError(f"{ident}: area must be one of {', '.join(AREAS)}")
    text = entry.get("consumer_text", ())
    return _checked(
        Mutation(
            id=ident,
            area=entry["area"],
            breaking=bool(entry.get("breaking")),
            what=str(entry.get("what", "")),
            edits=tuple(
                Edit(e["path"], e["search"], e["replace"], e.get("count", 1)) for e in entry.get("edit", [])
            ),
            breaks=str(entry.get("breaks", "")),
            names=tuple(entry.get("names", ())),
            consumers=tuple(_consumer(ident, c) for c in entry.get("consumers", ())),
            consumer_text=(text,) if isinstance(text, str) else tuple(text),
        )
    )


def _checked(m: Mutation) -> Mutation:
    """The mutation, when it has edits and, if breaking, says what breaks, where and what to name."""
    if not m.edits or any(not e.search or e.search == e.replace for e in m.edits):
        raise TableError(f"{m.id}: every edit needs a search text and a different replacement")
    described = m.breaks and m.names and m.consumers and m.consumer_text
    if m.breaking and not described:
        raise TableError(
            f"{m.id}: a breaking mutation says what breaks, its names, consumers and consumer_text"
        )
    return m


def _consumer(ident: str, cited: str) -> Consumer:
    path, _, line = cited.rpartition(":")
    if not path or not line.isdigit():
        raise TableError(f"{ident}: consumer {cited!r} is not path:line")
    return Consumer(path, int(line))


def check_citations(mutations: list[Mutation], ollama: Mapping[str, str]) -> None:
    """Each cited Ollama line exists and holds one of its mutation's consumer texts."""
    for m in mutations:
        for c in m.consumers:
            lines = ollama.get(c.path, "").split("\n")
            line = lines[c.line - 1] if 0 < c.line <= len(lines) else ""
            if not any(t in line for t in m.consumer_text):
                raise TableError(
                    f"{m.id}: {c} does not hold {' or '.join(map(repr, m.consumer_text))} (it reads {line.strip()!r})"
                )
