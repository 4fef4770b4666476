"""llama-server's launch contracts at both refs, against the contract inventory: the named values Ollama passes
to its flags (`argvalues`), the environment variables it sets (`envnames`), and the parameter defaults it relies
on by leaving a flag or a request field out (`paramdefaults`).

Each check first reads the upstream diff and the flags Ollama passes (the inventory's cheapest group: the
argument lists of the programs it starts), and asks for the rest of the inventory (the values and the
environment: the costly part) only once the diff touches something it would compare.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from functools import cache, partial
from typing import TYPE_CHECKING

from bot.cache import facts
from bot.cache.facts import text_id
from bot.model import LocalRef
from bot.review import argunits, argvalues, envnames, paramdefaults
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts import Contracts
from bot.review.consumers.contracts.behaviours import area_of
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.consumers.gofields import condition_above
from bot.review.consumers.shared import SETTABLE
from bot.review.cppreach import Index, names
from bot.review.flags import Flag, flag_table
from bot.review.rules import ollama_uses
from bot.review.source import C_SOURCES, extension

if TYPE_CHECKING:
    from bot.review.run import Run

HEADERS = (".h", ".hpp")
_INCLUDE = re.compile(r'(?m)^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"')


def launch_drafts(run: Run) -> list[Draft]:
    """Every launch-contract item of one review."""
    if not run.c_changes:
        return []
    return [
        *_value_drafts(run),
        *_redirect_drafts(run),
        *_unit_drafts(run),
        *_env_drafts(run),
        *_default_drafts(run),
    ]


# ------------------------------------------------------------------------------------------ values


_Tables = tuple[tuple[dict[str, Flag], Index], tuple[dict[str, Flag], Index]]


def _tables(run: Run) -> _Tables:
    """The argument table and the index of the code its handlers can reach, at the old and the new ref: the
    table's own file and the changed C/C++ files Ollama builds whose change moves a constant (an unchanged
    file reads the same at both refs, and a value leaves a handler's reach through a change of a constant or
    of the table's file); widened to every changed file for a call the narrow index cannot resolve."""
    table = run.arg_table_path
    old_code, new_code = run.code_at_both(table)
    built = _built(run)
    moving = [c for c in built if _moves_a_constant(c)]
    sides = []
    for side, code in (("old", old_code), ("new", new_code)):
        narrow, wide = (
            _ChangedCode(moving, side, table, code or ""),
            _ChangedCode(built, side, table, code or ""),
        )
        index = Index(narrow, table, narrow.holding, partial(Index, wide, table, wide.holding))
        sides.append((flag_table(code or ""), index))
    return sides[0], sides[1]


def _built(run: Run) -> list[FileChange]:
    """The changed C/C++ files Ollama builds, the argument table's aside."""
    return [c for c in run.c_changes if c.path != run.arg_table_path and run.consumers.builds(c.path)]


_CONSTANT = re.compile(r'"[A-Za-z0-9][\w.+:/-]*"')


def _moves_a_constant(change: FileChange) -> bool:
    """Whether a change removes or adds a constant that can be a value's name."""
    removed = set(_CONSTANT.findall("\n".join(change.removed_raw)))
    return removed != set(_CONSTANT.findall("\n".join(change.added_raw)))


class _ChangedCode(Mapping[str, str]):
    """The argument table's code and some changed C/C++ files, as one side's comment-free code, each read on
    first use."""

    def __init__(self, changes: list[FileChange], side: str, table_path: str, table: str):
        self._path, self._table = table_path, table
        self._side = side
        self._changes = {
            path: c
            for c in changes
            if (path := c.old_path if side == "old" else c.new_path) and path != table_path
        }

    def __getitem__(self, path: str) -> str:
        if path == self._path:
            return self._table
        change = self._changes[path]
        return change.old_code if self._side == "old" else change.new_code

    def __iter__(self) -> Iterator[str]:
        return iter([self._path, *self._changes])

    def __len__(self) -> int:
        return 1 + len(self._changes)

    def holding(self, word: str) -> list[str]:
        """The paths whose text holds `word` (the changed files by their raw text: no comment is stripped to
        tell)."""
        raw = (lambda c: c.old_text) if self._side == "old" else (lambda c: c.new_text)
        found = [self._path] if word in self._table else []
        return found + [p for p, c in self._changes.items() if word in raw(c)]


