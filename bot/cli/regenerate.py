"""`regenerate`: the rebuilt patches written in place in the working tree, and what was done to each."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.analysis import analyse_change, failures, write_rebuilt
from bot.cli.change import Change, open_change, shown, uncommitted, working_tree
from bot.cli.console import UsageError, emit
from bot.model import Report


def cmd_regenerate(args: argparse.Namespace) -> int:
    change = open_change(args)
    root = _writable_tree(args, change)
    report, _ = analyse_change(args, change, review=False)
    written = write_rebuilt(root, report)
    for line in _done(report, root, written):
        emit(line)
    return failures(report) or (1 if report.unresolved else 0)  # a patch left for a person: exit 1


def _writable_tree(args: argparse.Namespace, change: Change) -> Path:
    """The working tree regenerate rewrites: none (a bare repository), or uncommitted edits it would
    overwrite, is a usage error."""
    root = working_tree(change.repo)
    if root is None:
        raise UsageError(f"--repo {args.repo}: a bare repository has no working tree to rewrite")
    dirty = uncommitted(change.repo, change.config)
    if dirty:
        raise UsageError(
            f"uncommitted changes to {shown(dirty)}: commit or stash them first "
            "(regenerate reads the committed revision and rewrites the working tree)"
        )
    return root


def _done(report: Report, root: Path, written: list[Path]) -> list[str]:
    """A line a patch: rewritten or left, and why; one line when no pin was touched."""
    if not report.pins and not report.failed:
        return ["No pin is touched by this change: nothing to regenerate."]
    return [
        f"{pin.name}: {'rewrote' if root / patch.path in written else 'left'} {patch.path} "
        f"({patch.status}: {patch.message})"
        for pin in report.pins
        for patch in pin.patches
    ]
