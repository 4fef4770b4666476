"""Where a warm `check` spends its time: the same run as `python -m bot check ARGS`, in-process, with timers
around its stages, printed as one JSON object on stderr's last line.

    python -m bench.warm_breakdown check --repo ... --format json --quiet

The analysis runs in this process (not in the child `check` forks), so that the timers see it. The patch
stage is `bot.engine.pins.check_pin`, the review `bot.review.review_pin`, and tree-sitter's share of
them every parse `bot.lang.syntax.root` does (each text is parsed once however many detectors ask).
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import functools
import gc
import json
import os
import sys
from collections.abc import Callable

import bot.cli

gc.set_threshold(*bot.cli.ONE_RUN_GC)  # as `python -m bot check` runs

import bot.cli.analysis
import bot.engine.pins
import bot.lang.syntax
import bot.review

IMPORTED = time.perf_counter()
spent = {"patches": 0.0, "review": 0.0, "parsing": 0.0, "parses": 0}


def _timed(key: str, call: Callable) -> Callable:
    @functools.wraps(call)
    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - started
            spent["parses"] += key == "parsing"

    return timed


def _in_process(target: Callable, limits: object) -> object:
    """The analysis in this process, not a forked child: the timers are this process's."""
    return target(None)


def main() -> int:
    bot.cli.analysis.run_limited = _in_process
    bot.engine.pins.check_pin = _timed("patches", bot.engine.pins.check_pin)
    bot.engine.pins.review_pin = _timed("review", bot.engine.pins.review_pin)
    bot.lang.syntax.parse = _timed(
        "parsing", bot.lang.syntax.parse
    )  # behind the kept trees: hits cost nothing
    sys.argv = ["llama-bot", *sys.argv[1:]]
    try:
        code = bot.cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    ended = time.perf_counter()
    print(json.dumps({**spent, "imports": IMPORTED - STARTED, "run": ended - IMPORTED}), file=sys.stderr)
    return code


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # as `python -m bot` ends: no teardown of the interpreter
