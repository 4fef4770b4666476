"""A pin's report: its refs resolved, its patches in the build's order, each checked with the earlier ones
applied, the stack verified with the real `git apply`, then the upstream review."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

import pygit2

from bot.build import patchwiring
from bot.child.activity import doing
from bot.config import CONFIG_PATH, Config, Pin, read_version
from bot.engine.context import OpenUpstream, PinContext
from bot.engine.patch import check_patch
from bot.engine.placing import SOURCE_SUFFIXES
from bot.lang import cmakelang
from bot.markup import code_span
from bot.model import (
    MAX_BROUGHT,
    REBUILT,
    AnalysisError,
    Doubt,
    Finding,
    LocalRef,
    PatchResult,
    PinReport,
    Report,
)
from bot.ollama import buildsteps, crosspin
from bot.patches import gitapply, identifiers
from bot.patches.patchfile import PatchError, parse
from bot.patches.patchsafety import read_patch
from bot.patches.tree import Tree
from bot.repos import buildpatches
from bot.repos.history import History, cut_off
from bot.repos.snapshot import GitSnapshot, Snapshot, size_text
from bot.repos.upstream import Upstream
from bot.review import PinReview, ReviewContext, review_pin
from bot.review.checks import profile_data
from bot.review.cmake import CMAKE_FILES
from bot.review.source import glob_match, globs


def patch_order(snapshot: Snapshot, directory: str) -> list[str]:
    """apply-patch.cmake's order: every *.patch below the directory, sorted by file name."""
    return buildpatches.directory_order(snapshot, directory)


def pin_stack(snapshot: Snapshot, pin: Pin) -> buildpatches.PatchStack:
    """The pin's patches as the build applies them (its CMake files), else as configured."""
    return buildpatches.patch_stack(snapshot, pin.version_file, pin.patch_sets)


def check_pin(
    pin: Pin, upstream: Upstream, old_ref: str | None, new_ref: str, head: Snapshot
) -> tuple[PinReport, PinContext]:
    """Every patch of the pin at `head` against `new_ref`; without `old_ref` (a new pin, or garbage in the
    base's version file) against the new ref alone, the three-way merges using the patches' index blobs."""
    new_commit = _resolve(upstream, new_ref, pin.version_file)
    old_commit = _resolve(upstream, old_ref, f"{pin.version_file} at the base revision") if old_ref else None
    base_commit = old_commit or new_commit
    _refuse_cut_history(upstream, old_ref, new_ref, base_commit, new_commit)
    history = History(upstream, base_commit, new_commit)
    doing(f"fetching the upstream files {pin.name}'s patches and review read")
    upstream.fetch_missing(history, _upstream_reads(head, pin))
    ctx = PinContext(
        pin,
        upstream,
        history,
        new_ref,
        Tree(GitSnapshot(upstream.repo, old_commit)) if old_commit else None,
        Tree(GitSnapshot(upstream.repo, new_commit)),
        _local_sources(head, pin),
    )
    report = _pin_report(pin, upstream, history, old_ref or new_ref, new_ref, base_commit, new_commit)
    stack = pin_stack(head, pin)
    report.patch_source = stack.origin
    for path in stack.paths:
        doing(f"placing {path}")
        report.patches.append(check_patch(ctx, path, head))
    doing(f"applying {pin.name}'s patches with git apply")
    _confirm_with_git_apply(report.patches, head, GitSnapshot(upstream.repo, new_commit), new_ref)
    return report, ctx


def _refuse_cut_history(
    upstream: Upstream, old_ref: str | None, new_ref: str, old: pygit2.Commit, new: pygit2.Commit
) -> None:
    """Stop when the clone's history between the refs is cut (a shallow clone): its commit count, reverts and
    attribution would be wrong without a word."""
    cut = cut_off(upstream.repo, old, new)
    if cut is not None:
        raise AnalysisError(
            f"{upstream.source} is a shallow clone: its history from {old_ref} to {new_ref} stops at "
            f"{str(cut)[:12]}, whose parents it lacks; deepen it (git fetch --unshallow) or give a full or "
            "blobless clone (git fetch --filter=blob:none)"
        )


