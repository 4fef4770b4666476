"""The wire between Ollama and llama-server, checked at both refs: the request fields Ollama sends against the
request parsing of the endpoints it calls (`requests`), the fields it decodes against the functions that write
them (`payloads`), the values it compares against the values written (`compared`), its stream reader's
patterns against the frames written (`frames`). Ollama's side comes from the contract inventory; upstream's
from the server sources at the two refs (`servercode`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from bot.cache import facts
from bot.model import LocalRef
from bot.review import compared, emptied, frames, payloads, requestdefaults, requests
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts import WIRE_GROUPS, Contracts
from bot.review.consumers.contracts.model import OutputPattern, WireField
from bot.review.consumers.gofields import only_skips, reading, with_field_lines, writing
from bot.review.consumers.shared import kept_reading, remembered_readings
from bot.review.servercode import ServerCode, read_server

_FIELD_NAME = re.compile(r"\s*([A-Za-z_]\w*)")


def server_texts(
    paths: Iterable[str], read_new: Callable[[str], str | None], changes: Iterable[FileChange]
) -> tuple[dict[str, str], dict[str, str]]:
    """The server sources at the old and the new ref: the new ref's files, the changed ones as they were."""
    new = {p: text for p in paths if (text := read_new(p)) is not None}
    changed = list(changes)
    old = {p: text for p, text in new.items() if p not in {c.path for c in changed}}
    return old | {c.old_path: c.old_code for c in changed if c.old_path}, new


WIRE = facts.Extractor("wire-drafts", 9, __name__)


def wire_drafts(old: Mapping[str, str], new: Mapping[str, str], contracts: Contracts) -> list[Draft]:
    """Every wire item of one bump: `old` and `new` are the server sources at each ref (path -> code). They
    depend on those texts, the inventory's wire groups and the texts of Ollama's tree the check reads (its
    documentation, its Go structs) alone: kept with all of them, a re-check reads Ollama's texts again and
    compares nothing again."""
    if not contracts.calls_upstream:
        return []
    groups = _groups(contracts)
    return remembered_readings(
        WIRE,
        _key(old, new, groups, contracts),
        (contracts.ollama,),
        lambda ollama: _drafts(old, new, groups, ollama),
    )


def kept_drafts(
    texts: Callable[[], tuple[dict[str, str], dict[str, str]]], contracts: Contracts
) -> list[Draft] | None:
    """The wire items a review of the same server sources (`texts()`: old, new) kept; None when there are
    none to be had without reading Ollama's Go program (its wire groups were not kept; the sources are then
    not read either) or none were kept."""
    if not contracts.holds(WIRE_GROUPS):
        return None
    if not contracts.calls_upstream:
        return []
    found, drafts = kept_reading(WIRE, _key(*texts(), _groups(contracts), contracts), (contracts.ollama,))
    return drafts if found else None


_Groups = tuple[
    tuple[WireField, ...],
    tuple[WireField, ...],
    tuple[OutputPattern, ...],
    tuple[tuple[str, tuple[LocalRef, ...]], ...],
]


def _groups(contracts: Contracts) -> _Groups:
    """The inventory's groups the check reads: the request and response fields, the output patterns, and
    where Ollama calls each endpoint."""
    return (
        contracts.request_fields,
        contracts.response_fields,
        contracts.output_patterns,
        tuple(sorted(contracts.endpoints.items())),
    )


def _key(
    old: Mapping[str, str], new: Mapping[str, str], groups: _Groups, contracts: Contracts
) -> tuple[str, ...]:
    return (
        facts.texts_id(old),
        facts.texts_id(new),
        facts.text_id(repr(groups)),  # plain data whose repr says all of it, in an order of its own
        facts.text_id("\n".join(contracts.paths)),
    )


def _drafts(
    old: Mapping[str, str],
    new: Mapping[str, str],
    groups: _Groups,
    ollama: Mapping[str, str],
) -> list[Draft]:
    request_fields, response_fields, patterns, endpoints = groups
    old_code, new_code = server_code(old), server_code(new)
    drafts = requests.request_drafts(
        old_code, new_code, request_fields, requests.Documentation(ollama).values
    )
    decoded = payloads.decoded_fields(response_fields)
    routes = {f.endpoint.split(" ", 1)[-1] for f in (*request_fields, *response_fields)}
    after = payloads.Writers(new_code, decoded, routes) if decoded else None
    drafts += requestdefaults.default_drafts(
        old_code, new_code, request_fields, ollama, after, dict(endpoints)
    )
    drafts = [with_field_lines(d, ollama, writing) for d in drafts]
    if after is not None:
        before = payloads.Writers(old_code, decoded, routes)
        decoding = payloads.field_drafts(before, after, decoded)
        decoding += compared.value_drafts(before, after, decoded, patterns, _go_name(ollama))
        decoding += emptied.emptied_drafts(before, after, decoded)
        drafts += [with_field_lines(d, ollama, reading) for d in decoding]
    skipped = lambda p: bool(p.used_at) and all(only_skips(ollama, ref) for ref in p.used_at)
    return drafts + frames.frame_drafts(old_code, new_code, patterns, skipped)


_RECENT: list[ServerCode] = []  # the last few server sources read, for consecutive reviews of one ref


def server_code(texts: Mapping[str, str]) -> ServerCode:
    """The server sources read, once for texts read before (the old ref of consecutive reviews)."""
    for code in _RECENT:
        if code.texts == texts:
            return code
    _RECENT[:] = [read_server(texts), *_RECENT[:1]]
    return _RECENT[0]


def _go_name(ollama: Mapping[str, str]):
    """The Go name of the struct field a decoded field is declared as (the first name on its line)."""

    def name(f: payloads.Decoded) -> str:
        lines = (ollama.get(f.ref.path) or "").split("\n")
        m = _FIELD_NAME.match(lines[f.ref.line - 1]) if 0 < f.ref.line <= len(lines) else None
        return m[1] if m else ""

    return name
