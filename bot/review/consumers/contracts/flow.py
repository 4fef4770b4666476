"""Which values of Ollama's Go code hold what an upstream program printed or answered.

The sources are the output of a command that runs an upstream program (its `StdoutPipe`/`StderrPipe`, `Output`,
`CombinedOutput`, and the writers assigned to its `Stdout`/`Stderr`: their `Write` method's argument, and every
value of such a writer type) and the response of an HTTP request sent to it. From there a value is followed
through assignments, function arguments and results (a function's result counts when every value it returns
comes from a source or is a zero value), struct fields it is stored in, the `Write` and `Append` calls that
collect it, `json.Unmarshal`/`Decode` and the standard library's string and byte functions. Each value carries
labels naming its sources ("llama-server stderr", "POST /completion response"); an error (`err`, `fooErr`) or
a function's own constant is never one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.lang.syntax import node_text
from bot.review.consumers.contracts.gocode import (
    Func,
    FuncKey,
    arguments,
    named,
    unwrap,
)
from bot.review.consumers.contracts.launches import Command, Request
from bot.review.consumers.contracts.resolve import Resolver, Where, where_of

Labels = frozenset[str]
EMPTY: Labels = frozenset()

MAX_VISITS = 20_000  # functions taken up in one run, analysed or not: the bound on a pathological tree
_PASSES = 4  # passes over one function's assignments (loops feed values back)

_PIPES = {
    "StdoutPipe": "stdout",
    "StderrPipe": "stderr",
    "Output": "stdout",
    "CombinedOutput": "stdout+stderr",
}
_STREAMS = {"Stdout": "stdout", "Stderr": "stderr"}
_ERROR_NAME = re.compile(r"^(err|ok|.*Err)$")
_NOT_DATA_METHODS = {"Err", "Error", "Close", "Scan", "Wait", "Kill", "Start", "Run", "Len", "Load"}
_NOT_DATA_CALLS = {("fmt", "Errorf"), ("errors", "New"), ("errors", "Is"), ("errors", "As")}
_NO_DATA_BUILTINS = {"len", "cap", "make", "new", "delete", "copy", "panic", "close", "print", "println"}
_COLLECTORS = ("Write", "Append", "Add", "Store")
_DECODERS = {"Unmarshal": 1, "Decode": 0}  # method -> position of the value it fills
_ZERO = {'""', "nil", "0", "false", "``"}


@dataclass
class _State:
    """One function's analysis: the labels of its locals, what it hands on, and the shared entries it read (the
    parameters it was given, the results of the functions it calls, the fields it reads) as it read them."""

    func: Func
    env: dict[str, Labels]
    pending: dict[FuncKey, dict[int, Labels]]
    params: dict[int, Labels] = field(default_factory=dict)
    returns: dict[tuple[FuncKey, int], Labels] = field(default_factory=dict)
    fields: dict[tuple[str, str], Labels] = field(default_factory=dict)
    writers: dict[tuple[str, str], Labels | None] = field(default_factory=dict)


class Flow:
    """The labels of the values of the functions that handle an upstream program's output."""

    def __init__(self, resolver: Resolver, commands: list[Command], requests: list[Request]):
        self.resolver = resolver
        self.program = resolver.program
        self.params: dict[FuncKey, dict[int, Labels]] = {}
        self.returns: dict[FuncKey, dict[int, Labels]] = {}
        self.fields: dict[tuple[str, str], Labels] = {}
        self.writers: dict[tuple[str, str], Labels] = {}
        self.envs: dict[FuncKey, dict[str, Labels]] = {}
        self.funcs: dict[FuncKey, Func] = {}
        self.callers: dict[FuncKey, set[FuncKey]] = {}
        self._seeded: dict[FuncKey, dict[str, Labels]] = {}
        self._pipes = {(c.func.key, c.variable): c.label for c in commands if c.variable}
        self._inline = {(c.func.path, c.node.start_byte): c.label for c in commands}
        self._requests = {(r.func.key, r.variable): r.label for r in requests if r.variable}
        self._sent = {(r.func.path, r.node.start_byte): r.label for r in requests if not r.variable}
        self._edges: dict[FuncKey, list[tuple[str | Node, Node, int, int]]] = {}
        self._kinds: dict[tuple[FuncKey, str], tuple[str, str] | None] = {}
        self._analysed: dict[FuncKey, _State] = {}  # each function's last analysis that left fields unchanged
        self.analyses = 0  # functions analysed; one taken up again with what it reads unchanged is not
        self.visits = 0
        for command in commands:
            self._seed_streams(command)
        self._run(self._seeds(commands, requests))

    # ---- seeds -----------------------------------------------------------------------------------------------

    def _seed_streams(self, command: Command) -> None:
        """The writers a command's Stdout/Stderr are given."""
        if not command.variable:
            return
        for target, value in self.program.scope(command.func).stores:
            operand = named(target, "operand")
            stream = _STREAMS.get(node_text(named(target, "field")))
            if target.type == "selector_expression" and stream and node_text(operand) == command.variable:
                self._seed_writer(value, command.where, frozenset({f"{command.label} {stream}"}), 3)

    def _seed_writer(self, expr: Node | None, where: Where, labels: Labels, depth: int) -> None:
        expr = unwrap(expr)
        if expr is None or depth <= 0:
            return
        if expr.type == "unary_expression":
            return self._seed_writer(named(expr, "operand"), where, labels, depth)
        kind = self.resolver.type_of(expr, where)
        if kind is not None:
            self.writers[kind] = self.writers.get(kind, EMPTY) | labels
        elif expr.type == "identifier" and where.func is not None:
            self._seed_name(expr, where.func, labels, depth)

    def _seed_name(self, expr: Node, func: Func, labels: Labels, depth: int) -> None:
        """A local writer of no module type (a bytes.Buffer) holds the output; a parameter is followed to the
        arguments its function's calls pass."""
        name = node_text(expr)
        bindings = self.resolver.bindings(name, where_of(func))
        params = [b.index for b in bindings if b.kind == "param" and b.index >= 0]
        if not params:
            table = self._seeded.setdefault(func.key, {})
            table[name] = table.get(name, EMPTY) | labels
            return
        for caller, call in self.resolver.call_sites(func):
            args = arguments(call)
            if params[0] < len(args):
                self._seed_writer(args[params[0]], where_of(caller), labels, depth - 1)

    def _seeds(self, commands: list[Command], requests: list[Request]) -> list[Func]:
        """The functions that run an upstream program or send it requests, every function of the packages
        defining a writer of its output (they read what it collected), and those writers' `Write` methods."""
        seeds = [c.func for c in commands] + [r.func for r in requests]
        for directory in sorted({directory for directory, _ in self.writers}):
            seeds += self.program.package(directory).all_functions()
        for (directory, kind), labels in self.writers.items():
            for method in self.program.package(directory).methods.get("Write", []):
                if method.receiver == kind:
                    self._merge_param(method.key, 0, labels)
        return list({f.key: f for f in seeds}.values())

    # ---- the fixpoint ----------------------------------------------------------------------------------------

    def _run(self, seeds: list[Func]) -> None:
        queue: list[Func] = list(seeds)
        while queue:
            self._drain(queue)
            queue = self._writers_grown()

    def _drain(self, queue: list[Func]) -> None:
        queued = {f.key for f in queue}
        while queue and self.visits < MAX_VISITS:
            func = queue.pop(0)
            queued.discard(func.key)
            for follow in self._visit(func):
                if follow.key not in queued:
                    queue.append(follow)
                    queued.add(follow.key)

    def _writers_grown(self) -> list[Func]:
        """A writer holds whatever its `Write` was given: when that grew, the functions reading writers of
        the type are looked at again."""
        grown = False
        for (directory, kind), labels in list(self.writers.items()):
            for method in self.program.package(directory).methods.get("Write", []):
                given = self.params.get(method.key, {}).get(0, EMPTY) if method.receiver == kind else EMPTY
                grown |= _merge(self.writers, (directory, kind), given)
        if not grown or self.visits >= MAX_VISITS:
            return []
        self._kinds.clear()
        return list(self.funcs.values())

    def _visit(self, func: Func) -> list[Func]:
        """Analyse one function, unless what its last analysis read is as it was then (the analysis would find
        the same again): then only what it hands on is offered again, as a new analysis would."""
        self.visits += 1
        last = self._analysed.get(func.key)
        if last is not None and self._reads_unchanged(last):
            return self._hand_on(last)
        return self._analyse(func)

    def _reads_unchanged(self, state: _State) -> bool:
        return (
            self.params.get(state.func.key, {}) == state.params
            and all(self._returned(key, index) == read for (key, index), read in state.returns.items())
            and all(self.fields.get(key, EMPTY) == read for key, read in state.fields.items())
            and all(self.writers.get(kind) == read for kind, read in state.writers.items())
        )

    def _analyse(self, func: Func) -> list[Func]:
        """Analyse one function; the functions to look at again because of what it found."""
        self.analyses += 1
        self.funcs[func.key] = func
        state = _State(func, {}, {}, dict(self.params.get(func.key, {})))
        state.env = self._initial_env(state)
        fields_before = dict(self.fields)
        for _ in range(_PASSES):
            if not self._pass(state):
                break
        self.envs[func.key] = state.env
        for call in func.calls:
            self.labels(call, state)  # every call hands its arguments on, whatever becomes of its result
        follow = self._returns_changed(func, state)
        follow += self._hand_on(state)
        if self.fields != fields_before:
            follow += [f for k, f in self.funcs.items() if k != func.key and f.package == func.package]
            self._analysed.pop(func.key, None)  # what it read of the fields is not what they began as
        else:
            self._analysed[func.key] = state
        return follow

    def _initial_env(self, state: _State) -> dict[str, Labels]:
        func = state.func
        env = dict(self._seeded.get(func.key, {}))
        params = func.params()
        for index, labels in self.params.get(func.key, {}).items():
            if index < len(params) and params[index][0]:
                env[params[index][0]] = env.get(params[index][0], EMPTY) | labels
        receiver = func.receiver_param()
        if receiver is not None and receiver[0]:
            kind = self.resolver.type_ref(receiver[1], where_of(func))
            if kind is not None and self._writer(state, kind) is not None:
                env[receiver[0]] = self.writers[kind]
        return env

    def _pass(self, state: _State) -> bool:
        changed = False
        for target, value, index, arity in self._edges_of(state.func):
            labels = self.labels(value, state, index if arity > 1 else 0)
            if labels and self._store(state, target, labels):
                changed = True
        return changed

    def _store(self, state: _State, target: str | Node, labels: Labels) -> bool:
        """Give a target (a local name, a field, a map or slice element) the labels; whether that added any."""
        if isinstance(target, str):
            return _merge(state.env, target, labels)
        node = unwrap(target) or target
        while node.type in ("index_expression", "slice_expression", "unary_expression"):
            node = named(node, "operand") or node
        if node.type == "identifier":
            return _merge(state.env, node_text(node), labels)
        if node.type == "selector_expression":
            return _merge(self.fields, (state.func.package, node_text(named(node, "field"))), labels)
        return False

    def _hand_on(self, state: _State) -> list[Func]:
        follow: list[Func] = []
        for key, updates in state.pending.items():
            for index, labels in updates.items():
                if (self._merge_param(key, index, labels) or key not in self.envs) and key in self.funcs:
                    follow.append(self.funcs[key])
        return follow

    def _merge_param(self, key: FuncKey, index: int, labels: Labels) -> bool:
        return _merge(self.params.setdefault(key, {}), index, labels)

    def _returns_changed(self, func: Func, state: _State) -> list[Func]:
        results = {i: self._result_labels(func, state, i) for i in range(max(len(func.results()), 1))}
        if results == self.returns.get(func.key, {}):
            return []
        self.returns[func.key] = results
        return [self.funcs[k] for k in self.callers.get(func.key, ()) if k in self.funcs]

    def _result_labels(self, func: Func, state: _State, index: int) -> Labels:
        """A result's labels when every value returned there comes from a source or is a zero value."""
        found: Labels = EMPTY
        for value, _ in self.resolver.returned(func, index):
            labels = self.labels(value, state)
            if not labels and node_text(value) not in _ZERO:
                return EMPTY
            found |= labels
        return found

    # ---- the edges of one function ---------------------------------------------------------------------------

    def _edges_of(self, func: Func) -> list[tuple[str | Node, Node, int, int]]:
        """(target, value, result index, arity): where a value goes in the function (a target is a local name,
        or the node of a field, element or collecting receiver)."""
        if func.key not in self._edges:
            self._edges[func.key] = list(self._collect_edges(func))
        return self._edges[func.key]

    def _collect_edges(self, func: Func) -> Iterator[tuple[str | Node, Node, int, int]]:
        scope = self.program.scope(func)
        for name, bindings in scope.bindings.items():
            if _ERROR_NAME.match(name):
                continue
            for binding in bindings:
                if binding.value is not None:
                    yield name, binding.value, binding.index, binding.arity
        for target, value in scope.stores:
            yield target, value, 0, 1
        for call in func.calls:
            yield from _call_edges(call)

    # ---- labels ----------------------------------------------------------------------------------------------

    def labels(self, expr: Node | None, state: _State, index: int = 0) -> Labels:
        """The sources of an expression's value; none for one nested deeper than Python's stack reads (a
        generated expression of thousands of terms), rather than a crash."""
        try:
            return self._labels(expr, state, index)
        except RecursionError:
            return EMPTY

    def _labels(self, expr: Node | None, state: _State, index: int = 0) -> Labels:
        expr = unwrap(expr)
        if expr is None:
            return EMPTY
        reader = _READERS.get(expr.type)
        if reader is not None:
            return reader(self, expr, state, index)
        if expr.type in _PASS_THROUGH:
            return self._labels(named(expr, "operand"), state)
        return EMPTY

    def _identifier(self, expr: Node, state: _State, index: int) -> Labels:
        name = node_text(expr)
        found = state.env.get(name, EMPTY)
        if self.writers and not _ERROR_NAME.match(name):
            kind = self._kind_of(state.func, expr)
            found = found | (self._writer(state, kind) or EMPTY) if kind else found
        return found

    def _writer(self, state: _State, kind: tuple[str, str]) -> Labels | None:
        """What the writers of a type hold (None for a type not a writer's), read by the analysis."""
        state.writers.setdefault(kind, self.writers.get(kind))
        return self.writers.get(kind)

    def _kind_of(self, func: Func, expr: Node) -> tuple[str, str] | None:
        """The module type of a name or field read in a function, asked once."""
        key = (func.key, node_text(expr))
        if key not in self._kinds:
            where = where_of(func)
            if expr.type == "selector_expression":
                declared = self.resolver.field_declaration(expr, where, 2)
                at = Where(None, declared[1]) if declared else where
                self._kinds[key] = (
                    self.resolver.type_ref(named(declared[0], "type"), at) if declared else None
                )
            else:
                self._kinds[key] = self.resolver.type_of(expr, where, 2)
        return self._kinds[key]

    def _selector(self, expr: Node, state: _State, index: int) -> Labels:
        where = where_of(state.func)
        operand = named(expr, "operand")
        if self.resolver.is_package_alias(operand, where):
            return EMPTY
        key = (state.func.package, node_text(named(expr, "field")))
        state.fields.setdefault(key, self.fields.get(key, EMPTY))
        found = self._labels(operand, state) | self.fields.get(key, EMPTY)
        if self.writers:
            kind = self._kind_of(state.func, expr)
            found |= (self._writer(state, kind) or EMPTY) if kind else EMPTY
        return found

    def _binary(self, expr: Node, state: _State, index: int) -> Labels:
        if node_text(named(expr, "operator")) not in ("+",):
            return EMPTY
        return self._labels(named(expr, "left"), state) | self._labels(named(expr, "right"), state)

    def _call(self, expr: Node, state: _State, index: int) -> Labels:
        function = unwrap(named(expr, "function"))
        if function is None:
            return EMPTY
        if function.type == "selector_expression":
            return self._selector_call(expr, function, state, index)
        if function.type == "identifier":
            return self._plain_call(expr, node_text(function), state, index)
        if function.type in ("slice_type", "array_type", "qualified_type", "type_identifier"):
            return self._union(arguments(expr), state)
        return EMPTY

    def _plain_call(self, call: Node, name: str, state: _State, index: int) -> Labels:
        if name in _NO_DATA_BUILTINS:
            return EMPTY
        callees = self.resolver.callees(call, where_of(state.func))
        if callees:
            return self._module_call(call, callees, state, index)
        return self._union(arguments(call), state)

    def _selector_call(self, call: Node, function: Node, state: _State, index: int) -> Labels:
        where = where_of(state.func)
        operand = named(function, "operand")
        method = node_text(named(function, "field"))
        if self.resolver.is_package_alias(operand, where):
            return self._package_call(call, node_text(operand), method, state, index)
        source = self._source(state.func, operand, method, call)
        if source:
            return source
        if method in _NOT_DATA_METHODS:
            return EMPTY
        found = self._labels(operand, state)
        callees = self.resolver.callees(call, where)
        if callees:
            return found | self._module_call(call, callees, state, index)
        return found | self._union(arguments(call), state)

    def _source(self, func: Func, operand: Node | None, method: str, call: Node) -> Labels:
        """The labels of a command's output read through a pipe (of a command kept in a name, or called on
        directly), or of a response to a request sent."""
        if method in _PIPES and operand is not None:
            program = self._pipes.get((func.key, node_text(operand))) or self._inline.get(
                (func.path, operand.start_byte)
            )
            if program:
                return frozenset({f"{program} {_PIPES[method]}"})
        if method == "Do":
            for arg in arguments(call):
                label = self._requests.get((func.key, node_text(arg)))
                if label:
                    return frozenset({f"{label} response"})
        return EMPTY

    def _package_call(self, call: Node, alias: str, name: str, state: _State, index: int) -> Labels:
        where = where_of(state.func)
        directory = self.program.imported(where.path, alias)
        if directory is not None:
            return self._module_call(call, self.program.functions_named(directory, name), state, index)
        sent = self._sent.get((state.func.path, call.start_byte))
        if sent:
            return frozenset({f"{sent} response"})
        import_path = self.program.import_path(where.path, alias) or alias
        if (import_path, name) in _NOT_DATA_CALLS:
            return EMPTY
        found = self._union(arguments(call), state)
        return _streamed(found) if import_path == "bufio" else found

    def _module_call(self, call: Node, callees: list[Func], state: _State, index: int) -> Labels:
        """Hand the arguments' labels to the callees' parameters; the labels of the result asked for."""
        found: Labels = EMPTY
        args = arguments(call)
        for callee in callees:
            self.funcs.setdefault(callee.key, callee)
            self.callers.setdefault(callee.key, set()).add(state.func.key)
            updates = state.pending.setdefault(callee.key, {})
            for i, arg in enumerate(args):
                labels = self._labels(arg, state)
                if labels:
                    updates[i] = updates.get(i, EMPTY) | labels
            state.returns.setdefault((callee.key, index), self._returned(callee.key, index))
            found |= self._returned(callee.key, index)
        return found

    def _returned(self, key: FuncKey, index: int) -> Labels:
        return self.returns.get(key, {}).get(index, EMPTY)

    def _union(self, nodes: list[Node], state: _State) -> Labels:
        found: Labels = EMPTY
        for node in nodes:
            found |= self._labels(node.named_children[0] if node.type == "variadic_argument" else node, state)
        return found

    def _index(self, expr: Node, state: _State, index: int) -> Labels:
        return self._labels(named(expr, "operand"), state)


