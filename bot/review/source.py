"""Text helpers every detector shares: comments out, tokens, globs, C argument lists, string literals.

Detectors look at code, never at comments, so that a comment-only or
whitespace-only upstream change produces nothing; blanking comments keeps
every offset and line number of the original text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache

from bot.markup import code_block
from bot.model import LocalRef

# The sized integer types C and C++ code names as often as keywords.
FIXED_WIDTH_TYPES = (
    "size_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
)

C_LIKE = frozenset(
    [
        ".c",
        ".cc",
        ".cpp",
        ".cxx",
        ".h",
        ".hh",
        ".hpp",
        ".hxx",
        ".inc",
        ".cu",
        ".cuh",
        ".m",
        ".mm",
        ".metal",
        ".comp",
        ".glsl",
        ".wgsl",
        ".cl",
        ".js",
        ".mjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".go",
        ".java",
        ".rs",
        ".swift",
        ".kt",
        ".cs",
    ]
)
C_SOURCES = frozenset(
    [".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc", ".cu", ".cuh", ".m", ".mm"]
)
HASH_LIKE = frozenset([".cmake", ".py", ".sh", ".bash", ".toml", ".yml", ".yaml", ".mk", ".ps1"])
HASH_NAMES = frozenset({"CMakeLists.txt", "Dockerfile", "Makefile", "Containerfile"})
# comment syntax by extension: `.py`, also a `#` language, has its own scanner
_COMMENT_SYNTAX = {**dict.fromkeys(HASH_LIKE, "hash"), ".py": "py", **dict.fromkeys(C_LIKE, "c")}

_C_SCAN = re.compile(
    r'''//[^\n]*|/\*.*?\*/|/\*.*|R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"'''
    r"""|'(?:\\.|[^'\\\n])*'|`[^`]*`""",
    re.DOTALL,
)
_HASH_SCAN = re.compile(r'#\[(=*)\[.*?\]\1\]|#[^\n]*|"(?:\\.|[^"\\])*"', re.DOTALL)
_PY_SCAN = re.compile(r'#[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
_SCANNERS = {"c": _C_SCAN, "hash": _HASH_SCAN, "py": _PY_SCAN}
_MARKERS = {"c": ("//", "/*"), "hash": ("#",), "py": ("#",)}
_TOKEN = re.compile(r"\w+|[^\w\s]")


def extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind(".") :] if "." in name else ""


@lru_cache(maxsize=4096)
def comment_syntax(path: str) -> str | None:
    """'c', 'hash', 'py' or None (no comments known: only whitespace is ignored)."""
    syntax = _COMMENT_SYNTAX.get(extension(path))
    name = path.rsplit("/", 1)[-1]
    if syntax is None and (name in HASH_NAMES or name.startswith(("Dockerfile", "requirements"))):
        return "hash"
    return syntax


def _blank(text: str) -> str:
    """Every character but a newline as a space (a one-line comment, the most common, in one step)."""
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(line) for line in text.split("\n"))


def code_text(text: str, path: str) -> str:
    """`text` with its comments replaced by spaces (newlines kept), string literals left intact."""
    syntax = comment_syntax(path)
    if syntax is None or not any(m in text for m in _MARKERS[syntax]):
        return text
    scanner = _SCANNERS[syntax]
    pieces: list[str] = []
    at = 0
    for m in scanner.finditer(text):
        if text[m.start()] in "/#":  # a comment; strings are matched only to be skipped
            pieces += [text[at : m.start()], _blank(m.group(0))]
            at = m.end()
    return "".join(pieces) + text[at:] if pieces else text


def _open_comment_tail(lines: list[str]) -> list[str]:
    """An excerpt's lines with a block comment that began above it blanked: text before a `*/`
    that no `/*` opens, or leading ` * ` continuation lines."""
    text = "\n".join(lines)
    close = text.find("*/")
    if close != -1 and not 0 <= text.find("/*") < close:
        return (_blank(text[: close + 2]) + text[close + 2 :]).split("\n")
    if not text.lstrip().startswith("*"):
        return lines
    lead = 0
    while lead < len(lines) and re.match(r"\s*\*(?:\s|$)", lines[lead]):
        lead += 1
    return [""] * lead + lines[lead:] if lead else lines