def _value_drafts(run: Run) -> list[Draft]:
    tables = cache(partial(_tables, run))
    if not _some_name_lost(run, tables):
        return []
    old, new = tables()
    settings = [_passed(s) for s in run.contracts.launch]
    refused = argvalues.refused_values(settings, old, new, lambda path: _old_code(run, path))
    return [
        argvalues.refused_draft(
            replace(r, passed=_with_value_lines(run, r)), run.arg_table_path, run.where_now
        )
        for r in refused
    ]


def _redirect_drafts(run: Run) -> list[Draft]:
    """The named values Ollama passes whose branch in their flag's handler now does something else: read
    only when the argument table changed the handler of a flag Ollama passes."""
    old_code, new_code = run.code_at_both(run.arg_table_path)
    if not old_code or not new_code or old_code == new_code:
        return []
    old, new = flag_table(old_code), flag_table(new_code)
    if not any(
        n in old and n in new and old[n].handler != new[n].handler for n in run.contracts.passed_flags
    ):
        return []
    settings = [_passed(s) for s in run.contracts.launch]
    return [
        argvalues.redirected_draft(replace(r, passed=_with_value_lines(run, r)), run.arg_table_path)
        for r in argvalues.redirected_values(settings, old, new)
    ]


def _with_value_lines(run: Run, item: argvalues.Refused | argvalues.Redirected) -> argvalues.Passed:
    """The setting, with the lines of the files that pass it where the Go code writes the value itself (a
    named constant)."""
    files = tuple(dict.fromkeys(r.path for r in item.passed.refs))
    written = ollama_uses(run.local, files, item.value, whole=True, limit=5)
    return replace(item.passed, refs=tuple(dict.fromkeys(item.passed.refs + written)))


# Whether a flag's handler stops naming a value it named: it depends on the argument table and the changed
# files Ollama builds alone, so a re-check of the same refs reaches no handler's code again.
NAME_LOST = facts.Extractor("launch-name-lost", 1, __name__)


def _some_name_lost(run: Run, tables: Callable[[], _Tables]) -> bool:
    """Whether the handler of a flag Ollama passes knew a value by name at the old ref that it no longer
    names: the inventory's launch settings, which say what values Ollama passes, are read only then."""
    old_code, new_code = run.code_at_both(run.arg_table_path)
    read = text_id(
        "\n".join(
            (
                text_id(old_code or ""),
                text_id(new_code or ""),
                *(k for c in _built(run) for k in c.fact_key("-+")),
            )
        )
    )  # one id for what every answer depends on: the key of each is short
    return any(
        facts.remembered(NAME_LOST, (read, name), partial(_name_lost, tables, name))
        for name in run.contracts.passed_flags
    )


def _name_lost(tables: Callable[[], _Tables], name: str) -> bool:
    (old_flags, old_index), (new_flags, new_index) = tables()
    before, after = old_flags.get(name), new_flags.get(name)
    if before is None or after is None or not argvalues.takes_text(before):
        return False
    reached = argvalues.accepted(before, old_index)
    known = names(set(reached.literals))
    return bool(known) and not known <= argvalues.accepted(after, new_index, than=reached).literals


def _passed(setting: LaunchSetting) -> argvalues.Passed:
    return argvalues.Passed(setting.kind, setting.name, setting.values, setting.refs, setting.always)


def _old_code(run: Run, path: str) -> str:
    return run.code_at_both(path)[0] or ""


def _unit_drafts(run: Run) -> list[Draft]:
    """Flags Ollama passes whose handler now scales the value it parses otherwise (another unit)."""
    change = run.arg_table
    if change is None or not _SCALED.search(change.changed_raw[0]):
        return []
    old, new = flag_table(change.old_code), flag_table(change.new_code)
    return argunits.unit_drafts(old, new, run.contracts.launch, run.arg_table_path)


