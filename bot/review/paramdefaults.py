"""The defaults of llama-server's parameters (the default member initializers of the structs its argument
table fills) at both refs, where Ollama relies on them by leaving something out.

Ollama relies on a default in two ways: it passes a flag on some starts only (the default holds on the
others), or it leaves a request field out (never sending it, or only sometimes) while it sends other fields of
the same parameter group to the same endpoint. A default that changed there changes what Ollama gets without
any change on its side; a default of something Ollama never touches is not its concern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.cache import facts
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.cppreach import Member, defines, member_paths, resolved, structs
from bot.review.flags import Flag
from bot.review.source import opening_line

HANDLER_PARAMS = re.compile(r"^\[[^\]]*\]\s*\(\s*(?:struct\s+)?([\w:]+)\s*&\s*(\w+)")
_KEY = re.compile(r'"([a-z_][a-z0-9_]*)"')
_OPENING = r"(?:\bstruct\b|\bmap\s*\[[^\]]*\][\w.*\[\]]*)\s*\{"  # `struct {`, `map[string][]int{`
_DECLARING = re.compile(_OPENING + r"\s*$")
_DECLARED_HERE = re.compile(_OPENING + r"\s*\"")  # a literal opened on the field's own line
_FUNCTION = re.compile(r"^func\b")

Path = tuple[str, ...]


@dataclass(frozen=True)
class Changed:
    """A member whose default changed, with the paths from the argument table's struct that reach it."""

    before: Member
    after: Member
    old_value: str  # resolved through the header's macros
    new_value: str
    header: str  # the header's path at the new ref
    paths: tuple[Path, ...]
    # members of its group (`dry_*` for `dry_base`) that upstream's comments say are off by default
    switches: tuple[str, ...] = ()


def changed_defaults(
    old_headers: Mapping[str, str],
    new_headers: Mapping[str, str],
    roots: Iterable[str],
    known: Callable[[], Mapping[str, str]],
    written: Mapping[str, str] | None = None,
) -> list[Changed]:
    """The members of the changed headers whose (macro-resolved) default differs between the refs, each with
    its paths from the `roots` structs (the struct tables of the `known` headers, path -> code, read only once
    a default changed, help reach them) and, from the headers as `written` (comments kept), the members of its
    group that are off by default."""
    changes = [
        (header, change)
        for header, new_code in new_headers.items()
        if header in old_headers
        for change in _header_changes(header, old_headers[header], new_code)
    ]
    paths_of = _member_paths(roots, [*known().values(), *new_headers.values()]) if changes else {}
    found = []
    for header, change in changes:
        paths = paths_of.get((change.after.struct, change.after.name))
        if paths:
            raw = (written or {}).get(header, "").split("\n")
            members = structs(new_headers[header]).get(change.after.struct, {})
            found.append(replace(change, paths=tuple(paths), switches=_switches(change.after, members, raw)))
    return found


def _member_paths(roots: Iterable[str], headers: Iterable[str]) -> dict[tuple[str, str], list[Path]]:
    """(struct, member) -> the paths from the roots that reach it, over the structs of the headers."""
    tables: dict[str, dict[str, Member]] = {}
    for code in headers:
        tables.update(structs(code))
    paths_of: dict[tuple[str, str], list[Path]] = {}
    for root in roots:
        for path, member in member_paths(tables, root).items():
            paths_of.setdefault((member.struct, member.name), []).append(path)
    return paths_of


_DISABLED_AT = re.compile(r"(-?\d+(?:\.\d*)?)\s*=\s*disabl", re.IGNORECASE)


def _switches(member: Member, members: Mapping[str, Member], raw: Sequence[str]) -> tuple[str, ...]:
    """The other members of a member's group (its name's first word: `dry_multiplier` for `dry_base`) whose
    default upstream's own comment calls the value that disables it (`0.0f; // 0.0 = disabled`)."""
    word = member.name.split("_", 1)[0]
    found = []
    for name, other in members.items():
        if name == member.name or not (name == word or name.startswith(word + "_")):
            continue
        comment = raw[other.line - 1].partition("//")[2] if 0 < other.line <= len(raw) else ""
        if any(_number(value) == _number(other.default) for value in _DISABLED_AT.findall(comment)):
            found.append(name)
    return tuple(found)