def region_code(regions: list[list[str]], path: str) -> list[list[str]]:
    """Comment-free lines of excerpts (hunks) of one file, without reading the whole file.

    Only a block comment that began above an excerpt cannot be seen from it; see
    `_open_comment_tail`. C-like excerpts are blanked in one pass, fenced by `*/`
    lines so that a comment left open in one cannot swallow the next."""
    syntax = comment_syntax(path)
    if syntax is None:
        return regions
    if syntax != "c":
        return [code_text("\n".join(r), path).split("\n") if r else [] for r in regions]
    fixed = [_open_comment_tail(r) for r in regions]
    lines = code_text("\n*/\n".join("\n".join(r) for r in fixed), path).split("\n")
    out, at = [], 0
    for r in fixed:
        out.append(lines[at : at + len(r)])
        at += max(len(r), 1) + 1  # an empty excerpt still holds one (empty) line before its fence
    return out


def may_hold_comments(lines: list[str], path: str) -> bool:
    """Whether comment-stripping could change these lines (a cheap test before doing it)."""
    syntax = comment_syntax(path)
    if syntax is None:
        return False
    text = "\n".join(lines)
    if syntax != "c":
        return "#" in text
    return (
        "//" in text or "/*" in text or "*/" in text or any(line.lstrip().startswith("*") for line in lines)
    )


def squash(text: str) -> str:
    """`text` without any whitespace: equal squashes mean a reformat, not a change."""
    return "".join(text.split())


def same_code(old: str, old_path: str, new: str, new_path: str) -> bool:
    """Whether two versions of a file hold the same code, comments and whitespace aside (their `code_text`
    squashes are equal): read from where they can first differ, and only as far as they agree."""
    syntax = comment_syntax(old_path)
    if syntax != comment_syntax(new_path) or syntax is None:
        return squash(code_text(old, old_path)) == squash(code_text(new, new_path))
    start = _resync_point(old, new, syntax)
    return _same_stream(_code_pieces(old, start, syntax), _code_pieces(new, start, syntax))


def _resync_point(old: str, new: str, syntax: str) -> int:
    """An offset where scanning both texts for comments gives what a scan from their start gives, and before
    which their code is the same: within the lines both begin with, after the last comment or string that
    ends there. Only C-like texts qualify (a CMake string can span lines), and only without a raw string, a
    template literal or an escaped newline before their first difference (each can read past it)."""
    same = _common_prefix(old, new)
    prefix = old.rfind("\n", 0, same) + 1  # the lines both texts begin with, each whole
    if syntax != "c" or any(old.find(token, 0, prefix) >= 0 for token in _SPANS_LINES):
        return 0
    opener = old.find("/*", 0, prefix)
    if opener < 0:
        return prefix  # every comment and string before it ends on its own line
    resume = old.rfind("\n", 0, opener) + 1
    for m in _C_SCAN.finditer(old, resume):
        if m.end() > prefix or m.end() == len(old):  # the latter an unclosed comment: longer in the other
            break
        resume = m.end()
    return resume


_SPANS_LINES = ('R"', "`", "\\\n")  # a raw string, a template literal, an escaped newline in a literal