def _local_sources(head: Snapshot, pin: Pin) -> dict[str, bytes]:
    """Ollama's own sources beside the pin's patches: a moved enum value they write for its entry stops
    the rebuild (bot/engine/renumbering.py)."""
    return {p: head.read(p) or b"" for p in head.files(pin.patches) if p.endswith(SOURCE_SUFFIXES)}


def _pin_report(
    pin: Pin,
    upstream: Upstream,
    history: History,
    old_ref: str,
    new_ref: str,
    old_commit: pygit2.Commit,
    new_commit: pygit2.Commit,
) -> PinReport:
    """The pin's report before its patches are checked: its refs, the commits between them either way and
    the compare link."""
    return PinReport(
        pin.name,
        pin.version_file,
        old_ref,
        new_ref,
        str(old_commit.id),
        str(new_commit.id),
        f"{upstream.web_url}/compare/{old_ref}...{new_ref}",
        len(history.between),
        len(History(upstream, new_commit, old_commit).between),
        brought=[upstream.describe(c) for c in history.commits[:MAX_BROUGHT]],
        old_time=old_commit.commit_time,
        new_time=new_commit.commit_time,
    )


def _confirm_with_git_apply(
    results: list[PatchResult], head: Snapshot, upstream: GitSnapshot, ref: str
) -> None:
    """Run the real `git apply` over the stack as CMake would apply it (the committed patches that apply, the
    rebuilt ones in their place); a patch git refuses is a conflict, whatever the engine thought of it."""
    stack = _applied_stack(results, head)
    touched = {p for _, text in stack for p in _paths_of(text)}
    files = {path: data for path in sorted(touched) if (data := upstream.read(path)) is not None}
    refused = gitapply.refusals(files, stack)
    for r in results:
        if r.path in refused:
            _refuse(r, refused[r.path], ref)


def _applied_stack(results: list[PatchResult], head: Snapshot) -> list[tuple[str, bytes]]:
    """The stack CMake would apply: each patch that applies as committed, each rebuilt one's new text."""
    return [
        (r.path, (r.new_text if r.status in REBUILT else head.read(r.path)) or b"")
        for r in results
        if r.status in REBUILT or r.status in ("clean", "offset")
    ]


def _refuse(r: PatchResult, why: str, ref: str) -> None:
    """The patch (or its rebuilt text) that `git apply` refuses in stack order: a conflict to rebase by hand."""
    what = "the rebuilt patch" if r.status in REBUILT else "it"
    r.status, r.regenerated, r.new_text = "conflict", None, None
    r.message = (
        f"llama-bot placed its hunks, but the real `git apply` refuses {what} on {ref} in stack "
        f"order ({why}): rebase it by hand."
    )


def _paths_of(text: bytes) -> set[str]:
    """The paths a patch changes (old and new); none for a malformed patch."""
    try:
        return parse(text).paths
    except PatchError:
        return set()


def _paths_in(head: Snapshot, path: str) -> set[str]:
    """The paths the patch file at `path` changes; none for one too large or malformed."""
    try:
        return _paths_of(read_patch(head, path))
    except PatchError:
        return set()


def _upstream_reads(head: Snapshot, pin: Pin) -> Callable[[str], bool]:
    """The upstream files read at both refs besides those that changed: the patched files, the CMake files
    (the review parses them all) and llama-server's sources (the wire check reads them all at the new ref);
    a partial clone fetches them first."""
    patched = _patched_files(head, pin)
    copied = tuple(f"{v.upstream}/{v.files}" for v in pin.vendored)  # compared with Ollama's copies
    read_all = (*CMAKE_FILES, *globs(*profile_data(pin.review).get("server_sources", ())), *copied)
    return lambda path: path in patched or glob_match(path, read_all)