def _number(text: str) -> float | None:
    try:
        return float(text.rstrip("fFlLuU"))
    except ValueError:
        return None


DEFAULTS_CHANGED = facts.Extractor("defaults-changed", 1, __name__)


def _header_changes(header: str, old_code: str, new_code: str) -> list[Changed]:
    """The members of one header whose default differs between the refs (no paths yet), kept by the two
    texts."""
    key = (header, facts.text_id(old_code), facts.text_id(new_code))
    return facts.remembered(DEFAULTS_CHANGED, key, lambda: _read_header_changes(header, old_code, new_code))


def _read_header_changes(header: str, old_code: str, new_code: str) -> list[Changed]:
    old_structs, new_structs = structs(old_code), structs(new_code)
    old_macros, new_macros = defines(old_code), defines(new_code)
    found = []
    for struct, members in new_structs.items():
        for name, after in members.items():
            before = old_structs.get(struct, {}).get(name)
            if before is None or not before.default or not after.default:
                continue
            old_value, new_value = resolved(before.default, old_macros), resolved(after.default, new_macros)
            if not same_value(old_value, new_value):
                found.append(Changed(before, after, old_value, new_value, header, ()))
    return found


def same_value(a: str, b: str) -> bool:
    """Whether two initializers are the same value written alike (`0.0f`/`0.00f`, spacing)."""
    return _normal(a) == _normal(b)


def _normal(value: str) -> str:
    value = re.sub(r"\s+", "", value)
    return re.sub(r"(\d+\.\d*?)0*[fF]?\b", lambda m: m[1].rstrip("."), value)


def handler_roots(table: Mapping[str, Flag]) -> dict[str, str]:
    """The struct each handler of the argument table fills, by the name its lambda gives it."""
    roots: dict[str, str] = {}
    for flag in table.values():
        m = HANDLER_PARAMS.match(flag.handler)
        if m:
            roots.setdefault(m[2], m[1].split("::")[-1])
    return roots


def assigning_flags(table: Mapping[str, Flag], path: Path) -> list[Flag]:
    """The entries whose handler writes the member at `path` of the struct it fills."""
    found: dict[int, Flag] = {}
    for flag in table.values():
        m = HANDLER_PARAMS.match(flag.handler)
        if m is None or id(flag) in found:
            continue
        target = r"\s*\.\s*".join(map(re.escape, (m[2], *path)))
        if re.search(
            rf"\b{target}\s*(?:=(?!=)|\.\s*(?:push_back|insert|assign|emplace_back)\b)", flag.handler
        ):
            found[id(flag)] = flag
    return list(found.values())


LOCAL_REACH = 6  # lines below a local given a member's value where the request may overwrite the local


def request_keys(sources: Mapping[str, str], path: Path) -> set[str]:
    """The JSON keys upstream's server code pairs with the member at `path` on one line (a request field it
    reads into it, or writes from it), or reads into a local the member's value initializes (`int n =
    params.n; if (body.count("n")) { n = body.at("n"); }`)."""
    chain = r"\s*(?:\.|->)\s*".join(map(re.escape, path))
    member = re.compile(rf"(?:\.|->)\s*{chain}\b" if len(path) == 1 else rf"\b{chain}\b")
    local = re.compile(rf"\b(\w+)\s*=\s*\w+\s*(?:\.|->)\s*{chain}\s*;")
    keys: set[str] = set()
    for code in sources.values():
        if path[-1] not in code:
            continue
        lines = code.split("\n")
        for n, line in enumerate(lines):
            if member.search(line):
                keys.update(_KEY.findall(line)[:1])
                given = local.search(line)
                keys.update(_overwritten(given[1], lines[n + 1 : n + 1 + LOCAL_REACH]) if given else ())
    return keys


