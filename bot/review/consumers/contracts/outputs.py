"""The string constants Ollama's Go code compares with what an upstream program printed or answered: the
substrings, prefixes, separators and regular expressions it looks for in a value `Flow` traced to a source,
and the constants such a value is tested equal to (`==`, `bytes.Equal`, `switch` cases)."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.consumers.contracts.flow import EMPTY, Flow, Labels, _State
from bot.review.consumers.contracts.gocode import Func, arguments, named, unwrap
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.consumers.contracts.resolve import Literal, Resolver, Where, where_of

# strings/bytes functions: name -> (kind of contract, position of the searched value, of the constant)
_SEARCHES = {
    "Contains": ("substring", 0, 1),
    "ContainsAny": ("substring", 0, 1),
    "Index": ("substring", 0, 1),
    "LastIndex": ("substring", 0, 1),
    "Count": ("substring", 0, 1),
    "Replace": ("substring", 0, 1),
    "ReplaceAll": ("substring", 0, 1),
    "HasPrefix": ("prefix", 0, 1),
    "TrimPrefix": ("prefix", 0, 1),
    "CutPrefix": ("prefix", 0, 1),
    "HasSuffix": ("suffix", 0, 1),
    "TrimSuffix": ("suffix", 0, 1),
    "CutSuffix": ("suffix", 0, 1),
    "Cut": ("separator", 0, 1),
    "Split": ("separator", 0, 1),
    "SplitN": ("separator", 0, 1),
    "SplitAfter": ("separator", 0, 1),
    "Equal": ("equals", 0, 1),
    "EqualFold": ("equals (any case)", 0, 1),
}

_REGEXP_USES = ("Find", "Match", "ReplaceAll", "Split")

_SINKS = syntax.pattern(
    "go",
    """