def _patched_files(head: Snapshot, pin: Pin) -> set[str]:
    """The upstream files the pin's patches change, and the headers bot/patches/identifiers.py reads beside them."""
    patched = {p for path in pin_stack(head, pin).paths for p in _paths_in(head, path)}
    return patched | {h for p in patched for h in identifiers.headers_of(p)}


def _resolve(upstream: Upstream, ref: str, where: str) -> pygit2.Commit:
    try:
        return upstream.commit(ref, where)
    except AnalysisError as exc:
        raise AnalysisError(f"{exc}{_abbreviation_hint(upstream.repo, ref)}") from None


def _abbreviation_hint(repo: pygit2.Repository | None, ref: str) -> str:
    """A short hex ref is most likely an abbreviated commit id, which git resolves and a version file may not
    (an abbreviation can become ambiguous as upstream grows)."""
    if not re.fullmatch(r"[0-9a-fA-F]{4,39}", ref):
        return ""
    try:
        found = repo.revparse_single(ref.lower()).peel(pygit2.Commit) if repo is not None else None
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        found = None
    if found is not None:
        return f"; {ref} abbreviates commit {found.id}: use the full 40-hex id"
    if len(ref) >= 7 and len(re.findall(r"[a-fA-F]", ref)) >= 2:  # not a tag like b10488
        return f"; if {ref} is an abbreviated commit id, use the full 40-hex id"
    return ""


def _commit_id(snapshot: Snapshot) -> str | None:
    """The commit a snapshot reads, when it is one."""
    return str(snapshot.commit.id) if isinstance(snapshot, GitSnapshot) else None


def _base_ref(base: Snapshot, pin: Pin) -> str | None:
    try:
        return read_version(base, pin.version_file)
    except AnalysisError:  # garbage in the base's version file: what this change may repair
        return None


def _readable_ref(snapshot: Snapshot, pin: Pin) -> str | None:
    try:
        return read_version(snapshot, pin.version_file)
    except AnalysisError:
        return None


def analyse(
    config: Config,
    base: Snapshot,
    head: Snapshot,
    open_upstream: OpenUpstream,
    changed_paths: Iterable[str] | None = None,
    review: bool = True,
    errors: dict[str, str] | None = None,
    also_watch: bool = True,
) -> Report:
    """The whole report for the pins a change touches (all pins when `changed_paths` is None).

    A pin that cannot be analysed raises AnalysisError; with `errors`, it is recorded there
    (pin name -> why) and in `Report.failed`, and the other pins are still analysed.
    """
    report = Report(base=_commit_id(base), head=_commit_id(head))
    for pin in config.touched_pins(changed_paths, head, also_watch):
        try:
            pin_report = _analyse_pin(pin, config, base, head, open_upstream, review)
        except AnalysisError as exc:
            if errors is None:
                raise
            errors[pin.name] = str(exc)
            report.failed.append(
                PinReport(
                    pin.name,
                    pin.version_file,
                    _readable_ref(base, pin),
                    _readable_ref(head, pin),
                    error=str(exc),
                )
            )
            continue
        if pin_report is not None:
            report.pins.append(pin_report)
    return report