def _overwritten(name: str, below: list[str]) -> list[str]:
    """The first key of each line below that gives the local a value from the request."""
    assigns = re.compile(rf"(?<![\w.>]){re.escape(name)}\s*=(?!=)")
    return [k for line in below if assigns.search(line) for k in _KEY.findall(line)[:1]]


@dataclass(frozen=True)
class FlagUse:
    """A flag Ollama passes, as the inventory reads it."""

    name: str
    always: bool
    refs: tuple[LocalRef, ...]


def flag_drafts(item: Changed, flags: Sequence[Flag], passed: Mapping[str, FlagUse]) -> list[Draft]:
    """The default behind flags Ollama passes on some starts only: it holds on the others."""
    drafts = []
    for flag in flags:
        uses = [passed[n] for n in flag.names if n in passed]
        if not uses or any(u.always for u in uses):
            continue
        refs = tuple(dict.fromkeys(r for u in uses for r in u.refs))
        spelled = ", ".join(code_span(u.name) for u in uses)
        detail = (
            f"Ollama passes {spelled} on some starts only ({_where(refs)}) and leaves llama-server's default "
            f"in force on the others. {_changed_text(item)} Where Ollama leaves the flag out, llama-server now "
            "behaves differently: pass the value Ollama wants there, or check that the new default is right."
        )
        drafts.append(
            _draft(item, "server", f"; Ollama relies on it where it leaves {uses[0].name} out", detail, refs)
        )
    return drafts


def switched(old: str, new: str) -> bool:
    """Whether a default turns what it sets on or off: `false` and `true`, or a number at or below zero (what
    upstream's parameters take for disabled or never) and one above it."""
    truth = {"true": True, "false": False}
    if old in truth and new in truth:
        return truth[old] != truth[new]
    before, after = _number(old), _number(new)
    return before is not None and after is not None and (before > 0) != (after > 0)


COUPLING_REACH = 12  # lines above an assignment where the `if` whose block holds it may open
_IF_OPENS = re.compile(r"^\s*(?:\}\s*else\s+)?if\s*\((.*)\)\s*\{?\s*$")
_MEMBER_READ = re.compile(r"[.>]\s*([A-Za-z_]\w*)\b(?!\s*\()")


def coupled_members(codes: Mapping[str, str], member: str) -> set[str]:
    """The members the conditions of the `if`s whose block sets `member` test: `if (params.n_parallel < 0) {
    params.kv_unified = true; }` couples `kv_unified` with `n_parallel` (what a start gives the one decides
    the other)."""
    sets = re.compile(rf"[.>]\s*{re.escape(member)}\s*=(?!=)")
    found: set[str] = set()
    for code in codes.values():
        if member not in code:
            continue
        lines = code.split("\n")
        for n, line in enumerate(lines, 1):
            if sets.search(line):
                found.update(_MEMBER_READ.findall(_condition_above(lines, n)))
    return found - {member}


def _condition_above(lines: list[str], line: int) -> str:
    """The condition of the `if` opening the block that holds `line`."""
    n = opening_line(lines, line, COUPLING_REACH)
    m = _IF_OPENS.match(lines[n - 1]) if n is not None else None
    return m[1] if m else ""


def unpassed_drafts(
    item: Changed, flags: Sequence[Flag], launch: tuple[LocalRef, ...], coupled: Sequence[str] = ()
) -> list[Draft]:
    """The default behind llama-server flags Ollama never passes (`launch`: where it starts the program
    without them, or passes the `coupled` flags upstream tests where it sets the member): every start now
    runs the other way. The caller passes flags only for a default that turns what it sets on or off
    (`switched`) with no group switch keeping it off."""
    if not flags:
        return []
    spelled = ", ".join(code_span(name) for name in flags[0].names[:2])
    turned = "on" if item.new_value == "true" or (_number(item.new_value) or 0) > 0 else "off"
    beside = (
        f" Upstream's server sets it by what {', '.join(map(code_span, dict.fromkeys(coupled)))} gives, which "
        "Ollama passes."
        if coupled
        else ""
    )
    detail = (
        f"Ollama never passes {spelled} among the flags it starts llama-server with ({_where(launch)}), so "
        f"upstream's default holds on every start.{beside} {_changed_text(item)} What the parameter sets is "
        f"now {turned} by default: pass the value Ollama wants, or check that the new default is right."
    )
    return [_draft(item, "server", f"; Ollama never passes {flags[0].names[0]}", detail, launch)]


