"""Flags Ollama passes to the upstream programs it runs that no upstream source spells any more, beside
those of the argument table the bump changes (`server.flags` reads that)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import programflags
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.flags import flag_table

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "server.program-flags",
    area="server",
    inputs=("diff", "inventory"),
    applies=lambda run: bool(run.c_changes),
)
def program_flags(run: Run) -> list[Draft]:
    table = run.arg_table  # its flags are the argument table check's
    return programflags.gone_flag_drafts(
        run.c_changes,
        [s for s in run.contracts.launch if table is None or s.name not in flag_table(table.old_code)],
        lambda name: run.spelled_unchanged(f'"{name}"', lambda code: name in programflags.spelled(code)),
    )
