"""What a piece of upstream C++ reaches by name, read from comment-free text: the string constants of its body,
of the functions it calls (followed a few calls deep) and of the file-scope tables those read; and the default
member initializers of the structs a header declares.

Text-based on purpose: the question is which names a handler can know, over a handful of files per review, and
a definition is a line that opens a parameter list and then a body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from bot.review.source import LineIndex, c_unescape

STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')
NAME_LIKE = re.compile(r"[A-Za-z0-9][\w.+:/-]*")  # a value name: chatml, draft-mtp, mmap+mlock, on, -1
_CALL = re.compile(r"(?<![\w.>$])((?:\w+::)*)([A-Za-z_]\w*)\s*(?:<[^<>;(){}\"]*>)?\s*\(")
_KEYWORDS = frozenset(
    {
        *("if", "for", "while", "switch", "return", "sizeof", "catch", "case", "do", "else", "throw"),
        *("new", "delete", "static_cast", "const_cast", "reinterpret_cast", "dynamic_cast", "decltype"),
        *("alignof", "typeid", "defined", "noexcept", "operator", "static_assert"),
    }
)
# what stands before a defined name on its line: a head starts the line (free functions, out-of-class members)
_HEAD_START = re.compile(r"(?:[A-Za-z_][^\n;{}()#=\"]*?[\s*&:])?")
_NOT_A_HEAD = re.compile(r"(?:return|if|for|while|switch|else|case|do|throw)\b")
_OPENS_PARAMETERS = re.compile(r"\s*\(")
_TABLE = re.compile(
    r"(?m)^[ \t]*(?:(?:static|inline|const|constexpr)\s+)*[\w:]+(?:\s*<[^;{}=]*>)?[\s*&]+"
    r"([A-Za-z_]\w*)\s*(?:\[[^\]\n]*\])?\s*=\s*\{"
)
_AFTER_PARAMETERS = re.compile(
    r"\s*(?:(?:const|noexcept|override|final|mutable)\b\s*|->\s*[\w:<>,\s*&]+?)*\{"
)
_TOKEN = re.compile(
    r'R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[(){}]', re.DOTALL
)
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
MAX_BODY = 200_000  # characters of one body or table; a longer one is read up to this


def closing(code: str, open_at: int) -> int:
    """The offset just after the bracket that closes the one at `open_at` (strings skipped); the end of
    the text when it is never closed."""
    depth = 0
    limit = min(len(code), open_at + MAX_BODY)
    for m in _TOKEN.finditer(code, open_at, limit):
        token = m[0]
        if token in "({":
            depth += 1
        elif token in ")}":
            depth -= 1
            if depth == 0:
                return m.end()
    return limit


def literals(code: str) -> set[str]:
    """The string constants of a piece of code, unescaped."""
    return {c_unescape(m[1]) for m in STRING.finditer(code)}


def names(values: set[str]) -> set[str]:
    """The constants that can be a value's name (no spaces, format directives or punctuation runs)."""
    return {v for v in values if len(v) <= 64 and NAME_LIKE.fullmatch(v)}


def calls(code: str) -> list[str]:
    """The names of the free functions a piece of code calls (a qualifier dropped); member calls, the
    standard library's, macros (upper case) and declarations with constructor arguments (`std::string s(x)`)
    left out."""
    code = STRING.sub('""', code)
    found = []
    for m in _CALL.finditer(code):
        name = m[2]
        if name in _KEYWORDS or m[1].startswith("std::") or name.isupper() or _declared_here(code, m.start()):
            continue
        found.append(name)
    return list(dict.fromkeys(found))


_AFTER_TYPE = re.compile(r"(?:([>*&])|\b(\w+))\s*$")
_LEADING = frozenset({"return", "else", "throw", "case", "new", "co_return", "and", "or", "not"})


def _declared_here(code: str, at: int) -> bool:
    """Whether the name at `at` follows a type (a word, `>`, `*`, `&`): a variable declared with
    constructor arguments, not a call (`return f(x)` is a call)."""
    m = _AFTER_TYPE.search(code[max(0, at - 40) : at])
    return m is not None and (m[1] is not None or m[2] not in _LEADING)


@dataclass(frozen=True)
class Body:
    path: str
    line: int
    text: str


