"""The analysis `check` and `regenerate` share: the touched pins' report, what stderr says about it, and
the rebuilt patches written out."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from bot.cache import facts
from bot.child.sandbox import Limits, run_limited
from bot.cli.change import Change
from bot.cli.console import UsageError
from bot.cli.upstreams import cli_data_dir, upstream_opener
from bot.config import CONFIG_PATH, Config, Pin, parse_config
from bot.model import REBUILT, Report
from bot.repos.snapshot import GitSnapshot


def analyse_change(args: argparse.Namespace, change: Change, review: bool) -> tuple[Report, set[str]]:
    """The report of the pins whose version file or patch directory changed; a pin that cannot be checked
    is in `Report.failed` with its error, and the others are still checked."""
    from bot.engine import analyse

    changed = change.changed_paths()
    opener = upstream_opener(args.upstream_dir, change.config, args.quiet)
    # The CLI checks only the pins whose own files changed (the service also reacts to also_watch paths).
    base, head = GitSnapshot(change.repo, change.base), GitSnapshot(change.repo, change.head)
    store = facts.store_in(cli_data_dir())
    with facts.using(store):  # which pins the head's build patches is a reading of its CMake files
        selected = dataclasses.replace(
            change.config, pins=tuple(change.config.touched_pins(changed, head, False))
        )

    def analysed(_channel) -> Report:
        with facts.using(store):
            return analyse(
                change.config, base, head, opener, changed, review=review, errors={}, also_watch=False
            )

    report = run_limited(analysed, cli_limits(args))
    if not report.pins and not report.failed:
        _explain_untouched(change, base, head)
    if getattr(args, "explain", False):
        _explain_patches(report)
    if getattr(args, "explain_consumers", False):
        _explain_consumers(report, selected, head, opener)
    _warn_missing_patch_dirs(report, selected, base, head)
    return report, changed


def checklist_format(requested: str | None) -> str:
    """The checklist's form: the one asked for, else text on a terminal and the pull request's Markdown
    anywhere else (a pipe, a file, CI)."""
    return requested or ("text" if sys.stdout.isatty() else "md")


def rendered_checklist(
    report: Report, changed: Iterable[str], head_sha: str, config: Config, form: str
) -> str:
    """The checklist as `form` ("md" or "text") says: the pull request's, or in the command line's voice
    without its HTML (no ids, no pull-request commands)."""
    from bot.render.checklist import render_markdown
    from bot.render.markdown import terminal_text

    text = render_markdown(
        report,
        changed,
        head_sha=head_sha,
        prefix=config.command_prefix if form == "md" else None,
        patch_dirs={p.name: p.patches for p in config.pins},
    )
    return text if form == "md" else terminal_text(text)


def cli_limits(args: argparse.Namespace) -> Limits:
    """The analysis limits of the command line, named by its options when one stops it."""
    return Limits(args.max_memory_mb, float(args.timeout), "--max-memory-mb", "--timeout")


def _explain_patches(report: Report) -> None:
    """Each checked pin's patches, in the order they are applied, and where the build applies them from."""
    for pin_report in report.pins:
        listed = ", ".join(p.path for p in pin_report.patches) or "none"
        how = f" ({pin_report.patch_source})" if pin_report.patch_source else ""
        print(f"llama-bot: {pin_report.name}: patches {listed}{how}", file=sys.stderr)


def _warn_missing_patch_dirs(report: Report, selected: Config, base: GitSnapshot, head: GitSnapshot) -> None:
    """A configured patch directory found at neither revision is more likely a typo than a pin with no
    patches; the default layouts are exempt (a repository may not be on them yet)."""
    defaults = parse_config(None).pins
    for pin in selected.pins:
        checked = report.pin(pin.name)
        if checked and not checked.patches and pin not in defaults and _in_neither(pin, base, head):
            print(
                f"llama-bot: warning: {pin.name}: {pin.patches}/ exists at neither revision, so no patch was "
                f"checked (is `patches` right in {CONFIG_PATH}?)",
                file=sys.stderr,
            )


def _in_neither(pin: Pin, base: GitSnapshot, head: GitSnapshot) -> bool:
    """Whether none of the pin's patch directories has a file at either revision."""
    return not any(base.files(e) or head.files(e) for e in pin.patch_sets)