(call_expression) @call
(binary_expression) @compare
(expression_switch_statement) @switch
""",
)


def output_patterns(flow: Flow) -> list[OutputPattern]:
    """Every comparison of a traced value with a constant, merged by constant (each with every place it is
    used and every source it is compared with), in file order."""
    merged: dict[tuple[str, str, LocalRef], tuple[set[str], dict[LocalRef, None], set[str]]] = {}
    for key, env in flow.envs.items():
        func = flow.funcs[key]
        state = _State(func, env, {})
        for kind, literal, labels, used, expression in _comparisons(flow, state):
            ref = LocalRef(literal.path, literal.line)
            sources, uses, expressions = merged.setdefault((kind, literal.value, ref), (set(), {}, set()))
            sources.update(labels)
            uses[used] = None
            expressions.add(expression)
    return sorted(
        (
            OutputPattern(kind, value, tuple(sorted(sources)), ref, tuple(uses), tuple(sorted(expressions)))
            for (kind, value, ref), (sources, uses, expressions) in merged.items()
        ),
        key=lambda p: (p.ref.path, p.ref.line, p.value),
    )


_Found = tuple[str, Literal, Labels, LocalRef, str]


def _comparisons(flow: Flow, state: _State) -> Iterator[_Found]:
    body = state.func.body
    if body is None:
        return
    captured = syntax.captures(_SINKS, body)
    for call in captured.get("call", []):
        yield from _call_comparison(flow, state, call)
    for compare in captured.get("compare", []):
        yield from _equality(flow, state, compare)
    for switch in captured.get("switch", []):
        yield from _switch_cases(flow, state, switch)


def _call_comparison(flow: Flow, state: _State, call: Node) -> Iterator[_Found]:
    function = unwrap(named(call, "function"))
    if function is None or function.type != "selector_expression":
        return
    where = where_of(state.func)
    operand = named(function, "operand")
    name = node_text(named(function, "field"))
    if flow.resolver.is_package_alias(operand, where):
        package = flow.program.import_path(where.path, node_text(operand))
        if package in ("strings", "bytes") and name in _SEARCHES:
            yield from _search(flow, state, call, _SEARCHES[name])
        elif package == "regexp" and name.startswith("Match"):
            yield from _regexp(flow, state, call, arguments(call)[:1], arguments(call)[1:])
    elif name.startswith(_REGEXP_USES):
        yield from _regexp(flow, state, call, [operand] if operand is not None else [], arguments(call))


def _search(flow: Flow, state: _State, call: Node, spec: tuple[str, int, int]) -> Iterator[_Found]:
    kind, searched, constant = spec
    args = arguments(call)
    if len(args) <= max(searched, constant):
        return
    pairs = [(args[searched], args[constant])]
    if kind.startswith("equals"):
        pairs.append((args[constant], args[searched]))
    for value, pattern in pairs:
        labels = flow.labels(value, state)
        if labels:
            yield from _found(flow.resolver, state.func, kind, pattern, labels, call, value)


def _regexp(
    flow: Flow, state: _State, call: Node, patterns: list[Node], subjects: list[Node]
) -> Iterator[_Found]:
    """A regular expression (a `regexp.MustCompile` constant) applied to a traced value."""
    labels: Labels = EMPTY
    subject = None
    for node in subjects:
        found = flow.labels(node, state)
        if found:
            labels, subject = labels | found, node
    if not labels or subject is None:
        return
    where = where_of(state.func)
    for pattern in patterns:
        for source in _compiled(flow.resolver, pattern, where):
            yield from _found(
                flow.resolver, state.func, "regexp", source[0], labels, call, subject, source[1]
            )


def _compiled(resolver: Resolver, pattern: Node, where: Where) -> Iterator[tuple[Node, Where]]:
    """The constant a regular expression is compiled from: `regexp.MustCompile(...)` given to a name."""
    pattern = unwrap(pattern) or pattern
    if pattern.type in ("interpreted_string_literal", "raw_string_literal"):
        yield pattern, where
        return
    for given, at in _values_of_name(resolver, pattern, where):
        value = unwrap(given)
        if value is not None and value.type == "call_expression" and arguments(value):
            yield arguments(value)[0], at


def _values_of_name(resolver: Resolver, name: Node, where: Where) -> list[tuple[Node, Where]]:
    """What a name (local, else package-level) is given."""
    if name.type != "identifier":
        return []
    values = [(b.value, where) for b in resolver.bindings(node_text(name), where) if b.value is not None]
    package_value = resolver.package_value(node_text(name), where)
    if package_value is not None and package_value[0].value is not None:
        values.append((package_value[0].value, package_value[1]))
    return values


def _equality(flow: Flow, state: _State, compare: Node) -> Iterator[_Found]:
    if node_text(named(compare, "operator")) not in ("==", "!="):
        return
    left, right = named(compare, "left"), named(compare, "right")
    for value, constant in ((left, right), (right, left)):
        labels = flow.labels(value, state)
        if labels and constant is not None and value is not None:
            yield from _found(flow.resolver, state.func, "equals", constant, labels, compare, value)


def _switch_cases(flow: Flow, state: _State, switch: Node) -> Iterator[_Found]:
    value = named(switch, "value")
    labels = flow.labels(value, state) if value is not None else EMPTY
    if not labels or value is None:
        return
    for case in (c for c in switch.named_children if c.type == "expression_case"):
        listed = named(case, "value")
        for constant in listed.named_children if listed is not None else []:
            yield from _found(flow.resolver, state.func, "equals", constant, labels, constant, value)


def _found(
    resolver: Resolver,
    func: Func,
    kind: str,
    constant: Node,
    labels: Labels,
    site: Node,
    subject: Node,
    at: Where | None = None,
) -> Iterator[_Found]:
    """The meaningful constants of a comparison: not empty, not only blanks (those say nothing of a format)."""
    used = LocalRef(func.path, site.start_point[0] + 1)
    for literal in resolver.literals(constant, at or where_of(func)):
        if literal.value.strip():
            yield kind, literal, labels, used, " ".join(node_text(subject).split())[:80]