class Index:
    """The function definitions and file-scope braced tables of some files (path -> comment-free code), read
    by name on demand: a file is searched only for the names asked of it, and its tables are read only once
    a function of it is reached. `home` is the file the code asked about comes from."""

    def __init__(
        self,
        texts: Mapping[str, str],
        home: str = "",
        holding: Callable[[str], Iterable[str]] | None = None,
        wider: Callable[[], Index] | None = None,
    ):
        self.texts = texts
        self.home = home
        self.wider = wider  # the index over more files, for a call this one cannot resolve
        self._holding = holding or (lambda word: [p for p, code in texts.items() if word in code])
        self._functions: dict[str, list[Body]] = {}
        self._tables: dict[str, dict[str, Body]] = {}
        self._lines: dict[str, LineIndex] = {}

    def functions(self, name: str) -> list[Body]:
        """Every definition of a function of that name (a qualifier ignored)."""
        if name not in self._functions:
            self._functions[name] = [
                body
                for path in self._holding(name)
                if name in self.texts[path]
                for body in self._bodies(path, name)
            ]
        return self._functions[name]

    def tables(self, path: str) -> dict[str, Body]:
        """The braced tables (`NAME = { ... }`) a file defines, by name."""
        if path not in self._tables:
            code = self.texts.get(path, "")
            found: dict[str, Body] = {}
            for m in _TABLE.finditer(code):
                brace = m.end() - 1
                found.setdefault(
                    m[1], Body(path, self._line(path, m.start()), code[brace : closing(code, brace)])
                )
            self._tables[path] = found
        return self._tables[path]

    def _bodies(self, path: str, name: str) -> Iterator[Body]:
        """The definitions of `name` in one file: each place the name opens a parameter list on a line that
        starts a definition's head, and a body follows."""
        code = self.texts[path]
        at = code.find(name)
        while at >= 0:
            head = _head(code, at, name)
            if head is not None:
                body = _AFTER_PARAMETERS.match(code, closing(code, head))
                if body is not None:
                    end = closing(code, body.end() - 1)
                    yield Body(path, self._line(path, at), code[at:end])
            at = code.find(name, at + len(name))

    def _line(self, path: str, offset: int) -> int:
        if path not in self._lines:
            self._lines[path] = LineIndex(self.texts[path])
        return self._lines[path].line(offset)


def _head(code: str, at: int, name: str) -> int | None:
    """The offset of the parameter list's `(` when the name at `at` is a definition's name (the whole word,
    at the end of its line's head); None otherwise."""
    end = at + len(name)
    if (at and (code[at - 1].isalnum() or code[at - 1] == "_")) or (
        end < len(code) and (code[end].isalnum() or code[end] == "_")
    ):
        return None
    paren = _OPENS_PARAMETERS.match(code, end)
    if paren is None:
        return None
    start = code.rfind("\n", 0, at) + 1
    prefix = code[start:at]
    if _NOT_A_HEAD.match(prefix) or not _HEAD_START.fullmatch(prefix):
        return None
    return paren.end() - 1


@dataclass(frozen=True)
class Reach:
    """What a piece of code reaches: its constants and those of what it calls or reads, the functions it
    calls that no indexed file defines, and the places read."""

    literals: frozenset[str]
    unresolved: frozenset[str]
    places: tuple[tuple[str, int, str], ...]  # (path, line, name) of each function and table read


def reach(code: str, index: Index, depth: int = 2) -> Reach:
    """The constants `code` reaches: its own, those of the functions it calls up to `depth` calls deep, and
    those of the file-scope tables any of them names."""
    found: set[str] = set()
    unresolved: set[str] = set()
    places: dict[tuple[str, int, str], None] = {}
    seen: set[str] = set()
    frontier = [(index.home, code)]
    for level in range(depth + 1):
        following: list[tuple[str, str]] = []
        for path, text in frontier:
            found |= literals(text)
            found |= _table_literals(text, index.tables(path) if path else {}, places)
            if level == depth:
                continue
            for name in calls(text):
                if name in seen:
                    continue
                seen.add(name)
                bodies = index.functions(name)
                if not bodies:
                    unresolved.add(name)
                for body in bodies:
                    places[(body.path, body.line, name)] = None
                    following.append((body.path, body.text))
        frontier = following
    return Reach(frozenset(found), frozenset(unresolved), tuple(places))


