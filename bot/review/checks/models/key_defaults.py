"""Model keys: an optional key's default changed, or the key now required, where Ollama's code leaves some
of its models without the key."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import modelkeys
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("models.key-defaults", area="models", inputs=("diff", "ollama-code"))
def key_defaults(run: Run) -> list[Draft]:
    touched = [c for c in run.c_changes if c.old_path and c.significant and "get_key" in c.new_text]
    if not touched:
        return []
    keys, archs = modelkeys.table_names(run.new_code(run.anchor_path("arch_table")) or "")
    changed = [read for c in touched for read in modelkeys.changed_reads(c, archs)]
    return modelkeys.key_drafts(changed, keys, run.local) if changed else []