def _common_prefix(old: str, new: str) -> int:
    """The length of the longest prefix the texts share."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old.startswith(new[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _code_pieces(text: str, start: int, syntax: str) -> Iterator[str]:
    """The text from `start` between its comments, in order."""
    at = start
    for m in _SCANNERS[syntax].finditer(text, start):
        if text[m.start()] in "/#":
            yield text[at : m.start()]
            at = m.end()
    yield text[at:]


def _same_stream(left: Iterator[str], right: Iterator[str]) -> bool:
    """Whether two streams of text squash to the same text, read no further than their first difference (each
    squashed piece is compared once, so the time is the length of what is read, whatever the pieces)."""
    texts, at = ["", ""], [0, 0]  # the last piece squashed, per side, and how much of it was matched
    sources, live = [left, right], [True, True]
    while any(live):
        rest = [len(texts[0]) - at[0], len(texts[1]) - at[1]]
        side = 0 if live[0] and (rest[0] <= rest[1] or not live[1]) else 1
        if rest[side]:
            return False  # the other stream ended short of this one
        piece = next(sources[side], None)
        if piece is None:
            live[side] = False
            continue
        texts[side], at[side] = squash(piece), 0
        shared = min(len(texts[0]) - at[0], len(texts[1]) - at[1])
        if texts[0][at[0] : at[0] + shared] != texts[1][at[1] : at[1] + shared]:
            return False
        at = [at[0] + shared, at[1] + shared]
    return len(texts[0]) - at[0] == len(texts[1]) - at[1]


def tokens(text: str) -> list[str]:
    """Whitespace-insensitive tokens: equal token lists mean a reformat, not a change."""
    return _TOKEN.findall(text)


class LineIndex:
    """1-based line numbers of offsets in one text."""

    def __init__(self, text: str):
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect_right(self._starts, offset)


# a glob's pieces: a wildcard, a closed `{a,b}`, or one character taken as written
_GLOB_PIECE = re.compile(r"\*\*/|\*\*|\*|\?|\{[^}]*\}|.", re.DOTALL)
_WILDCARDS = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}


_DECLARED_GLOBS: dict[tuple[str, ...], None] = {}  # every tuple made by `globs`, in order


def globs(*patterns: str) -> tuple[str, ...]:
    """Path globs, declared: made at import, their regex is among those `compile_globs` compiles."""
    _DECLARED_GLOBS[patterns] = None
    return patterns


def compile_globs(more: Iterable[tuple[str, ...]] = ()) -> None:
    """The regex of every declared tuple of globs and of `more`, compiled now rather than at first use."""
    for patterns in (*_DECLARED_GLOBS, *more):
        _globs_regex(patterns)


def _glob_source(pattern: str) -> str:
    return "".join(_glob_piece(m[0]) for m in _GLOB_PIECE.finditer(pattern)) + r"\Z"


def _glob_piece(piece: str) -> str:
    """The regex of one piece of a glob: a wildcard, an alternation, else the character itself."""
    if piece in _WILDCARDS:
        return _WILDCARDS[piece]
    if piece.startswith("{") and len(piece) > 1:
        return "(?:" + "|".join(re.escape(a) for a in piece[1:-1].split(",")) + ")"
    return re.escape(piece)


@lru_cache(maxsize=512)
def _globs_regex(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{_glob_source(p)})" for p in patterns) or "(?!)")


def glob_match(path: str, patterns: Iterable[str]) -> bool:
    """Shell-style globs over '/'-paths: `*` stays in one directory, `**/` spans any, `{a,b}` alternates."""
    return _globs_regex(tuple(patterns)).match(path) is not None


def matching_paths(paths: Iterable[str], globs: Iterable[str]) -> list[str]:
    """The paths the globs name, sorted."""
    return sorted(p for p in paths if glob_match(p, globs))


def non_test_paths(paths: Iterable[str], globs: Iterable[str]) -> list[str]:
    """The paths the globs name, sorted, Go test files aside: the code Ollama ships."""
    return [p for p in matching_paths(paths, globs) if not p.endswith("_test.go")]


_ARG_TOKEN = re.compile(
    r"""R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[()\[\]{},]""", re.DOTALL
)
_OPEN = {"(": ")", "[": "]", "{": "}"}


def opening_line(lines: list[str], line: int, reach: int) -> int | None:
    """The line opening the block that holds `line` (1-based), by indentation: the nearest non-blank line
    above indented less, within `reach` lines."""
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for n in range(line - 1, max(0, line - reach), -1):
        text = lines[n - 1]
        if text.strip() and len(text) - len(text.lstrip()) < indent:
            return n
    return None


def split_args(code: str, open_at: int) -> tuple[list[str], int]:
    """Top-level comma-separated arguments of the bracket at `open_at`, and the offset after its closer."""
    depth, start = 0, open_at + 1
    args: list[str] = []
    for m in _ARG_TOKEN.finditer(code, open_at):
        t = m.group(0)
        if t in _OPEN:
            depth += 1
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                return _with_last(args, code[start : m.start()]), m.end()
        elif t == "," and depth == 1:
            args.append(code[start : m.start()])
            start = m.end()
    return [a.strip() for a in args], len(code)


def _with_last(args: list[str], last: str) -> list[str]:
    """The arguments, stripped, with the text before the closer: a blank one only after a comma (`f()` has
    no argument, `f(a, )` two)."""
    return [a.strip() for a in (args + [last] if last.strip() or args else args)]


_LITERAL_PIECE = re.compile(
    r'\s*(?:"((?:\\.|[^"\\\n])*)"|R"([^()\\\s"]{0,16})\((.*?)\)\2"|(PRI[diouxX]\w*))', re.DOTALL
)
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "a": "\a",
    "e": "\x1b",
}


def c_unescape(body: str) -> str:
    return re.sub(
        r"\\(x[0-9a-fA-F]{1,2}|.)",
        lambda m: chr(int(m[1][1:], 16)) if m[1][0] == "x" and len(m[1]) > 1 else _ESCAPES.get(m[1], m[1]),
        body,
    )


def string_value(expr: str) -> str | None:
    """The value of adjacent C string literals at the start of `expr` (`"a" PRIu64 "b"` too), else None."""
    pos, parts = 0, []
    while True:
        m = _LITERAL_PIECE.match(expr, pos)
        if not m:
            break
        if m[1] is not None:
            parts.append(c_unescape(m[1]))
        elif m[3] is not None:
            parts.append(m[3])
        else:
            parts.append("ll" + m[4][3])
        pos = m.end()
    return "".join(parts) if parts else None


def local_refs(
    files: Mapping[str, str], globs, pattern: re.Pattern | None, limit: int = 10
) -> tuple[LocalRef, ...]:
    """Lines of the Ollama files matching `globs` where `pattern` matches (line 1 of each without one); Go
    test files aside, as they consume nothing Ollama ships."""
    refs: list[LocalRef] = []
    for path in non_test_paths(files, globs):
        if pattern is None:
            refs.append(LocalRef(path, 1))
        else:
            _add_matching_lines(refs, path, files[path], pattern, limit)
        if len(refs) >= limit:
            break
    return tuple(refs[:limit])


def _add_matching_lines(refs: list[LocalRef], path: str, text: str, pattern: re.Pattern, limit: int) -> None:
    """Adds to `refs` each line of `text` where `pattern` matches (once a line), until `refs` holds `limit`."""
    index = None
    for m in pattern.finditer(text):
        index = index or LineIndex(text)
        ref = LocalRef(path, index.line(m.start()))
        if not refs or refs[-1] != ref:
            refs.append(ref)
        if len(refs) >= limit:
            return


def refs_by_name(
    files: Mapping[str, str], globs, pattern: re.Pattern, limit: int | None = None
) -> dict[str, list[LocalRef]]:
    """Where each name `pattern` finds (its first group, else the whole match) stands in the Ollama files
    matching `globs`: at most `limit` lines a name."""
    found: dict[str, list[LocalRef]] = {}
    for path in matching_paths(files, globs):
        _add_refs_by_name(found, path, files[path], pattern, limit)
    return found


def _add_refs_by_name(
    found: dict[str, list[LocalRef]], path: str, text: str, pattern: re.Pattern, limit: int | None
) -> None:
    """Adds to `found` each line of `text` where `pattern` finds a name, under that name, while the name
    holds fewer than `limit` lines."""
    index = None
    for m in pattern.finditer(text):
        index = index or LineIndex(text)
        refs = found.setdefault(m[1] if pattern.groups else m[0], [])
        ref = LocalRef(path, index.line(m.start()))
        if (limit is None or len(refs) < limit) and ref not in refs:
            refs.append(ref)


def excerpt(removed: list[str], added: list[str], limit: int = 8) -> str:
    """A short markdown diff of changed lines."""
    lines = [f"- {t.rstrip()[:160]}" for t in removed[: limit // 2]] + [
        f"+ {t.rstrip()[:160]}" for t in added[: limit // 2]
    ]
    return code_block(lines, "diff") if lines else ""


# a group holding a quantifier that is itself quantified (`(a+)+`, `(\w*x)*`): what backtracks exponentially
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)\s*[*+{]")


def searchable(pattern: str, limit: int = 200) -> re.Pattern[str] | None:
    """A regular expression from a text someone else wrote (a CMake file, a preset), compiled when it is
    short and cannot backtrack without end on the short texts it is tried on; None otherwise (not judged)."""
    if len(pattern) > limit or _NESTED_QUANTIFIER.search(pattern):
        return None
    try:
        return re.compile(pattern)
    except re.error:
        return None