def _table_literals(
    code: str, tables: Mapping[str, Body], places: dict[tuple[str, int, str], None]
) -> set[str]:
    """The constants of the tables (of the code's own file) that the code names."""
    found: set[str] = set()
    for name in set(_WORD.findall(STRING.sub('""', code))) & tables.keys():
        table = tables[name]
        places[(table.path, table.line, name)] = None
        found |= literals(table.text)
    return found


# ------------------------------------------------------------------------------------------ struct defaults


@dataclass(frozen=True)
class Member:
    """A struct member with a default member initializer."""

    struct: str
    name: str
    kind: str  # its declared type, as written
    default: str  # the initializer, squashed
    line: int


_STRUCT = re.compile(r"\bstruct\s+([A-Za-z_]\w*)\s*(?::[^{;]*)?\{")
_MEMBER = re.compile(
    r"^\s*((?:(?:struct|enum|const|static|constexpr|mutable)\s+)*[\w:]+(?:\s*<[^;{}=]*>)?[\s*&]+)"
    r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(=\s*([^;]*?)|\{([^;]*)\})?\s*;",
    re.DOTALL,
)
_STATEMENT_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|[{};]')
_DEFINE = re.compile(r"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+?)[ \t]*$")


@lru_cache(maxsize=64)
def structs(code: str) -> dict[str, dict[str, Member]]:
    """Each struct of a header with its members (name -> member; `default` empty for one without an
    initializer), nested struct bodies left to their own entry."""
    index = LineIndex(code)
    found: dict[str, dict[str, Member]] = {}
    for m in _STRUCT.finditer(code):
        brace = m.end() - 1
        end = closing(code, brace)
        found.setdefault(m[1], {}).update(_members(m[1], code, brace + 1, end - 1, index))
    return found


def _members(struct: str, code: str, start: int, end: int, index: LineIndex) -> dict[str, Member]:
    """The members declared at the top level of one struct body."""
    members: dict[str, Member] = {}
    for statement_start, statement in _statements(code, start, end):
        m = _MEMBER.match(statement)
        if m is None or "(" in m[1]:
            continue
        default = m[4] if m[4] is not None else (m[5] or "")
        line = index.line(statement_start + m.start(2))
        members[m[2]] = Member(struct, m[2], " ".join(m[1].split()), " ".join(default.split()), line)
    return members


def _statements(code: str, start: int, end: int) -> Iterator[tuple[int, str]]:
    """The top-level `;`-ended statements of a body (nested braces kept inside their statement)."""
    depth = 0
    begin = start
    for m in _STATEMENT_TOKEN.finditer(code, start, end):
        token = m[0]
        if token in "{}":
            depth += 1 if token == "{" else -1
            if depth == 0 and not code[m.end() : m.end() + 40].lstrip().startswith((";", ",")):
                begin = m.end()  # a body that ends a declaration without `;`: a function's
        elif token == ";" and depth == 0:
            yield begin, code[begin : m.end()]
            begin = m.end()


def defines(code: str) -> dict[str, str]:
    """The object-like macros of a text: name -> replacement."""
    return {m[1]: m[2] for m in _DEFINE.finditer(code)}


def resolved(expression: str, macros: Mapping[str, str], depth: int = 3) -> str:
    """An initializer with the macros it names replaced by their values (a few levels)."""
    for _ in range(depth):
        replaced = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: macros.get(m[0], m[0]), expression)
        if replaced == expression:
            break
        expression = replaced
    return expression


def member_paths(
    tables: Mapping[str, Mapping[str, Member]], root: str, depth: int = 3
) -> dict[tuple[str, ...], Member]:
    """Every member reachable from struct `root`, by its path of member names (`sampling`, `temp`)."""
    paths: dict[tuple[str, ...], Member] = {}
    frontier: list[tuple[tuple[str, ...], str]] = [((), root)]
    for _ in range(depth):
        following = []
        for prefix, struct in frontier:
            for name, member in tables.get(struct, {}).items():
                path = (*prefix, name)
                paths[path] = member
                kind = member.kind.replace("struct ", "").strip(" *&")
                if kind in tables and kind != struct:
                    following.append((path, kind))
        frontier = following
    return paths