_SCALED = re.compile(r"[*/]\s*\(?\s*\d|<<\s*\d")  # a changed line that may scale a value by a constant


# ------------------------------------------------------------------------------------------ environment


def _env_drafts(run: Run) -> list[Draft]:
    changes = [c for c in run.c_changes if run.consumers.builds(c.path)]
    lost = envnames.lost_names(changes, _settable)
    reread = envnames.reread_names(changes, _settable)
    if not lost and not reread:
        return []
    settings = _env_settings(run.contracts)
    return [*_lost_drafts(run, lost, settings), *_reread_drafts(run, reread, settings)]


def _lost_drafts(
    run: Run, lost: list[envnames.Lost], settings: Mapping[str, tuple[tuple[LocalRef, ...], bool]]
) -> list[Draft]:
    """The variables Ollama sets that no upstream code it builds names any more."""
    lost = [item for item in lost if item.name in settings and not _still_named(run, item)]
    if not lost:
        return []
    old_table = flag_table(run.code_at_both(run.arg_table_path)[0] or "")
    refs = {
        item.name: (_with_literals(run, item.name, settings[item.name][0]), settings[item.name][1])
        for item in lost
    }
    return envnames.lost_drafts(lost, refs, partial(_flags_reading, old_table))


def _reread_drafts(
    run: Run, reread: list[envnames.Reread], settings: Mapping[str, tuple[tuple[LocalRef, ...], bool]]
) -> list[Draft]:
    """The variables Ollama sets whose value the reading function now uses otherwise."""
    named = {item.name for item in reread if item.name in settings}
    refs = {n: (_with_literals(run, n, settings[n][0]), settings[n][1]) for n in named}
    values: dict[str, tuple[str, ...]] = {}
    for s in run.contracts.launch:
        if s.kind == "env" and s.name in named:
            values[s.name] = tuple(dict.fromkeys((*values.get(s.name, ()), *s.values)))
    return envnames.reread_drafts(reread, refs, values)


def _settable(name: str) -> bool:
    return SETTABLE.fullmatch(name) is not None


def _flags_reading(table: Mapping[str, Flag], name: str) -> tuple[str, ...]:
    """The spellings of the flag whose environment variable `name` is."""
    return next((f.names for f in table.values() if name in f.env), ())


def _env_settings(inventory: Contracts) -> dict[str, tuple[tuple[LocalRef, ...], bool]]:
    """Every environment variable Ollama sets for a program it starts: where, and whether on every start."""
    found: dict[str, tuple[tuple[LocalRef, ...], bool]] = {}
    for setting in inventory.launch:
        if setting.kind == "env":
            refs, always = found.get(setting.name, ((), True))
            found[setting.name] = (tuple(dict.fromkeys(refs + setting.refs)), always and setting.always)
    return found


def _with_literals(run: Run, name: str, refs: tuple[LocalRef, ...]) -> tuple[LocalRef, ...]:
    """Where Ollama sets a variable, and where its Go code writes the name itself (a constant, a list of the
    variables it passes on)."""
    return tuple(dict.fromkeys(refs + ollama_uses(run.local, ("**/*.go",), name, whole=True, limit=8)))


def _still_named(run: Run, item: envnames.Lost) -> bool:
    """Whether another C/C++ file of the same directory, unchanged, names the variable at the new ref."""
    directory = posixpath.dirname(item.change.path)
    quoted = f'"{item.name}"'
    for path in run.ctx.new.files(directory):
        if posixpath.dirname(path) != directory or extension(path) not in C_SOURCES or path in run.by_path:
            continue
        code = run.new_code(path)
        if code is not None and quoted in code:
            return True
    return False


# ------------------------------------------------------------------------------------------ defaults


def _default_drafts(run: Run) -> list[Draft]:
    headers = _changed_headers(run)
    table = flag_table(run.code_at_both(run.arg_table_path)[1] or "") if headers else {}
    changed = _changed_defaults(run, headers, table) if headers else []
    parsers = run.request_parsers() if changed else {}
    return [d for item in changed for d in _relied_on(run, item, _links(run, item, table, parsers), parsers)]


