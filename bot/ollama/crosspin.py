"""The pins a bump reaches beyond its own upstream: code that compiles against it, and Ollama's copies of it.

Reads what the decisions in `bot.review.api` and `bot.review.vendored` need: the consumer's sources at
its own pin with its carried patches applied (the build compiles that, not upstream's tip), and the
vendored copies beside the upstream files they copy.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from bot.build import patchwiring
from bot.config import Config, Consumer, Pin, Vendored, read_version
from bot.markup import code_span
from bot.model import AnalysisError, Commit, Finding
from bot.ollama import gobindings
from bot.patches.patchfile import PatchError, parse
from bot.patches.patchsafety import read_patch
from bot.patches.tree import NoFit, Tree, apply_exact
from bot.repos import buildpatches
from bot.repos.history import History
from bot.repos.snapshot import GitSnapshot, Snapshot
from bot.repos.upstream import Upstream
from bot.review.api import ConsumerCode
from bot.review.source import glob_match
from bot.review.vendored import Copy, drift_finding


def _patched(tree: Tree, head: Snapshot, paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Apply the stack in order onto `tree`; (applied, not applied) patch paths."""
    applied, refused = [], []
    for path in paths:
        try:
            pf = parse(read_patch(head, path))
            scratch = tree.copy()
            for fp in pf.files:
                changes, _ = apply_exact(scratch, fp)
                scratch.update(changes)
        except (PatchError, NoFit):
            refused.append(path)
            continue
        tree.update(scratch.overlay)
        applied.append(path)
    return applied, refused


def _label(pin: Pin, ref: str, applied: list[str], refused: list[str]) -> str:
    label = f"{pin.name} at {code_span(ref[:12])}"
    if applied:
        label += f" with its carried patch{'es' if len(applied) > 1 else ''} {_file_names(applied)}"
    if refused:
        label += (
            f" ({_file_names(refused)} did not apply and {'were' if len(refused) > 1 else 'was'} left out)"
        )
    return label


def _file_names(paths: list[str]) -> str:
    """The patches by file name, quoted: the label names them so, wherever their directory."""
    return ", ".join(code_span(posixpath.basename(p)) for p in paths)


def _consumer_files(tree: Tree, snapshot: Snapshot, consumer: Consumer) -> dict[str, bytes]:
    """The consumer's source files in the patched upstream tree, by path."""
    paths = {p for p in [*snapshot.files(), *tree.overlay] if glob_match(p, consumer.sources)}
    # a file a patch deletes is in the overlay but reads None: left out like any file the tree lacks
    return {p: data for p in sorted(paths) if (data := tree.read(p)) is not None}


def _pinned_consumer(consumer: Consumer, pin: Pin, head: Snapshot, open_upstream) -> ConsumerCode | None:
    ref = read_version(head, pin.version_file)
    if ref is None:
        return None
    upstream: Upstream = open_upstream(pin, [ref])
    commit = upstream.commit(ref, pin.version_file)
    upstream.fetch_missing(History(upstream, commit, commit), lambda p: glob_match(p, consumer.sources))
    snapshot = GitSnapshot(upstream.repo, commit)
    tree = Tree(snapshot)
    stack = buildpatches.patch_stack(head, pin.version_file, pin.patch_sets)
    applied, refused = _patched(tree, head, stack.paths)
    files = _consumer_files(tree, snapshot, consumer)
    return ConsumerCode(
        pin.name,
        _label(pin, ref, applied, refused),
        f"Bump {code_span(pin.version_file)} to a {pin.name} commit that follows this change, or carry a {pin.name} "
        f"patch that updates these calls ({patchwiring.applied_where(head, pin)}).",
        files,
        "" if applied else f"{upstream.web_url}/blob/{commit.id}/",
    )


def consumer_code(
    pin: Pin, config: Config, head: Snapshot, open_upstream
) -> tuple[list[ConsumerCode], list[str]]:
    """The code of every consumer of `pin`, and a line saying what was not checked for each one that could
    not be read (the review of the pin itself goes on without it)."""
    found, problems = [], []
    pins = {p.name: p for p in config.pins}
    for consumer in pin.consumers:
        if consumer.pin is None:
            found.append(_ollama_code(consumer, pin, head))
            continue
        try:
            code = _pinned_consumer(consumer, pins[consumer.pin], head, open_upstream)
        except AnalysisError as exc:
            problems.append(_unreadable(pin, consumer.pin, exc))
            continue
        if code is not None:
            found.append(code)
    return found, problems


def _ollama_code(consumer: Consumer, pin: Pin, head: Snapshot) -> ConsumerCode:
    """Ollama's own files a consumer names, and the Go files of every package that compiles against the
    pin's vendored copies (each set of bindings), at the head commit."""
    vendored = [(copies, v.upstream) for v in pin.vendored for copies in v.copies]
    bound = {p for b in gobindings.bindings(head, vendored) for p in b.go_files} if vendored else set()
    paths = sorted(bound | {p for p in head.files("") if glob_match(p, consumer.sources)})
    files = {p: data for p in paths if (data := head.read(p))}
    return ConsumerCode("Ollama", "Ollama's code", "Update these calls in Ollama.", files)


def _unreadable(pin: Pin, consumer: str, exc: AnalysisError) -> str:
    """What was not checked of a pinned consumer whose code could not be read."""
    return f"{consumer}, which compiles against {pin.name}'s headers, against this bump: {exc}"


def _copies(vendored: Vendored, head: Snapshot) -> str | None:
    """The directory of Ollama's tree holding the copies: the first layout that has files."""
    return next((d for d in vendored.copies if head.files(d)), None)


def _changed_copies(
    vendored: Vendored, directory: str, head: Snapshot, old: GitSnapshot | None, new: Tree
) -> list[Copy]:
    """The upstream files `vendored` copies into `directory` that the bump or the carried patches changed,
    with Ollama's copy of each."""
    base = new.base
    upstream = set(base.files(vendored.upstream)) if base else set()
    upstream |= set(new.overlay)
    before = set(old.files(vendored.upstream)) if old else set()
    changed = []
    for path in sorted(upstream | before):
        name = vendored.name_of(path)
        if name is None:
            continue
        now = new.read(path)
        if now != (old.read(path) if old else now) or path in new.overlay:
            changed.append(Copy(name, path, now, head.read(f"{directory}/{name}")))
    return changed


def vendored_findings(
    pin: Pin,
    head: Snapshot,
    old: GitSnapshot | None,
    new: Tree,
    commits_of: Callable[[str], list[Commit]] = lambda path: [],
) -> list[Finding]:
    """One high finding per vendored directory whose copies no longer equal the upstream files they copy,
    among the files the bump or the carried patches changed, with the upstream commits that changed them."""
    findings = []
    for vendored in pin.vendored:
        directory = _copies(vendored, head)
        if directory is None:
            continue
        changed = _changed_copies(vendored, directory, head, old, new)
        finding = drift_finding(pin.name, directory, changed, commits_of)
        if finding is not None:
            findings.append(finding)
    return findings
