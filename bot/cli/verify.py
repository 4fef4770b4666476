"""`verify-source`: is the source CMake fetched the pinned ref plus the carried patches, nothing else?"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.console import emit
from bot.cli.upstreams import upstream_opener


def cmd_verify_source(args: argparse.Namespace) -> int:
    from bot.engine.verify import load_worktree_config, render, verify_source

    config = load_worktree_config(Path(args.repo))
    opener = upstream_opener(args.upstream_dir, config, args.quiet)
    given = {item.partition("=")[0] for item in args.upstream_dir}
    verdict = verify_source(config, Path(args.repo), args.build_dir, args.pin, args.pin in given, opener)
    emit(render(verdict))
    return 0 if verdict.ok else 1