def _analyse_pin(
    pin: Pin, config: Config, base: Snapshot, head: Snapshot, open_upstream: OpenUpstream, review: bool
) -> PinReport | None:
    """One pin's report; None when neither revision has its version file (the repository does not pin it).

    Only garbage in the base's version file is skipped (the change may repair it): a well-formed base
    ref that upstream lacks is an error, since comparing against the new ref alone would hide the bump.
    """
    doing(f"reading {pin.name}'s version files")
    new_ref = read_version(head, pin.version_file)
    old_ref = _base_ref(base, pin)
    elsewhere = _fetched_elsewhere(base, pin) if old_ref else None
    if elsewhere is not None:
        old_ref = None  # a ref of another upstream: nothing to compare the new one with
    _check_new_ref(pin, base, head, new_ref)
    if new_ref is None:  # neither revision has the version file
        return None
    refs = [r for r in dict.fromkeys([old_ref, new_ref]) if r]
    doing(f"getting {pin.name} {' and '.join(refs)} from {pin.upstream}")
    upstream = _open(open_upstream, pin, refs)
    pin_report, ctx = check_pin(pin, upstream, old_ref, new_ref, head)
    _read_build(pin_report, pin, config, head)
    if elsewhere is not None:
        pin_report.findings.append(_other_upstream_finding(pin, base, elsewhere))
    pin_report.findings += _overlong_cmake_finding(head)
    pin_report.findings += [_doubt_finding(r.path, d) for r in pin_report.patches for d in r.doubts]
    if review:
        doing(f"reading where {pin.name}'s patches reach")
        pin_report.findings += _wiring_findings(head, pin, pin_report)
        doing(f"reviewing {pin.name}'s upstream diff")
        pin_report.findings += _review_findings(
            pin, config, head, open_upstream, ctx, bool(old_ref), pin_report
        )
        if new_ref != old_ref:  # the base's pin is not this change's to judge
            _judge_pinned_commit(pin_report, pin, head, upstream, ctx.history.new)
    pin_report.unchecked += _unread(upstream, ctx.history)
    return pin_report


def _unread(upstream: Upstream, history: History, shown: int = 3) -> list[str]:
    """The upstream files the analysis needed and could not read (a partial clone whose fetch failed): what
    the review skipped, and why the commits credited with their lines may be incomplete."""
    count = len(upstream.unreadable)
    if not count:
        return []
    refs = {str(history.old.id): "the old ref", str(history.new.id): "the new ref"}
    named = [
        f"{code_span(path)} at {refs.get(sha, f'commit {sha[:12]}')}"
        for path, sha in sorted(upstream.unreadable.items())[:shown]
    ]
    more = f" and {count - shown} more" if count > shown else ""
    why = f": {upstream.fetch_problem}" if upstream.fetch_problem else ""
    files = f"{count} upstream file{'s' if count != 1 else ''} it needed ({', '.join(named)}{more})"
    return [f"{files}, missing from {upstream.source} and not fetched{why}"]


def _doubt_finding(patch: str, doubt: Doubt) -> Finding:
    """A patch that applies as it is but names what upstream removed: `git apply` takes it, the compiler or
    its meaning may not."""
    return Finding(
        "patch-context",
        doubt.severity,
        f"{code_span(posixpath.basename(patch))} applies as it is, but names what upstream removed",
        f"{doubt.note[:1].upper()}{doubt.note[1:]}. The patch applies as it is, so it is not rebuilt: check that "
        "its added lines still mean what they did, and change them by hand if not.",
        doubt.upstream_path,
        doubt.upstream_line,
        list(doubt.commits),
        [LocalRef(patch, doubt.patch_line)],
        check="patches.removed-names",
    )


def _read_build(report: PinReport, pin: Pin, config: Config, head: Snapshot) -> None:
    """What the tree at the head says of the pin's build: where patches go when it carries none, and (but
    for llama.cpp's profile, whose steps are its own) the steps that build it."""
    if not report.patches:
        report.build_note = patchwiring.no_patches_note(head, pin, config.pins)
    if pin.review != "llama.cpp":
        doing(f"reading the steps that build {pin.name}")
        report.build_steps = [(s.id, s.text) for s in buildsteps.derived_steps(head, pin, config)]


def _wiring_findings(head: Snapshot, pin: Pin, report: PinReport) -> list[Finding]:
    """The carried patches the build does not apply, and the Docker stages they do not reach."""
    unapplied = patchwiring.unapplied_finding(head, pin, [p.path for p in report.patches])
    return ([unapplied] if unapplied else []) + patchwiring.gap_findings(head, pin)


