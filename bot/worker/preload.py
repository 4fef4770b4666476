"""What the service's forkserver builds before it forks any analysis child.

Importing this module is all a forkserver's preload does (`multiprocessing.set_forkserver_preload`): it
imports the engine and builds what every analysis would otherwise build again, each child inheriting it
copy-on-write. Only what no analysis changes is built here; each analysis still runs in a fresh child with
its own limits, whose address-space limit is counted from what the child starts with.
"""

from __future__ import annotations

import bot.decisions.releases
import bot.engine
import bot.ollama.crosspin
import bot.review
from bot.lang import syntax
from bot.review.ruleset import load_rules
from bot.review.source import compile_globs
from bot.worker import childanalysis

__all__ = ["bot", "childanalysis", "warm_up"]


def warm_up() -> None:
    """Compile every declared tree-sitter query and glob, and the shipped review rules with their globs:
    some 100 ms an analysis child would spend before reading its first file."""
    syntax.compile_patterns()
    rules = load_rules({})
    compile_globs(globs for rule in rules for globs in (rule.paths, rule.exclude_paths, rule.local_paths))


warm_up()
