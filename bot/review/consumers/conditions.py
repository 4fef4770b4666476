"""CMake `if()` conditions, evaluated over three values (true, false, unknown): which options a branch
of upstream's build depends on, given the values Ollama's build sets. Given the text of variables too (one
build's), comparisons are evaluated (`ARCH MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS 61`), `DEFINED` of a
variable the build gives is true; anything else stays unknown."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping

from tree_sitter import Node

from bot.lang import cmakelang
from bot.lang.syntax import node_text
from bot.review.consumers.shared import CMAKE_TOKEN, ON_VALUES, truth_of
from bot.review.source import searchable

_UNARY_TESTS = frozenset({"DEFINED", "EXISTS", "TARGET", "COMMAND", "POLICY", "IS_DIRECTORY", "IS_ABSOLUTE"})
_FALSE_VALUES = frozenset({"OFF", "FALSE", "NO", "0"})
MAX_PATTERN = 200  # characters of a `MATCHES` expression evaluated (a longer one is unknown)
MAX_SUBJECT = 200  # characters of a text a `MATCHES` expression is tried on


def condition(
    tokens: list[str], value: Mapping[str, bool], strings: MutableMapping[str, str] | None = None
) -> bool | None:
    """CMake's `if()` condition over three values: True, False, or None (depends on what is not known).
    `strings`, the text of the variables one build gives (a `MATCHES` sets `CMAKE_MATCH_<n>` there)."""
    return _Condition(tokens, value, strings).either()


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _matches(left: str, right: str, strings: MutableMapping[str, str]) -> bool | None:
    compiled = searchable(right, MAX_PATTERN)
    if compiled is None or len(left) > MAX_SUBJECT:
        return None
    found = compiled.search(left)
    if found is not None:
        strings.update({f"CMAKE_MATCH_{n}": g or "" for n, g in enumerate([found[0], *found.groups()])})
    return found is not None


def _compared(
    test: Callable[[float, float], bool],
) -> Callable[[str, str, MutableMapping[str, str]], bool | None]:
    def compare(left: str, right: str, _: MutableMapping[str, str]) -> bool | None:
        a, b = _number(left), _number(right)
        return None if a is None or b is None else test(a, b)

    return compare


_BINARY: dict[str, Callable[[str, str, MutableMapping[str, str]], bool | None]] = {
    "MATCHES": _matches,
    "STREQUAL": lambda left, right, _: left == right,
    "LESS": _compared(lambda a, b: a < b),
    "GREATER": _compared(lambda a, b: a > b),
    "EQUAL": _compared(lambda a, b: a == b),
    "LESS_EQUAL": _compared(lambda a, b: a <= b),
    "GREATER_EQUAL": _compared(lambda a, b: a >= b),
}


class _Condition:
    """A recursive-descent reading of one condition: OR over AND over NOT over primaries, as CMake binds them."""

    def __init__(
        self, tokens: list[str], value: Mapping[str, bool], strings: MutableMapping[str, str] | None = None
    ):
        self.tokens, self.value, self.at = tokens, value, 0
        self.strings = strings

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1]

    def either(self) -> bool | None:
        result = self.both()
        while self.peek() == "OR":
            self.take()
            right = self.both()
            result = (
                True if True in (result, right) else (False if result is False and right is False else None)
            )
        return result

    def both(self) -> bool | None:
        result = self.negation()
        while self.peek() == "AND":
            self.take()
            right = self.negation()
            result = False if False in (result, right) else (True if result and right else None)
        return result

    def negation(self) -> bool | None:
        if self.peek() == "NOT":
            self.take()
            inner = self.negation()
            return None if inner is None else not inner
        return self.primary()

    def primary(self) -> bool | None:
        token = self.peek()
        if token is None:
            return None
        if token == "(":
            return self.parenthesised()
        self.take()
        if token in _UNARY_TESTS:
            operand = self.take() if self.peek() is not None else None  # its operand, whatever it is
            return self.defined(operand) if token == "DEFINED" else None
        if self.operand_follows():  # a binary test: STREQUAL, MATCHES, ...
            test = self.take()
            right = self.take() if self.operand_follows() else None
            return self.binary(token, test, right)
        return self.truth(token)

    def defined(self, name: str | None) -> bool | None:
        """`DEFINED name`: true for a variable the build gives; unknown otherwise (upstream may set it)."""
        return True if self.strings is not None and name in self.strings else None

    def binary(self, left: str, test: str, right: str | None) -> bool | None:
        """A comparison of two texts, when both are known to this build."""
        compare = _BINARY.get(test)
        if compare is None or self.strings is None or right is None:
            return None
        a, b = self.text(left), self.text(right)
        return None if a is None or b is None else compare(a, b, self.strings)

    def text(self, token: str) -> str | None:
        """An operand's text: a quoted string (its variables known), a variable's value, or the word itself
        (a word that names no variable the build gives may be one upstream sets: a number alone is sure)."""
        assert self.strings is not None
        if token.startswith('"'):
            inner = token[1:-1]
            if "${" not in inner:
                return inner
            whole = re.fullmatch(r"\$\{(\w+)\}", inner)
            return self.strings.get(whole[1]) if whole else None
        if token in self.strings:
            return self.strings[token]
        return token if _number(token) is not None else None

    def parenthesised(self) -> bool | None:
        self.take()
        result = self.either()
        if self.peek() == ")":
            self.take()
        return result

    def operand_follows(self) -> bool:
        return self.peek() not in (None, "AND", "OR", ")")

    def truth(self, token: str) -> bool | None:
        """A lone constant or variable: its value when known."""
        if token.startswith('"') or "${" in token:
            return None
        if token in self.value:
            return self.value[token]
        return truth_of(token) if token.upper() in ON_VALUES | _FALSE_VALUES else None


def guard(tokens: list[str], value: Mapping[str, bool]) -> str | None:
    """The option whose value makes a false condition false: a conjunct `X` with X OFF or `NOT X` with X ON."""
    for conjunct in conjuncts(tokens):
        if condition(conjunct, value) is False:
            names = [t for t in conjunct if t in value]
            if names:
                return names[0]
    return None


def conjuncts(tokens: list[str]) -> list[list[str]]:
    """The condition's tokens split at its `AND`s outside parentheses."""
    depth = 0
    conjuncts: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        depth += token == "("
        depth -= token == ")"
        if token == "AND" and depth == 0:
            conjuncts.append(current)
            current = []
        else:
            current.append(token)
    conjuncts.append(current)
    return conjuncts


def condition_tokens(command: Node) -> list[str]:
    """The tokens of an if/elseif/else command's condition."""
    return CMAKE_TOKEN.findall(" ".join(node_text(c) for c in cmakelang.children(command, "argument_list")))