def _judge_pinned_commit(
    report: PinReport, pin: Pin, head: Snapshot, upstream: Upstream, commit: pygit2.Commit
) -> None:
    """A commit on no branch or tag of the upstream (a fork's, an unmerged pull request's, which the
    upstream's URL serves all the same) leads the pin's findings; one that could not be judged ends them."""
    where = [LocalRef(pin.version_file, _ref_line(head, pin.version_file))]
    sha, url = str(commit.id), upstream.web_url
    try:
        if upstream.on_branch_or_tag(commit.id):
            return
    except AnalysisError as exc:
        detail = (
            f"{exc}. Until it is, {code_span(pin.version_file)} may pin a fork's or an unmerged pull request's "
            f"commit: check that {code_span(sha)} is on a branch or tag of {url}."
        )
        title = f"Could not tell whether {code_span(sha[:12])} is on a branch or tag of {url}"
        report.findings.append(
            Finding("build", "info", title, detail, "", None, local_refs=where, check="pin.on-branch")
        )
        return
    looked = "as it advertises them" if upstream.fetch_url else f"looked in {upstream.source}"
    detail = (
        f"{code_span(pin.version_file)} pins {code_span(sha)}, which no branch or tag of {url} contains ({looked}). "
        "A repository's URL serves the commits of its forks and pull requests too, so this may be a fork's "
        "commit or an unmerged pull request's, which upstream never reviewed and need not keep. Pin one of "
        "the upstream's tags, or a commit of its default branch."
    )
    title = f"{code_span(sha[:12])} is on no branch or tag of {url}"
    report.findings.insert(
        0, Finding("build", "high", title, detail, "", None, local_refs=where, check="pin.on-branch")
    )


def _ref_line(head: Snapshot, path: str) -> int:
    """The line of the version file that holds its ref (the first that is not blank)."""
    lines = (head.read(path) or b"").splitlines()
    return next((i for i, line in enumerate(lines, 1) if line.strip()), 1)


def _check_new_ref(pin: Pin, base: Snapshot, head: Snapshot, new_ref: str | None) -> None:
    """An AnalysisError when this change deletes the version file, or when the head's build fetches the
    version file's ref from another repository."""
    if new_ref is None and base.read(pin.version_file) is not None:
        raise AnalysisError(
            f"this change deletes {pin.version_file}: the build would no longer pin {pin.name} "
            f"(remove the pin from {CONFIG_PATH} too, or restore the file)"
        )
    fetched = _fetched_elsewhere(head, pin) if new_ref else None
    if fetched is not None:
        raise AnalysisError(
            f"{pin.version_file} names {code_span(new_ref)}, which {fetched.cmake_file}:{fetched.line} fetches "
            f"from {fetched.repository}, not from {pin.upstream}: set this pin's `upstream` in "
            f"{CONFIG_PATH}"
        )


def _open(open_upstream: OpenUpstream, pin: Pin, refs: list[str]) -> Upstream:
    """The pin's upstream with the refs fetched; an error that may be an abbreviated commit id says so."""
    try:
        return open_upstream(pin, refs)
    except AnalysisError as exc:
        raise AnalysisError(
            f"{exc}{''.join(dict.fromkeys(_abbreviation_hint(None, r) for r in refs))}"
        ) from None


def _review_findings(
    pin: Pin,
    config: Config,
    head: Snapshot,
    open_upstream: OpenUpstream,
    ctx: PinContext,
    has_old_ref: bool,
    pin_report: PinReport,
) -> list[Finding]:
    """The review's findings: vendored copies, the upstream diff, and what the consumer code raised."""
    code, unread_consumers = crosspin.consumer_code(pin, config, head, open_upstream)
    pin_report.unchecked += unread_consumers
    old = GitSnapshot(ctx.upstream.repo, ctx.history.old) if has_old_ref else None
    history = ctx.history
    return [
        *crosspin.vendored_findings(
            pin,
            head,
            old,
            ctx.new_tree,
            lambda path: [ctx.upstream.describe(c) for c in history.touching(path)],
        ),
        *_reviewed_upstream(ctx, head, config, pin_report, tuple(code)),
    ]