def _explain_consumers(report: Report, config: Config, head: GitSnapshot, opener) -> None:
    """The consumer model of each checked llama.cpp pin: Ollama's head against the pin's new upstream ref."""
    from bot.review.consumers import SnapshotTexts, consumer_model, explain
    from bot.review.consumers.contracts import contract_inventory

    for pin_report in report.pins:
        pin = config.pin(pin_report.name)
        if pin is None or pin.review != "llama.cpp" or not pin_report.new_commit:
            continue
        upstream = opener(pin, [pin_report.new_ref])
        new = GitSnapshot(upstream.repo, pin_report.new_commit)
        model = consumer_model(
            SnapshotTexts(head), SnapshotTexts(new), _parsed_patches(head, pin), pin.patches
        )
        inventory = contract_inventory(SnapshotTexts(head))
        print(
            f"llama-bot: {pin.name}: what Ollama ({str(head.commit.id)[:12]}) builds, includes and calls of "
            f"{pin_report.new_ref} ({pin_report.new_commit[:12]}):\n{explain(model, inventory)}",
            end="",
            file=sys.stderr,
        )


def _parsed_patches(head: GitSnapshot, pin: Pin) -> list:
    """The pin's patches at the head, in the order they apply; one that does not parse is left out."""
    from bot.engine import pin_stack
    from bot.patches.patchfile import PatchError, parse

    patches = []
    for path in pin_stack(head, pin).paths:
        try:
            patches.append((path, parse(head.read(path) or b"")))
        except PatchError:
            continue
    return patches


def _explain_untouched(change: Change, base: GitSnapshot, head: GitSnapshot) -> None:
    """Say what was compared, so an empty result is not mistaken for a clean bump; no pinned file at all
    means the wrong repository."""
    files = [pin.version_file for pin in change.config.pins]
    if not any(snapshot.read(f) is not None for snapshot in (base, head) for f in files):
        raise UsageError(
            f"none of the pinned version files ({', '.join(files)}) exists at {change.compared}: "
            f"is {change.repo.workdir or change.repo.path} an Ollama checkout?"
        )
    print(
        f"llama-bot: compared {change.compared}: no pin's version file or patch directory changed; "
        "choose another base with --base REV",
        file=sys.stderr,
    )


def failures(report: Report) -> int:
    """Exit 2 after the report when a pin, or something of one, could not be checked: it is in the report
    too."""
    for pin in report.failed:
        print(f"llama-bot: {pin.name}: {pin.error}", file=sys.stderr)
    for name, line in report.unchecked:
        print(f"llama-bot: {name}: not checked: {line}", file=sys.stderr)
    return 2 if report.failed or report.unchecked else 0


def rebuilt_patches(report: Report) -> list[tuple[str, bytes]]:
    """The regenerated and fuzzy patches' paths in the repository and their new text."""
    return [
        (p.path, p.new_text)
        for pin in report.pins
        for p in pin.patches
        if p.status in REBUILT and p.new_text is not None
    ]


def write_rebuilt(root: Path, report: Report) -> list[Path]:
    """Write the rebuilt patches under `root`; those already there as they are are not rewritten."""
    written = []
    for path, text in rebuilt_patches(report):
        target = root / path
        if _write_patch(target, text):
            written.append(target)
    return written


def _write_patch(target: Path, text: bytes) -> bool:
    """False when `target` already holds `text`; one that cannot be written is a one-line usage error, not
    a traceback."""
    try:
        if target.is_file() and target.read_bytes() == text:
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        write_whole(target, text)
    except OSError as exc:
        raise _unwritable(target, exc) from None
    return True


def write_whole(target: Path, data: bytes) -> None:
    """`data` into `target` through a file beside it renamed over it: an interrupted write leaves the old
    file, never half of the new one."""
    part = target.with_name(f".{target.name}.llama-bot-part")
    try:
        part.write_bytes(data)
        os.replace(part, target)
    except OSError as exc:
        if exc.filename in (str(part), part):  # the file beside it is the target's, to the person told
            raise OSError(exc.errno, exc.strerror, str(target)) from None
        raise
    finally:
        part.unlink(missing_ok=True)


def _unwritable(target: Path, exc: OSError) -> UsageError:
    """The system's reason, naming the path it concerns when that is not `target` (a parent directory)."""
    culprit = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(target) else ""
    return UsageError(f"cannot write {target}: {culprit}{exc.strerror or exc}")
