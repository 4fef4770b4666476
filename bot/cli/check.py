"""`check`: the checklist (or the JSON report) of a change's carried patches; `--out` also writes the
rebuilt ones."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.cli.analysis import (
    analyse_change,
    checklist_format,
    failures,
    rebuilt_patches,
    rendered_checklist,
    write_rebuilt,
)
from bot.cli.change import Change, open_change, shown, uncommitted, working_tree
from bot.cli.console import UsageError, emit
from bot.model import Report


def cmd_check(args: argparse.Namespace) -> int:
    change = open_change(args)
    _refuse_overwriting_edits(args.out, change)
    _warn_unchecked_edits(change)
    report, changed = analyse_change(args, change, review=True)
    written = write_rebuilt(args.out, report) if args.out else []
    emit(_rendered(args.format, report, changed, change))
    if args.out:
        _list_written(args.out, report, written)
    failures(report)  # each on stderr
    return report.exit_status(args.fail_on)


def _rendered(output_format: str | None, report: Report, changed: set[str], change: Change) -> str:
    """The report as `--format` asks: JSON, or the checklist (for a terminal, or as the pull request gets
    it)."""
    if output_format == "json":
        return json.dumps(report.to_json(), indent=2)
    form = checklist_format(output_format)
    return rendered_checklist(report, changed, str(change.head.id), change.config, form)


def _refuse_overwriting_edits(out: Path | None, change: Change) -> None:
    """`--out` at the repository's own working tree would write the rebuilt patches over uncommitted edits
    of them: refused before anything runs, as `regenerate` refuses."""
    root = working_tree(change.repo) if out is not None else None
    if root is None or out is None or out.resolve() != root.resolve():
        return
    dirty = uncommitted(change.repo, change.config)
    if dirty:
        raise UsageError(
            f"--out {out} is the working tree, with uncommitted changes to {shown(dirty)}: commit or stash "
            "them first, or write elsewhere (check reads the committed revision)"
        )


def _warn_unchecked_edits(change: Change) -> None:
    """`check` reads commits: uncommitted edits to patches or version files would silently not count."""
    dirty = uncommitted(change.repo, change.config) if working_tree(change.repo) else []
    if dirty:
        print(
            f"llama-bot: note: uncommitted changes to {shown(dirty)} are not checked "
            f"(check reads --head {change.head_label}; commit them to check them)",
            file=sys.stderr,
        )


def _list_written(out: Path, report: Report, written: list[Path]) -> None:
    """On stderr: the rebuilt patches `check --out` wrote, and those already there as they are."""
    rebuilt = [out / path for path, _ in rebuilt_patches(report)]
    where = "\n".join(f"  {p}{'' if p in written else ' (already there, unchanged)'}" for p in rebuilt)
    print(
        f"Regenerated patches written to {out}:\n{where or '  (none: nothing needed regenerating)'}",
        file=sys.stderr,
    )
