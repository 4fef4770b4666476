"""Values Ollama passes on the command line that the program now replaces: an assignment the bump adds (or
rewrites) to the member the handler of a flag Ollama passes fills (`cparams->n_ctx = n_ctx_min;`,
`params.n_ctx *= params.n_parallel;`), or to a local the file gives that member's value (`port =
params.port;` then `port = bound_port;`). The program may then run with another value than the one Ollama
chose and plans with. The argument table itself is `server.launch`'s and `server.flag-limits`'."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.flags import Flag, flag_table
from bot.review.paramdefaults import HANDLER_PARAMS
from bot.review.source import opening_line

if TYPE_CHECKING:
    from bot.review.run import Run

# an assignment (plain or compound) to a member (`x.m =`, `x->m *=`) or to a name a statement starts with
_ASSIGN = re.compile(r"(?:(?:\.|->)\s*|^\s*|[;{}]\s*)(\w+)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
REFS_SHOWN = 4
BLOCKS_UP = 3  # enclosing blocks whose conditions are read
BLOCK_REACH = 40  # lines above a line where the block holding it may open
GIVEN_REACH = 60  # lines above an assignment to a local where it may be given the member's value
FUNCTION_REACH = 400  # lines above an assignment where its function's parameters and flag locals are read
MAX_LINE = 2000  # characters of a line read


@dataclass(frozen=True)
class Passed:
    """A member a flag Ollama passes fills, and the name the handler gives the struct it fills."""

    member: str
    flag: str
    holder: str  # `params`: the structs the value is copied through are named after it
    refs: tuple[LocalRef, ...]


@check("server.flag-overrides", area="server", inputs=("diff", "inventory", "ollama-build"))
def flag_overrides(run: Run) -> list[Draft]:
    changes = [c for c in run.c_changes if _may_assign(c, run.arg_table_path)]
    members = _passed_members(run) if changes else {}
    built = _built_changes(run, changes) if members else []
    return [_draft(c, line, code, members[name]) for c in built for line, name, code in overrides(c, members)]


def _may_assign(change: FileChange, arg_table: str) -> bool:
    """Whether the change adds a line that may assign, to a file other than the argument table."""
    return (
        bool(change.new_path) and change.path != arg_table and any("=" in line for line in change.added_raw)
    )


def _passed_members(run: Run) -> dict[str, Passed]:
    passed = run.contracts.passed_flags
    return filled_members(flag_table(run.code_at_both(run.arg_table_path)[1] or ""), passed) if passed else {}


def _built_changes(run: Run, changes: list[FileChange]) -> list[FileChange]:
    started = {s.program for s in run.contracts.launch if s.kind == "flag"}
    return [c for c in changes if _started_code(run, c.path, started)]


def _started_code(run: Run, path: str, started: set[str]) -> bool:
    """Whether code at `path` is built into a program Ollama starts: shared code, or a tool's that names one."""
    programs = run.named_programs(path)
    return (programs is None or bool(programs & started)) and run.consumers.builds(path)


def filled_members(
    table: Mapping[str, Flag], passed: Mapping[str, tuple[LocalRef, ...]]
) -> dict[str, Passed]:
    """The member (its last name) each flag Ollama passes fills in its handler (`params.n_ctx = value;`)."""
    found: dict[str, Passed] = {}
    for name, refs in passed.items():
        flag = table.get(name)
        m = HANDLER_PARAMS.match(flag.handler) if flag else None
        if flag is None or m is None:
            continue
        filled = re.search(rf"\b{re.escape(m[2])}\s*\.\s*((?:\w+\s*\.\s*)*\w+)\s*=(?!=)", flag.handler)
        if filled:
            member = filled[1].rsplit(".", 1)[-1].strip()
            shown = next((n for n in flag.names if n.startswith("--")), name)
            found.setdefault(member, Passed(member, shown, m[2], refs))
    return found


def overrides(change: FileChange, members: Mapping[str, Passed]) -> Iterator[tuple[int, str, str]]:
    """(new line, member, code) of each assignment the change adds to one of the members of a struct named
    after the handler's (`cparams.n_ctx`), or to a local given such a member's value just above, that gives
    it another value: not the same member's copy, not a bound on it (`std::min(n, limit)`: the value's
    sense, as for the flag's own checks), not only while it holds one value, not as a removed line of the
    same hunk had it."""
    lines = [text[:MAX_LINE] for text in change.new_code_lines]
    for span in change.significant:
        removed = {_squeezed(code) for _, code in change.removed_code(span)}
        for line, code in ((n, text[:MAX_LINE]) for n, text in change.added_code(span)):
            for m in _ASSIGN.finditer(code):
                passed = members.get(m[1])
                if (
                    passed is not None
                    and _overrides(lines, line, code, m, passed)
                    and _squeezed(code) not in removed
                    and not _conditioned(lines, line, code[: m.start()], passed.member, _value(code, m))
                ):
                    yield line, passed.member, code.strip()


def _value(code: str, m: re.Match) -> str:
    return code[m.end() :].split(";", 1)[0].strip()


