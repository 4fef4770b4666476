"""Lines Ollama matches, printed once per item of a collection the bump fills under other conditions, or
now puts in another order.

A line template one of Ollama's patterns matches (found as `logformats` finds them) that a loop prints once per
item (`for (auto * dev : devices) printf("  %s: ...", ...)`) prints as many lines as the function put items in
the collection. When the bump changes the conditions under which the function adds to it (`if (type != CPU)
devices.push_back(dev)` becomes an unconditional `devices.push_back(dev)`), Ollama sees other lines (a device it
never saw, or none of one it relied on) with no text changed anywhere: the log-line check sees nothing, and this
names the condition before and after, the function, and Ollama's pattern and line. A sort the bump adds to
such a collection (`std::stable_sort(devices.begin(), ...)`) changes which line comes first: where Ollama
numbers the lines it matches (`deviceIndex := 0` ... `deviceIndex++`), each number now names another item.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial

from tree_sitter import Node

from bot.cache import facts
from bot.lang import cpp, syntax
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts.model import LaunchSetting, OutputPattern
from bot.review.gopatterns import LogPattern, distinct_refs, program_of, streams_of
from bot.review.logformats import Program, matched_templates, needles_of, patterns_id
from bot.review.producers import SourceFile, Template

_FUNCTIONS = cpp.node_pattern("function_definition")
_ADDS = cpp.node_pattern("call_expression")
ADDING = frozenset(("push_back", "emplace_back", "insert", "emplace", "push", "append"))

Guards = frozenset[tuple[str, ...]]  # for each call that adds to the collection, the conditions it is under


@dataclass(frozen=True)
class Refiltered:
    """A template a pattern matches, printed per item of `collection`, whose adding conditions changed."""

    change: FileChange
    pattern: LogPattern
    template: Template
    function: str
    collection: str
    before: Guards
    after: Guards
    reordered: str = ""  # the call that now orders the collection, when that is the change


def guard_drafts(
    changes: list[FileChange],
    program: Program,
    launches: Callable[[], Sequence[LaunchSetting]],
    named_programs: Callable[[str], frozenset[str] | None],
    ollama: Mapping[str, str],
) -> list[Draft]:
    """One medium draft per line Ollama matches that a loop prints per item of a collection whose adding
    conditions the bump changed, or that it now sorts, in code of the program whose output Ollama reads
    (`named_programs`: the programs a `tools/<dir>/` build file names, None outside `tools/`: a tool's
    library that another tool's program links is left out); pointed at Ollama's pattern, where it is
    applied, and where Ollama starts the program with the flags of the output it reads. A new order is
    medium where Ollama numbers the lines it matches (pointed at the counter), information elsewhere."""
    found = []
    patterns = cache(program.patterns)
    patterns_key = cache(lambda: patterns_id(patterns()))
    for change in changes:
        if _may_change_listing(change, program):
            found += _kept(change, patterns(), patterns_key(), partial(_refiltered, change, patterns()))
    if not found:
        return []
    once: dict[tuple[str, int, str], Draft] = {}
    for item in found:
        contract = item.pattern.contract
        programs = named_programs(item.change.path)
        if programs is None or program_of(contract) in programs:
            key = (item.change.path, item.template.line, item.pattern.source)
            once.setdefault(key, _draft(item, contract, _started_at(contract, launches()), ollama))
    return list(once.values())


# An addition to a collection, and a range loop over one: text searches, led by their punctuation, that leave
# a file unparsed unless a changed line adds to a collection the file loops over printing.
_ADDING = re.compile(r"(?:\.|->)\s*(?:" + "|".join(ADDING) + r")\s*\(")
_ADDED_TO = re.compile(r"(\w+)\s*$")  # the name before an addition's `.` or `->`
_RANGE_END = re.compile(r":\s*(\w+)\s*\)")  # `: devices)`, the end of a range loop's head
_FOR = re.compile(r"\bfor\s*\(")
LOOP_LINES = 6  # the lines of a loop's body read for what it prints


def _may_change_listing(change: FileChange, program: Program) -> bool:
    """Whether a changed line of the file, in code of a program Ollama runs, may add to a collection or
    order one."""
    if not (change.old_path and change.new_path and cpp.is_c_family(change.path)):
        return False
    changed = _adding_text(change)
    listing = any(word in changed for word in ADDING) or _REORDERING.search(changed) is not None
    return listing and program.runs(change.old_path)


# a call that puts a collection in another order, and the collection: `std::stable_sort(devices.begin(), ...`,
# `std::ranges::sort(devices, ...)`, `std::reverse(std::begin(devices), ...`
_REORDERING = re.compile(
    r"\b(?:std::)?(?:ranges::)?(?:sort|stable_sort|partial_sort|reverse|shuffle|rotate)\s*\(\s*"
    r"(?:std::)?(?:c?begin\s*\(\s*)?(\w+)"
)


_CONDITION = re.compile(r"\b(?:if|else|while|switch)\b")


def _adding_text(change: FileChange) -> str:
    """The changed lines (the prefilters' text, most likely made already), and below each changed hunk
    holding a condition the lines it governs: an `if` whose condition alone changed still decides what its
    body adds, on lines the change leaves alone."""
    changed = change.changed_raw[0]
    if not _CONDITION.search(changed):
        return changed
    lines, governed = change.new_lines, [changed]
    for span in change.significant:
        end = span.new_start - 1 + span.new_count
        if span.new_count and _CONDITION.search("\n".join(lines[span.new_start - 1 : end])):
            governed += lines[end : end + LOOP_LINES]
    return "\n".join(governed)


# What a change's loops print per item under other conditions depends on the change's two blobs and the
# patterns alone: kept by those (the patterns by what they match), a re-check reads none of it again.
REFILTERED = facts.Extractor("printed-per-item-refiltered", 2, __name__)


def _kept(
    change: FileChange, patterns: list[LogPattern], patterns_key: str, found: Callable[[], list[Refiltered]]
) -> list[Refiltered]:
    """`found()`, or what the facts store kept of it for the same change and patterns (`patterns_key`)."""
    index = {id(p): i for i, p in enumerate(patterns)}

    def plain() -> list[tuple[Template, int, str, str, Guards, Guards, str]]:
        return [
            (r.template, index[id(r.pattern)], r.function, r.collection, r.before, r.after, r.reordered)
            for r in found()
        ]

    kept = facts.remembered(REFILTERED, (*change.fact_key("-+"), patterns_key), plain)
    return [Refiltered(change, patterns[i], t, f, c, b, a, o) for t, i, f, c, b, a, o in kept]


def _printing_loops_touched(change: FileChange, needles: Callable[[str], bool]) -> dict[str, list[int]]:
    """The collections a changed line adds to that the file loops over printing a line that may be one
    Ollama matches, with the loops' lines."""
    changed = _adding_text(change)
    names = {
        m[1]
        for a in _ADDING.finditer(changed)
        if (m := _ADDED_TO.search(changed, max(0, a.start() - 64), a.start()))
    } | {m[1] for m in _REORDERING.finditer(changed)}
    return _printing_loops(change.new_text, names, needles) if names else {}


def _printing_loops(text: str, names: set[str], needles: Callable[[str], bool]) -> dict[str, list[int]]:
    """Of the collections named, those a range loop iterates whose first lines hold a text one of Ollama's
    patterns needs, with each such loop's line (1-based)."""
    found: dict[str, list[int]] = {}
    for match in _RANGE_END.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if match[1] not in names or not _FOR.search(text, start, match.start()):
            continue
        end = match.end()
        for _ in range(LOOP_LINES):
            end = text.find("\n", end + 1)
            if end < 0:
                end = len(text)
                break
        if needles(text[match.end() : end].lower()):
            found.setdefault(match[1], []).append(text.count("\n", 0, match.start()) + 1)
    return found


def _refiltered(change: FileChange, patterns: list[LogPattern]) -> list[Refiltered]:
    """The templates the change's printing loops print that a pattern matches, whose function adds to the
    collection under other conditions than the same function before the change, or now orders it."""
    loops = _printing_loops_touched(change, needles_of(patterns).in_text)
    if not loops:
        return []
    sources = SourceFile(change.old_text, change.path), SourceFile(change.new_text, change.path)
    found = []
    for collection, lines in loops.items():
        body = sorted({n for line in lines for n in range(line, line + LOOP_LINES + 1)})
        for template, pattern, _ in matched_templates(change.new_lines, lambda: sources[1], body, patterns):
            guards = _guards_around(change, sources, template.line, collection)
            if guards is not None:
                found.append(Refiltered(change, pattern, template, *guards))
    return found


def _guards_around(
    change: FileChange, sources: tuple[SourceFile, SourceFile], line: int, collection: str
) -> tuple[str, str, Guards, Guards, str] | None:
    """(function, collection, conditions before, after, the call that now orders it) when the line prints
    once per item of the collection and the function (the same name before) adds to it under other
    conditions, or orders it where it did not; else None."""
    name = sources[1].function_at(line) or ""
    both = _both_functions(change, sources, line, name)
    if both is None or _printed_per_item(both[1][0], line - both[1][1] + 1) != collection:
        return None
    old, new = both[0][0], both[1][0]
    before, after = _guards(old, collection), _guards(new, collection)
    if before and after and before != after:
        return name, collection, before, after, ""
    ordered = _new_order(old, new, collection)
    return (name, collection, before, after, ordered) if ordered else None


def _both_functions(
    change: FileChange, sources: tuple[SourceFile, SourceFile], line: int, name: str
) -> tuple[tuple[Node, int], tuple[Node, int]] | None:
    """The function holding the line at the new ref and the one of the same name at the old, each with its
    first line; None when either is not found."""
    new = function_node(change.new_code_lines, sources[1].function_span(line))
    old = function_node(change.old_code_lines, sources[0].function_span(name=name)) if name else None
    return (old, new) if old is not None and new is not None else None


def _new_order(old: Node, new: Node, collection: str) -> str:
    """The call the new function orders the collection with, when the old one did not; "" otherwise."""
    ordered = _reordering(new, collection)
    return ordered if ordered and not _reordering(old, collection) else ""


def _reordering(function: Node, collection: str) -> str:
    """The first call of the function that orders the collection, as written (spaces squeezed); "" for none."""
    text = syntax.node_text(function)
    found = next((m for m in _REORDERING.finditer(text) if m[1] == collection), None)
    if found is None:
        return ""
    end = text.find(";", found.end())
    return " ".join(text[found.start() : end if end > 0 else found.end()].split())[:120]


def function_node(code_lines: list[str], span: tuple[int, int] | None) -> tuple[Node, int] | None:
    """The definition of the function on the lines of `span` (1-based, inclusive) of the comment-free code,
    parsed alone, and its first line."""
    if span is None:
        return None
    text = "\n".join(code_lines[span[0] - 1 : span[1]]).encode()
    definitions = cpp.nodes(text, _FUNCTIONS)
    return (definitions[0], span[0]) if definitions else None


def _printed_per_item(function: Node, line: int) -> str | None:
    """The collection a range loop around the line (1-based) iterates, when it is a plain name."""
    node = function.descendant_for_point_range((line - 1, 0), (line - 1, 0))
    while node is not None and node != function:
        if node.type == "for_range_loop":
            right = node.child_by_field_name("right")
            return syntax.node_text(right) if right is not None and right.type == "identifier" else None
        node = node.parent
    return None


def _guards(function: Node, collection: str) -> Guards:
    """For each call in the function that adds to the collection, the conditions it runs under (outermost
    first; `!(...)` for an `else` branch), spaces squeezed."""
    found = set()
    for call in syntax.captures(_ADDS, function).get("node", []):
        callee = call.child_by_field_name("function")
        if callee is None or callee.type != "field_expression":
            continue
        target, field = callee.child_by_field_name("argument"), callee.child_by_field_name("field")
        if syntax.node_text(target) == collection and syntax.node_text(field) in ADDING:
            found.add(_conditions(call, function))
    return frozenset(found)


def _conditions(node: Node, function: Node) -> tuple[str, ...]:
    conditions = []
    child, parent = node, node.parent
    while parent is not None and parent != function:
        if parent.type == "if_statement":
            condition = " ".join(syntax.node_text(parent.child_by_field_name("condition")).split())
            if condition.startswith("(") and condition.endswith(")"):
                condition = condition[1:-1].strip()
            alternative = parent.child_by_field_name("alternative")
            inside_else = alternative is not None and alternative.start_byte <= child.start_byte
            conditions.append(f"!{condition}" if inside_else else condition)
        child, parent = parent, parent.parent
    return tuple(reversed(conditions))


def _shown(guards: Guards) -> str:
    return "; ".join(" && ".join(g) if g else "always" for g in sorted(guards))


def _started_at(contract: OutputPattern, launches: Sequence[LaunchSetting]) -> tuple[LocalRef, ...]:
    """Where Ollama passes the flags of the output the contract reads (`llama-server --list-devices ...`)."""
    flags = {word for source in contract.sources for word in source.split() if word.startswith("--")}
    return tuple(r for s in launches if s.kind == "flag" and s.name in flags for r in s.refs)


def _draft(
    item: Refiltered, contract: OutputPattern, started: tuple[LocalRef, ...], ollama: Mapping[str, str]
) -> Draft:
    if item.reordered:
        return _order_draft(item, contract, started, ollama)
    change, pattern = item.change, item.pattern
    program = program_of(contract)
    where = code_span(f"{contract.ref.path}:{contract.ref.line}")
    detail = (
        f"{code_span(item.function)} prints {code_span(item.template.code.strip()[:120])} once per item of {code_span(item.collection)}, "
        f"a line Ollama's pattern {code_span(pattern.source)} ({where}) matches in {streams_of(contract)}. "
        f"The bump changed when it adds to {code_span(item.collection)}: before {code_span(_shown(item.before))}, now "
        f"{code_span(_shown(item.after))}. {program} now prints other lines of this kind than Ollama saw before (items "
        "it left out, or none of some it listed): check what Ollama makes of each line it matches."
    )
    line = item.template.line  # the template is read from the new text
    return Draft(
        "server",
        "medium",
        f"What {program} lists changed: {code_span(item.function)} fills {code_span(item.collection)} under other conditions",
        detail,
        change.path,
        line,
        ((line, line),),
        None,
        distinct_refs((contract.ref, *contract.used_at, *started)),
        cause=f"output pattern {contract.ref.path}:{contract.ref.line}",
    )


COUNTER_USES_SHOWN = 3  # the lines using a counter an item points at, after its declaration
_COUNTER = re.compile(r"^\s*(?:(\w+)\s*:=\s*0|var\s+(\w+)\s+int)\s*$")


def _order_draft(
    item: Refiltered, contract: OutputPattern, started: tuple[LocalRef, ...], ollama: Mapping[str, str]
) -> Draft:
    """A collection printed per item that the function now orders: medium where Ollama numbers the lines it
    matches (the counter's lines first), information elsewhere."""
    program = program_of(contract)
    counted = [ref for use in contract.used_at for ref in _counter_refs(ollama, use)]
    where = code_span(f"{contract.ref.path}:{contract.ref.line}")
    numbered = (
        f" Ollama numbers the lines it matches ({code_span(f'{counted[0].path}:{counted[0].line}')}): each number "
        "now names another item than on a machine where the order was different."
        if counted
        else ""
    )
    detail = (
        f"{code_span(item.function)} prints {code_span(item.template.code.strip()[:120])} once per item of "
        f"{code_span(item.collection)}, a line Ollama's pattern {code_span(item.pattern.source)} ({where}) matches in "
        f"{streams_of(contract)}. The bump now orders {code_span(item.collection)} before it is printed "
        f"({code_span(item.reordered)}): {program} lists the same items in another order.{numbered}"
    )
    line = item.template.line
    return Draft(
        "server",
        "medium" if counted else "info",
        f"What {program} lists comes in another order: {code_span(item.function)} now sorts {code_span(item.collection)}",
        detail,
        item.change.path,
        line,
        ((line, line),),
        None,
        distinct_refs((*counted, contract.ref, *contract.used_at, *started)),
        cause=f"output pattern {contract.ref.path}:{contract.ref.line}",
    )


def _counter_refs(ollama: Mapping[str, str], use: LocalRef) -> list[LocalRef]:
    """Where a Go function numbers the lines it matches at `use`: a counter declared zero above it in the
    same function and incremented below it (its declaration, then the lines that read it); none when no such
    counter is there."""
    lines = (ollama.get(use.path) or "").split("\n")
    span = _go_function(lines, use.line)
    if span is None:
        return []
    start, end = span
    below = lines[use.line : end]
    for n in range(use.line - 2, start, -1):
        name = _counter_name(lines[n])
        if name and re.search(_increment(name), "\n".join(below)):
            reads = [use.line + k + 1 for k, line in enumerate(below) if _reads_counter(name, line)]
            return [LocalRef(use.path, k) for k in [n + 1, *reads[:COUNTER_USES_SHOWN]]]
    return []


def _counter_name(line: str) -> str:
    """The variable a Go line declares as an integer zero (`index := 0`, `var index int`); "" otherwise."""
    m = _COUNTER.match(line)
    return (m[1] or m[2]) if m else ""


def _go_function(lines: list[str], line: int) -> tuple[int, int] | None:
    """The 0-based lines where the top-level Go function holding `line` (1-based) starts and ends."""
    if not 0 < line <= len(lines):
        return None
    start = next((n for n in range(line - 1, -1, -1) if lines[n].startswith("func ")), None)
    end = next((n for n in range(line, len(lines)) if lines[n].startswith("}")), len(lines))
    return None if start is None else (start, end)


def _increment(name: str) -> str:
    return rf"\b{name}\s*(?:\+\+|\+=\s*1\b)"


def _reads_counter(name: str, line: str) -> bool:
    return re.search(rf"\b{name}\b", line) is not None and re.search(_increment(name), line) is None
