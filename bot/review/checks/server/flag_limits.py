"""New checks a flag's handler makes on the text Ollama passes: the handler of a flag Ollama starts the
program with now throws under a condition on its string value (`if (!string_ends_with(value, ".gguf")) throw
...`), so a start Ollama made before fails in the argument parsing. A number's new bounds are left alone (Ollama
passes numbers it computed within their sense), and so is a throw in the `else` of a chain of the values the
handler names (what it accepts by name is `server.launch`'s)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review import limits
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.flags import Flag, flag_table

if TYPE_CHECKING:
    from bot.review.run import Run

_PARAMETERS = re.compile(r"\[[^\]]*\]\s*\(([^)]*)\)")  # a lambda's parameter list


@check("server.flag-limits", area="server", inputs=("diff", "inventory"))
def flag_limits(run: Run) -> list[Draft]:
    table = run.arg_table
    if table is None or not table.significant or not limits.may_reject(table.changed_raw[0]):
        return []
    flags = flag_table(table.new_code)
    drafts = []
    for line, condition, message in limits.new_rejections(table):
        flag = _checking(flags.values(), line, condition)
        refs = (
            tuple(r for name in flag.names for r in run.contracts.passed_flags.get(name, ())) if flag else ()
        )
        if flag and refs:
            drafts.append(_draft(table, flag, line, condition, message, refs))
    return drafts


def _checking(flags: Iterable[Flag], line: int, condition: str) -> Flag | None:
    """The flag whose entry holds a new rejection at `line` that tests the text its handler takes (not in
    the `else` of a chain of names)."""
    flag = next((f for f in flags if f.line <= line <= f.end_line), None)
    if flag is None or re.search(r"\belse\b", condition) or not _tests_text(flag, condition):
        return None
    return flag


def _tests_text(flag: Flag, condition: str) -> bool:
    """Whether the condition names the handler's value parameter (its last), a string."""
    m = _PARAMETERS.search(flag.handler)
    last = m[1].rsplit(",", 1)[-1].strip() if m else ""
    name = re.search(r"([A-Za-z_]\w*)$", last)
    if name is None or not re.search(r"\b(?:string|char)\b", last):
        return False
    return re.search(rf"\b{re.escape(name[1])}\b", condition) is not None


def _draft(
    table: FileChange, flag: Flag, line: int, condition: str, message: str, refs: tuple[LocalRef, ...]
) -> Draft:
    name = next((n for n in flag.names if n.startswith("--")), flag.names[0])
    said = f" ({code_span(message)})" if message else ""
    squeezed = " ".join(condition.split())
    test = m[1] if (m := re.fullmatch(r"if\s*\((.*)\)\s*\{?", squeezed)) else squeezed
    return Draft(
        "server",
        "high",
        f"llama-server now rejects some values of {name}, which Ollama passes",
        f"The handler of {code_span(name)} now throws when {code_span(test[:160])}{said}. "
        "Ollama passes the flag on its starts: a value it passed before may now fail the start in the "
        "argument parsing. Check the values Ollama passes, or pass them so they meet the new check.",
        table.path,
        line,
        ((line, line),),
        local_refs=tuple(dict.fromkeys(refs))[:6],
        cause=f"flag-limit:{name}",
    )
