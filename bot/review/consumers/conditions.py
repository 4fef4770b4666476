"""CMake `if()` conditions, evaluated over three values (true, false, unknown): which options a branch
of upstream's build depends on, given the values Ollama's build sets."""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from bot.lang import cmakelang
from bot.lang.syntax import node_text
from bot.review.consumers.shared import CMAKE_TOKEN, ON_VALUES, truth_of

_UNARY_TESTS = frozenset({"DEFINED", "EXISTS", "TARGET", "COMMAND", "POLICY", "IS_DIRECTORY", "IS_ABSOLUTE"})
_FALSE_VALUES = frozenset({"OFF", "FALSE", "NO", "0"})


def condition(tokens: list[str], value: Mapping[str, bool]) -> bool | None:
    """CMake's `if()` condition over three values: True, False, or None (depends on what is not known)."""
    return _Condition(tokens, value).either()


class _Condition:
    """A recursive-descent reading of one condition: OR over AND over NOT over primaries, as CMake binds them."""

    def __init__(self, tokens: list[str], value: Mapping[str, bool]):
        self.tokens, self.value, self.at = tokens, value, 0

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
            if self.peek() is not None:  # its operand, whatever it is
                self.take()
            return None
        if self.operand_follows():  # a binary test: STREQUAL, MATCHES, ...
            self.take()
            self.skip_operand()
            return None
        return self.truth(token)

    def parenthesised(self) -> bool | None:
        self.take()
        result = self.either()
        if self.peek() == ")":
            self.take()
        return result

    def operand_follows(self) -> bool:
        return self.peek() not in (None, "AND", "OR", ")")

    def skip_operand(self) -> None:
        if self.operand_follows():
            self.take()

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