def _reviewed_upstream(
    ctx: PinContext, head: Snapshot, config: Config, pin_report: PinReport, consumers: tuple
) -> list[Finding]:
    """The upstream diff's findings; the build files it changes that Ollama's build uses go in the report."""
    reviewed = _review(ctx, head, config, _explained_hunks(pin_report.patches), consumers)
    pin_report.build_changes = reviewed.build_changes
    return reviewed.findings


def _same_repository(a: str, b: str) -> bool:
    def key(url: str) -> str:
        return url.lower().rstrip("/").removesuffix(".git")

    return key(a) == key(b)


def _fetched_elsewhere(snapshot: Snapshot, pin: Pin) -> buildpatches.FetchSource | None:
    """Where the build at this revision fetches the version file's ref from, when that is never the pin's
    upstream (a version file that pins another repository). A repository CMake computes is not judged."""
    sources = [
        s
        for s in buildpatches.fetch_sources(snapshot, pin.version_file)
        if "://" in s.repository and "$" not in s.repository
    ]
    if not sources or any(_same_repository(s.repository, pin.upstream) for s in sources):
        return None
    return sources[0]


def _other_upstream_finding(pin: Pin, base: Snapshot, source: buildpatches.FetchSource) -> Finding:
    ref = _base_ref(base, pin)
    return Finding(
        "build",
        "info",
        f"The base's {pin.version_file} pinned another repository: checked against the new ref alone",
        f"At the base revision {code_span(f'{source.cmake_file}:{source.line}')} fetched {code_span(ref)} from {source.repository}, not "
        f"from {pin.upstream}: there is no {pin.name} ref to compare the new one with, so the patches were "
        "checked against the new ref alone and the upstream diff was not reviewed.",
        pin.version_file,
        None,
        check="pin.other-repository",
    )


def _overlong_cmake_finding(head: Snapshot) -> list[Finding]:
    """An info finding where the head's CMake files gave a variable a value too long to keep: the patches
    the build applies were found without it."""
    places = buildpatches.overlong_values(head)
    if not places:
        return []
    first = places[0]
    more = f" and {len(places) - 1} more place{'s' if len(places) > 2 else ''}" if len(places) > 1 else ""
    return [
        Finding(
            "build",
            "info",
            f"A CMake value over {size_text(cmakelang.VALUE_CHARS)} was left unknown",
            f"At {code_span(f'{first.path}:{first.line}')}{more}, the variables of a command would expand to more than "
            f"{size_text(cmakelang.VALUE_CHARS)}, which no real build file needs: llama-bot left them unknown "
            "when it read which patches the build applies. Check those lines.",
            first.path,
            first.line,
            local_refs=places,
            check="build.overlong-value",
        )
    ]


QUIET_HUNKS = ("clean", "offset")  # a hunk the patch section says nothing more of


def _explained_hunks(patches: list) -> frozenset[tuple[str, int]]:
    """(patch path, hunk header line) of every hunk the patch section already explains: one that moved,
    merged or conflicts, and every hunk of a patch upstream now carries."""
    return frozenset(
        (p.path, h.patch_line)
        for p in patches
        for h in p.hunks
        if p.status == "upstreamed" or h.status not in QUIET_HUNKS
    )


def _review(
    ctx: PinContext, head: Snapshot, config: Config, explained: frozenset = frozenset(), consumers: tuple = ()
) -> PinReview:
    old = ctx.history.old
    patches = []
    for path in pin_stack(head, ctx.pin).paths:
        try:
            patches.append((path, parse(read_patch(head, path))))
        except PatchError:
            continue
    return review_pin(
        ReviewContext(
            ctx.pin,
            GitSnapshot(ctx.upstream.repo, old),
            GitSnapshot(ctx.upstream.repo, ctx.history.new),
            ctx.history,
            head,
            patches,
            config.rules,
            explained,
            consumers,
        )
    )