def _streamed(labels: Labels) -> Labels:
    """A response read line by line is its stream."""
    return frozenset(
        label.removesuffix(" response") + " stream" if label.endswith(" response") else label
        for label in labels
    )


def _merge(table: dict, key, labels: Labels) -> bool:
    """Add labels to a table's entry; whether that added any."""
    old = table.get(key, EMPTY)
    table[key] = old | labels
    return table[key] != old


def _call_edges(call: Node) -> list[tuple[Node, Node, int, int]]:
    """A `x.Write(v)`/`x.Append(v)` collects v into x; `json.Unmarshal(data, &x)` and `dec.Decode(&x)` fill x."""
    function = named(call, "function")
    if function is None or function.type != "selector_expression":
        return []
    method = node_text(named(function, "field"))
    operand = named(function, "operand")
    args = arguments(call)
    if method.startswith(_COLLECTORS):
        return (
            [(operand, arg, 0, 1) for arg in args]
            if operand is not None and operand.type in _RECEIVERS
            else []
        )
    return _decode_edge(method, operand, args)


def _decode_edge(method: str, operand: Node | None, args: list[Node]) -> list[tuple[Node, Node, int, int]]:
    position = _DECODERS.get(method)
    if position is None or position >= len(args):
        return []
    source = args[0] if method == "Unmarshal" else operand
    return [(args[position], source, 0, 1)] if source is not None else []


_RECEIVERS = ("identifier", "selector_expression")


_READERS = {
    "identifier": Flow._identifier,
    "selector_expression": Flow._selector,
    "call_expression": Flow._call,
    "binary_expression": Flow._binary,
    "index_expression": Flow._index,
    "slice_expression": Flow._index,
}

_PASS_THROUGH = ("type_conversion_expression", "type_assertion_expression", "unary_expression")
