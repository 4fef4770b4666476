"""llama-server's flags Ollama passes, removed or renamed in the argument table."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.review import flags
from bot.review.changes import Draft
from bot.review.checks import check, profile_data

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.flags", area="server", inputs=("diff", "inventory"))
def server_flags(run: Run) -> list[Draft]:
    """The flags Ollama passes, or sets through the environment names of the table's entries, that the
    argument table removes, deprecates, replaces or changes."""
    change = run.arg_table
    if change is None or not change.significant:
        return []
    old, new = flags.flag_table(change.old_code), _new_table(run)
    env = {s.name: s.refs for s in run.contracts.launch if s.kind == "env"}
    passed = flags.passed_or_set(run.contracts.passed_flags, env, old)
    if old and not new:
        return [flags.unread_table_draft(change, str(run.ctx.new.commit.id), passed)]
    return flags.flag_drafts(old, new, passed, change.new_line, change.path)


def _new_table(run: Run) -> dict[str, flags.Flag]:
    """The argument table's entries at the new ref, wherever the bump puts them."""
    entry = re.compile(profile_data(run.ctx.pin.review)["arg_table"]["entry"])
    return {
        name: flag
        for c in run.c_changes
        if c.new_path and entry.search(c.new_text)
        for name, flag in flags.flag_table(c.new_code).items()
    }
