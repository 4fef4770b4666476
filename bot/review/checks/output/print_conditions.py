"""Lines Ollama matches that the bump prints at another verbosity, under other conditions, or through a
logger that now writes a level elsewhere."""

from __future__ import annotations

from functools import cache, partial
from typing import TYPE_CHECKING

from bot.review import flags, logformats
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.logsink import Sink, sink_drafts
from bot.review.printwhen import Upstream, logger_levels, logger_streams, when_drafts

if TYPE_CHECKING:
    from bot.review.run import Run


@check("output.print-conditions", area="server", inputs=("diff", "inventory", "ollama-build", "prints"))
def print_conditions(run: Run) -> list[Draft]:
    patterns = cache(lambda: logformats.printed_patterns(run.contracts.output_patterns))
    program = logformats.Program(run.writes_to, patterns, lambda _needles: iter(()))
    table = cache(lambda: flags.flag_table(run.new_code(run.arg_table_path) or ""))
    upstream = Upstream(
        run.new_code,
        table,
        cache(lambda: logger_levels(run.new_code, run.arg_table_path)),
        cache(lambda: logger_streams(run.new_code, run.arg_table_path)),
    )
    sink = Sink(run.writes_to, lambda: run.contracts.output_patterns, partial(_launches, run))
    built = [c for c in run.c_changes if run.consumers.builds(c.path)]
    return [
        *when_drafts(built, program, partial(_launches, run), upstream),
        *sink_drafts(built, sink, upstream),
    ]


def _launches(run: Run) -> tuple[LaunchSetting, ...]:
    return run.contracts.launch