@dataclass(frozen=True)
class Body:
    """What Ollama sends to one endpoint: its top-level request fields, and where the body is built."""

    endpoint: str
    fields: Mapping[str, tuple[bool, LocalRef]]  # key -> (sent only sometimes, where)
    declared: LocalRef  # where the body's type or literal is declared


def request_drafts(
    item: Changed, keys: set[str], bodies: Sequence[Body], switches: Sequence[set[str]] = ()
) -> list[Draft]:
    """The default behind a request field Ollama leaves out (never sends, or only sometimes) of bodies that
    carry other fields of its kind; not where a switch of its group (the request keys of each) is left out
    too, at a default that turns the whole group off."""
    refs: dict[LocalRef, None] = {}
    said = []
    for body in bodies:
        where = _left_out(body, keys, switches)
        if where is not None:
            refs.update(dict.fromkeys(where[1]))
            said.append(f"{body.endpoint} ({_where(where[1])}: {where[0]})")
    if not said:
        return []
    key = min(keys)
    detail = (
        f"Ollama's requests leave {code_span(key)} out, so llama-server's default applies: {'; '.join(said)}. "
        f"{_changed_text(item)} Every such request now behaves differently: send the value Ollama wants, or "
        "check that the new default is right."
    )
    return [
        _draft(item, "models", f"; Ollama leaves {code_span(key)} out of its requests", detail, tuple(refs))
    ]


def declared_at(ollama: Mapping[str, str], first: LocalRef) -> LocalRef:
    """The line that opens the struct type or map literal holding a request body's first field, in the
    function that holds the field (the field's own line where the literal opens there)."""
    lines = (ollama.get(first.path) or "").split("\n")
    if 0 < first.line <= len(lines) and _DECLARED_HERE.search(lines[first.line - 1]):
        return first
    for n in range(min(first.line, len(lines)) - 1, max(first.line - 200, 0), -1):
        if _DECLARING.search(lines[n - 1]):
            return LocalRef(first.path, n)
        if _FUNCTION.match(lines[n - 1]):
            break
    return first


def _left_out(body: Body, keys: set[str], switches: Sequence[set[str]]) -> tuple[str, list[LocalRef]] | None:
    """How a body leaves the field out ("never" at its declaration, "only sometimes" at the field), or None
    when it always sends it or leaves out a switch that turns the field's group off."""
    if any(not switch & body.fields.keys() for switch in switches):
        return None
    sent = [body.fields[k] for k in sorted(keys) if k in body.fields]
    if not sent:
        return "never", [body.declared]
    if all(sometimes for sometimes, _ in sent):
        return "only sometimes", [ref for _, ref in sent]
    return None


def _changed_text(item: Changed) -> str:
    return (
        f"Upstream's default of {code_span(f'{item.after.struct}::{item.after.name}')} ({code_span(f'{item.header}:{item.after.line}')}) "
        f"changed from {code_span(_shown(item.before.default, item.old_value))} to "
        f"{code_span(_shown(item.after.default, item.new_value))}."
    )


def _shown(written: str, value: str) -> str:
    """An initializer, with the value its macros stand for when it names some."""
    return written if written == value else f"{written} = {value}"


def _draft(item: Changed, area: str, why: str, detail: str, refs: tuple[LocalRef, ...]) -> Draft:
    path = ".".join(item.paths[0])
    return Draft(
        area,
        "medium",
        f"Default of llama-server parameter {path} changed{why}",
        detail,
        item.header,
        item.after.line,
        local_refs=refs,
        cause=f"default:{item.after.struct}::{item.after.name}",
    )


def _where(refs: Sequence[LocalRef], shown: int = 3) -> str:
    listed = ", ".join(f"{r.path}:{r.line}" for r in refs[:shown])
    return listed + (f" and {len(refs) - shown} more" if len(refs) > shown else "")