def _changed_defaults(
    run: Run, headers: list[FileChange], table: Mapping[str, Flag]
) -> list[paramdefaults.Changed]:
    return paramdefaults.changed_defaults(
        {c.path: c.old_code for c in headers},
        {c.path: c.new_code for c in headers},
        set(paramdefaults.handler_roots(table).values()),
        partial(_table_headers, run),
        {c.path: c.new_text for c in headers},
    )


def _changed_headers(run: Run) -> list[FileChange]:
    """The changed headers Ollama builds whose removed lines hold something like a default initializer."""
    return [
        c
        for c in run.c_changes
        if c.old_path and c.new_path and c.path.endswith(HEADERS) and _changes_an_initializer(c)
        if c.significant and run.consumers.builds(c.path)
    ]


# a path to the member: the flags writing it that Ollama passes, its request keys, the flags Ollama never passes
# and, for those, the flags Ollama passes whose values upstream tests where it sets the member
_Link = tuple[paramdefaults.Path, list[Flag], set[str], list[Flag], list[str]]
_Links = list[_Link]


def _links(
    run: Run, item: paramdefaults.Changed, table: Mapping[str, Flag], parsers: Mapping[str, str]
) -> _Links:
    """Per path to the member: the flags writing it that Ollama passes, the request keys of a behaviour
    area (sampling, templates, tokens) upstream reads into it, and, where the new default turns what it
    sets on or off, the server's flags writing it that Ollama never passes. Read from the diff and the flags
    Ollama passes alone: the launch settings are read only when one is found."""
    switched = not item.switches and paramdefaults.switched(item.old_value, item.new_value)
    return [link for path in item.paths if (link := _link(run, table, parsers, path, switched))]


def _link(
    run: Run, table: Mapping[str, Flag], parsers: Mapping[str, str], path: paramdefaults.Path, switched: bool
) -> _Link | None:
    writing = paramdefaults.assigning_flags(table, path)
    passed = [f for f in writing if set(f.names) & run.contracts.passed_flags.keys()]
    keys = _area_keys(parsers, path) or _sometimes_sent(run, parsers, path)
    if passed or keys:
        return path, passed, keys, [], []
    unpassed = [f for f in writing if f.for_server and switched]
    return (path, [], set(), unpassed, _coupled_flags(run, table, parsers, path)) if unpassed else None


def _coupled_flags(
    run: Run, table: Mapping[str, Flag], parsers: Mapping[str, str], path: paramdefaults.Path
) -> list[str]:
    """The flags Ollama passes that write a member the server's code tests where it sets the one at `path`."""
    passed = run.contracts.passed_flags
    return [
        name
        for other in sorted(paramdefaults.coupled_members(parsers, path[-1]))
        for flag in paramdefaults.assigning_flags(table, (*path[:-1], other))
        for name in flag.names
        if name in passed
    ]


def _area_keys(parsers: Mapping[str, str], path: paramdefaults.Path) -> set[str]:
    """The request keys of a behaviour area upstream reads into the member at `path`."""
    return {k for k in paramdefaults.request_keys(parsers, path) if area_of(k)}


def _sometimes_sent(run: Run, parsers: Mapping[str, str], path: paramdefaults.Path) -> set[str]:
    """The request keys upstream reads into the member at `path` (with it as their default) that Ollama
    sends only sometimes: where it leaves them out, the default decides."""
    keys = paramdefaults.request_keys(parsers, path)
    sent = (
        [f for f in run.contracts.request_fields if f.direction == "request" and f.path in keys]
        if keys
        else []
    )
    return {f.path for f in sent} - {f.path for f in sent if not f.optional}


_INITIALIZER = re.compile(r"\w\s*(?:=[^=]|\{[^}]*\}\s*;)")


