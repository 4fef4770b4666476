"""Request text llama-server now prints at a verbosity Ollama starts it with, where Ollama scans each line it
prints for its own markers: the starts and patterns of the Go packages that send the server requests."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from bot.review import echoes
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.flags import flag_table
from bot.review.gopatterns import is_program_output
from bot.review.printwhen import Threshold, call_level, logger_levels, verbosity_flags
from bot.review.producers import definition_above

if TYPE_CHECKING:
    from bot.review.run import Run


@check("output.request-echo", area="server", inputs=("diff", "inventory", "wire-groups"))
def request_echo(run: Run) -> list[Draft]:
    changes = [c for c in run.server_changes if c.old_path and c.significant and run.parses_requests(c.path)]
    found = _found(run, changes) if changes else []
    if not found:
        return []
    packages = {posixpath.dirname(r.path) for refs in run.contracts.endpoints.values() for r in refs}
    return echoes.echo_drafts(found, _starts(run, packages), _sent(run), _patterns(run, packages))


def _found(run: Run, changes: list[FileChange]) -> list[echoes.Echo]:
    levels = logger_levels(run.new_code, run.arg_table_path)
    logging = (posixpath.dirname(run.arg_table_path),)  # where the logger's header is
    found = []
    for c in changes:

        def level_of(call: str, path: str = c.path) -> int | None:
            return call_level(call, path, run.new_code, levels, logging)

        def start_of(line: int, lines: list[str] = c.new_code_lines) -> int:
            return (definition_above(lines, line) or (1, ""))[0]

        found += echoes.echoes(c, level_of, start_of)
    return found


def _starts(run: Run, packages: set[str]) -> list[Threshold]:
    """The verbosity flags Ollama passes from the packages that send requests, with where."""
    flags = flag_table(run.code_at_both(run.arg_table_path)[1] or "")
    return [
        Threshold(value, name, near)
        for name, value, refs in verbosity_flags(run.contracts.launch, flags)
        if (near := tuple(r for r in refs if posixpath.dirname(r.path) in packages))
    ]


def _patterns(run: Run, packages: set[str]) -> list[OutputPattern]:
    """Ollama's patterns on a program's output, written in the packages that send requests."""
    return [
        p
        for p in run.contracts.output_patterns
        if is_program_output(p) and posixpath.dirname(p.ref.path) in packages
    ]


def _sent(run: Run) -> set[str]:
    """The names of the request fields Ollama sends, at any depth."""
    return {
        f.path.rsplit(".", 1)[-1].removesuffix("[]")
        for f in run.contracts.request_fields
        if f.direction == "request"
    }