def _overrides(lines: list[str], line: int, code: str, m: re.Match, passed: Passed) -> bool:
    """Whether the assignment gives the member of a struct named after the handler's, or a name the file
    gives that member's value (a local declared with it just above), a value other than a copy of the
    member or a bound on it."""
    name = re.escape(passed.member)
    value = _value(code, m)
    if re.fullmatch(rf"(?:\w+\s*(?:\.|->)\s*)*{name}", value) or _bounds(value, passed.member):
        return False
    holder = re.search(r"(\w+)\s*(?:\.|->)\s*$", code[: m.start(1)])
    if holder is not None:
        return passed.holder in holder[1] and not _own_copy(lines, line, holder[1])
    copy = rf"{name}\s*=\s*\w*{re.escape(passed.holder)}\w*\s*(?:\.|->)\s*{name}\s*;"
    declared = re.compile(rf"(?<![\w.>]){copy}")  # a local's declaration: in the same function
    assigned = re.compile(rf"^\s*{copy}")  # a member's (or an outer local's) assignment: anywhere
    near = lines[max(0, line - 1 - GIVEN_REACH) : line - 1]
    return any(assigned.search(text) for text in lines) or any(declared.search(text) for text in near)


def _bounds(value: str, member: str) -> bool:
    """Whether the value is a bound on the member itself (`std::min(params.n_max, n_layers)`)."""
    bound = re.match(r"(?:std\s*::\s*)?(?:min|max|clamp|MIN|MAX)\s*\(", value)
    return bound is not None and re.search(rf"\b{re.escape(member)}\b", value[bound.end() :]) is not None


def _own_copy(lines: list[str], line: int, holder: str) -> bool:
    """Whether the struct is a copy the code holds: declared as one (`llama_model_params mparams_copy =
    *mparams;`), or a parameter of the function taken by value (`llama_model_params params)`). What it is
    given then changes the copy for the calls made with it, not what the start passed."""
    name = re.escape(holder)
    declared = re.compile(rf"^\s*(?:const\s+)?[\w:<>]+\s+{name}\s*=")
    by_value = re.compile(rf"[\w>]\s+{name}\s*[,)]")
    if any(declared.search(text) for text in lines):
        return True
    for text in reversed(lines[max(0, line - 1 - FUNCTION_REACH) : line - 1]):
        if by_value.search(text):
            return True
        if text.startswith("}"):  # the end of the function above
            return False
    return False


_LITERAL = r"(?:-?\d+(?:\.\d*)?[fFuUlL]*|\"[^\"]*\"|nullptr|true|false|(?:\w+::)*[A-Z][A-Z0-9_]+)"


def _conditioned(lines: list[str], line: int, before: str, member: str, value: str) -> bool:
    """Whether the assignment runs only while the member holds one value (`if (params.port == 8080)`,
    `== LLAMA_FLASH_ATTN_TYPE_AUTO`, or a flag local set so: an unset, default or automatic value filled),
    or only while it is past the value assigned (`if (n > limit) { n = limit; }`: a bound): read on the
    line before the assignment and on the lines opening the blocks it stands in."""
    name = rf"(?<!\w){re.escape(member)}\b"
    one_value = re.compile(rf"{name}\s*==\s*{_LITERAL}(?!\w)|{_LITERAL}\s*==\s*(?:\w+\s*(?:\.|->)\s*)*{name}")
    past = re.compile(rf"{name}\s*[<>]=?\s*{re.escape(value)}\s*\)") if value else None
    tests, inner = [before], line
    for _ in range(BLOCKS_UP):
        opened = opening_line(lines, inner, BLOCK_REACH)
        if opened is None:
            break
        tests.append(lines[opened - 1])
        inner = opened
    flags = _one_value_flags(lines, line, one_value)
    return any(
        one_value.search(test)
        or (past and past.search(test))
        or any(re.search(rf"\b{f}\b", test) for f in flags)
        for test in tests
    )


def _one_value_flags(lines: list[str], line: int, one_value: re.Pattern) -> list[str]:
    """The locals the lines above set to a one-value test of the member (`const bool auto_ctx = n_ctx ==
    0;`)."""
    found = []
    for text in lines[max(0, line - 1 - FUNCTION_REACH) : line]:
        m = re.search(r"\b(\w+)\s*=\s*([^;]*);", text) if ";" in text else None
        if m and one_value.search(m[2]):
            found.append(m[1])
    return found


def _squeezed(code: str) -> str:
    return re.sub(r"\s+", "", code)


def _draft(change: FileChange, line: int, code: str, passed: Passed) -> Draft:
    flag = code_span(passed.flag)
    return Draft(
        "server",
        "medium",
        f"llama-server may now run with another `{passed.member}` than the {passed.flag} Ollama passes",
        f"At the new ref, {code_span(code[:200])} ({code_span(f'{change.path}:{line}')}) gives `{passed.member}` "
        f"another value, where the handler of {flag} stores the value Ollama passes. Ollama chose that value "
        f"and plans with it: check under which condition the program now runs with another, and what Ollama "
        f"does with the value it passed.",
        change.path,
        line,
        ((line, line),),
        local_refs=passed.refs[:REFS_SHOWN],
        cause=f"flag-override:{passed.flag}",
    )
