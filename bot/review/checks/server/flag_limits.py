"""New checks a flag's handler makes on the value Ollama passes: the handler of a flag Ollama starts the
program with now throws under a condition on its value (`if (!string_ends_with(value, ".gguf")) throw ...`),
so a start Ollama made before fails in the argument parsing."""

from __future__ import annotations

import re
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
        flag = next((f for f in flags.values() if f.line <= line <= f.end_line), None)
        if flag is None or not _tests_value(flag, condition):
            continue
        refs = tuple(r for name in flag.names for r in run.contracts.passed_flags.get(name, ()))
        if refs:
            drafts.append(_draft(table, flag, line, condition, message, refs))
    return drafts


def _tests_value(flag: Flag, condition: str) -> bool:
    """Whether the condition names the handler's value parameter (its last)."""
    m = _PARAMETERS.search(flag.handler)
    names = re.findall(r"\b([A-Za-z_]\w*)\s*(?:,|$)", m[1].strip()) if m else []
    return bool(names) and re.search(rf"\b{re.escape(names[-1])}\b", condition) is not None


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