def _changes_an_initializer(change: FileChange) -> bool:
    """Whether a header's removed lines hold something like a default member initializer (`x = 1;`)."""
    return any(";" in line and _INITIALIZER.search(line) for line in change.removed_raw)


def _table_headers(run: Run) -> dict[str, str]:
    """The headers the argument table includes from its own directory, at the new ref: where the struct its
    handlers fill is declared."""
    code = run.code_at_both(run.arg_table_path)[1] or ""
    base = posixpath.dirname(run.arg_table_path)
    found = {}
    for include in _INCLUDE.findall(code):
        path = posixpath.normpath(posixpath.join(base, include))
        text = run.new_code(path) if path in run.ctx.new.files(base) else None
        if text is not None:
            found[path] = text
    return found


def _relied_on(
    run: Run, item: paramdefaults.Changed, links: _Links, parsers: Mapping[str, str]
) -> list[Draft]:
    """The item of one changed default: behind flags Ollama passes on some starts, else behind request fields
    Ollama leaves out, else behind flags it never passes. The inventory is read only for a default something
    links to Ollama."""
    if not links:
        return []
    passed = {
        s.name: paramdefaults.FlagUse(s.name, s.always, s.refs)
        for s in run.contracts.launch
        if s.kind == "flag" and s.program == "llama-server"
    }
    for link in links:
        drafts = _link_drafts(run, item, link, passed, parsers)
        if drafts:
            return drafts[:1]
    return []


def _link_drafts(
    run: Run,
    item: paramdefaults.Changed,
    link: _Link,
    passed: Mapping[str, paramdefaults.FlagUse],
    parsers: Mapping[str, str],
) -> list[Draft]:
    path, flags, keys, unpassed, coupled = link
    drafts = paramdefaults.flag_drafts(item, flags, passed)
    if not drafts and keys:
        switches = [
            set(paramdefaults.request_keys(parsers, (*path[:-1], switch))) for switch in item.switches
        ]
        drafts = paramdefaults.request_drafts(
            item, keys, _bodies(run, run.contracts, area_of(min(keys)), keys), switches
        )
        drafts = [replace(d, local_refs=_with_conditions(run, d.local_refs)) for d in drafts]
    if not drafts and unpassed:
        refs = tuple(r for name in coupled for r in run.contracts.passed_flags[name])
        drafts = paramdefaults.unpassed_drafts(item, unpassed, refs or _started_at(run.contracts), coupled)
    return drafts


def _started_at(inventory: Contracts) -> tuple[LocalRef, ...]:
    """Where Ollama starts llama-server: per file, the first line that passes a flag it passes on every
    start there."""
    first: dict[str, LocalRef] = {}
    for s in inventory.launch:
        if s.program == "llama-server" and s.always:
            for ref in s.refs:
                if ref.path not in first or ref.line < first[ref.path].line:
                    first[ref.path] = ref
    return tuple(first[path] for path in sorted(first))


def _with_conditions(run: Run, refs: tuple[LocalRef, ...]) -> tuple[LocalRef, ...]:
    """The refs, each field Ollama sends under an `if` preceded by the `if`."""
    return tuple(dict.fromkeys(r for ref in refs for r in (*condition_above(run.local, ref), ref)))


def _bodies(run: Run, inventory: Contracts, area: str | None, keys: set[str]) -> list[paramdefaults.Body]:
    """What Ollama sends to each endpoint that carries fields of this behaviour area (no area: the keys)."""
    by_endpoint: dict[str, dict[str, tuple[bool, LocalRef]]] = {}
    for field in inventory.request_fields:
        if field.direction == "request" and "." not in field.path and "[" not in field.path:
            by_endpoint.setdefault(field.endpoint, {})[field.path] = (field.optional, field.ref)
    bodies = []
    for endpoint, fields in sorted(by_endpoint.items()):
        if any(area_of(key) == area for key in fields) if area else keys & fields.keys():
            first = min((ref for _, ref in fields.values()), key=lambda r: (r.path, r.line))
            bodies.append(paramdefaults.Body(endpoint, fields, paramdefaults.declared_at(run.local, first)))
    return bodies
