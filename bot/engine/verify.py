"""`python -m bot verify-source`: is the source CMake fetched the pinned ref plus the carried patches?

CMake's FetchContent leaves the upstream source of a pin in `<build-dir>/_deps/<name>-src` and runs
apply-patch.cmake on it. A checkout left over from an earlier configure, or edited by hand, builds
something else than the pin says. The expected tree is rebuilt from git objects alone (the upstream
tree at the pinned commit, the carried patches applied on top with the engine's `apply_exact`), and
the checkout's HEAD and working tree are compared with it.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.config import Config, Pin, load_config, read_version
from bot.engine import NoFit, Tree, apply_exact, patch_order, reverse_applies
from bot.model import AnalysisError
from bot.patches.patchfile import PatchError, PatchFile, parse
from bot.patches.patchsafety import safety_problem
from bot.repos.snapshot import GitSnapshot
from bot.repos.upstream import Upstream, resolve

DEFAULT_BUILD_DIR = "build/llama-server-cpu"
# Unified diff lines shown per differing file: enough to see what changed, short enough to scan.
DIFF_LINES = 12

OpenUpstream = Callable[[Pin, list[str]], Upstream]


def source_dir_name(pin_name: str) -> str:
    """The FetchContent name Ollama's CMake gives a pin (`llama_cpp`, `mlx`, `mlx-c`).

    FetchContent lower-cases the name for `_deps/<name>-src`; a CMake name has no dots, so
    `llama.cpp` is declared as `llama_cpp`, while `mlx-c` keeps its dash.
    """
    return re.sub(r"[^a-z0-9_-]", "_", pin_name.lower())


class WorkingTree:
    """Files on disk below a directory, as CMake reads them: the version file, `*.patch` globs."""

    def __init__(self, root: Path):
        self.root = root

    def read(self, path: str) -> bytes | None:
        target = self.root / path
        try:
            return target.read_bytes() if target.is_file() else None
        except OSError as exc:
            raise AnalysisError(f"{target}: cannot read it ({exc.strerror or exc})") from None

    def size(self, path: str) -> int | None:
        target = self.root / path
        try:
            return target.stat().st_size if target.is_file() else None
        except OSError as exc:
            raise AnalysisError(f"{target}: cannot read it ({exc.strerror or exc})") from None

    def files(self, prefix: str = "") -> list[str]:
        found = []
        for directory, subdirs, names in os.walk(self.root / prefix):
            subdirs[:] = [d for d in subdirs if d != ".git"]
            found += [(Path(directory) / n).relative_to(self.root).as_posix() for n in names]
        return sorted(found)


@dataclass
class StackOutcome:
    """How the carried patches went onto the pristine tree."""

    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already in the tree: apply-patch.cmake skips them
    failed: list[tuple[str, str]] = field(default_factory=list)  # (patch, why it does not apply)
    touched_by: dict[str, list[str]] = field(default_factory=dict)  # file -> the patches that touch it


def _apply_patch(tree: Tree, pf: PatchFile) -> dict[str, bytes | None]:
    """Every file change of one patch, each on top of the ones before; raises NoFit or PatchError."""
    scratch = tree.copy()
    changes: dict[str, bytes | None] = {}
    for fp in pf.files:
        file_changes, _ = apply_exact(scratch, fp)
        scratch.update(file_changes)
        changes.update(file_changes)
    return changes


def _record_touched(outcome: StackOutcome, path: str, pf: PatchFile) -> None:
    """Note the files the patch at `path` touches, under their old and new names."""
    for fp in pf.files:
        for touched in dict.fromkeys(p for p in (fp.old_path, fp.new_path) if p):
            outcome.touched_by.setdefault(touched, []).append(path)


def _apply_one(tree: Tree, pf: PatchFile) -> tuple[str, str]:
    """Apply the parsed patch to `tree` unless its change is there already: ("applied" | "skipped" |
    "failed", why it failed)."""
    unsafe = next((problem for problem in map(safety_problem, pf.files) if problem), None)
    if unsafe:
        return "failed", f"unsafe ({unsafe}), git apply refuses it"
    if reverse_applies(tree, pf):
        return "skipped", ""
    try:
        tree.update(_apply_patch(tree, pf))
    except (NoFit, PatchError) as exc:
        return "failed", str(exc)
    return "applied", ""


def apply_stack(tree: Tree, patches: list[tuple[str, bytes]]) -> StackOutcome:
    """Apply the patches in order as apply-patch.cmake does: one whose change is already there (it
    reverse-applies) is skipped; one that does not apply is recorded and left out."""
    outcome = StackOutcome()
    for path, data in patches:
        try:
            pf = parse(data)
        except PatchError as exc:
            outcome.failed.append((path, f"malformed ({exc})"))
            continue
        _record_touched(outcome, path, pf)
        how, why = _apply_one(tree, pf)
        if how == "failed":
            outcome.failed.append((path, why))
        else:
            (outcome.applied if how == "applied" else outcome.skipped).append(path)
    return outcome


@dataclass(frozen=True)
class FileDifference:
    path: str
    kind: str  # differs | missing (expected, absent from the checkout) | extra (in the checkout only)
    diff: tuple[str, ...]  # expected -> checkout, shortened to DIFF_LINES
    patches: tuple[str, ...]  # the carried patches that touch the file


def short_diff(expected: bytes | None, actual: bytes | None, path: str) -> tuple[str, ...]:
    """A unified diff from the expected file to the checkout's, cut to DIFF_LINES lines."""
    if b"\0" in (expected or b"") + (actual or b""):
        return ("Binary files differ",)
    old_name, old_lines = _diff_side("expected", path, expected)
    new_name, new_lines = _diff_side("checkout", path, actual)
    diff = list(difflib.unified_diff(old_lines, new_lines, old_name, new_name, n=1, lineterm=""))
    if not diff:  # only line endings or a final newline differ
        return ("(the files differ only in line endings or the final newline)",)
    if len(diff) > DIFF_LINES:
        diff = diff[:DIFF_LINES] + [f"... ({len(diff) - DIFF_LINES} more diff lines)"]
    return tuple(diff)


def _diff_side(side: str, path: str, data: bytes | None) -> tuple[str, list[str]]:
    """One side of a diff: its name in the header (/dev/null when there is no such file) and its lines."""
    name = f"{side}/{path}" if data is not None else "/dev/null"
    return name, (data or b"").decode("utf-8", "replace").splitlines()


def compare_files(
    expected: Mapping[str, bytes | None],
    actual: Mapping[str, bytes | None],
    touched_by: Mapping[str, list[str]],
) -> list[FileDifference]:
    """Every path of either mapping whose content differs (a missing key or None: no such file)."""
    differences = []
    for path in sorted(expected.keys() | actual.keys()):
        want, have = expected.get(path), actual.get(path)
        if want == have:
            continue
        kind = "missing" if have is None else "extra" if want is None else "differs"
        differences.append(
            FileDifference(path, kind, short_diff(want, have, path), tuple(touched_by.get(path, ())))
        )
    return differences


@dataclass
class Verdict:
    pin: str
    version_file: str
    source_dir: str
    ref: str
    ref_commit: str
    head_commit: str
    head_names: list[str]  # tags naming the checkout's HEAD commit
    stack: StackOutcome | None = None  # None when HEAD is not the pinned commit: the tree is not compared
    differences: list[FileDifference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.head_commit == self.ref_commit
            and self.stack is not None
            and not self.stack.failed
            and not self.differences
        )


def _describe(ref: str, commit_id: str) -> str:
    """A tag with its commit; a commit id as it is."""
    return commit_id if ref == commit_id else f"{ref} ({commit_id[:12]})"


def _difference_line(d: FileDifference, ref: str) -> str:
    """One differing file and the patches that should have made it what it is expected to be."""
    if not d.patches:
        what = {
            "differs": f"differs from {ref}",
            "missing": f"is missing: {ref} has it",
            "extra": "is an extra file, untracked and not ignored",
        }[d.kind]
        return f"- {d.path} {what} (no carried patch touches it):"
    expected = f"{ref} with {', '.join(d.patches)} applied"
    what = {
        "differs": f"differs from {expected}",
        "missing": f"is missing: {expected} has it",
        "extra": f"is in the checkout, but {expected} has no such file",
    }[d.kind]
    return f"- {d.path} {what}:"


def _old_checkout(v: Verdict, ref: str) -> str:
    """The verdict when HEAD is not the commit the version file names: nothing else is worth comparing."""
    at = ", ".join(v.head_names) + f" ({v.head_commit[:12]})" if v.head_names else v.head_commit
    return (
        f"{v.pin}: {v.source_dir} does not match {v.version_file}:\n"
        f"- HEAD is at {at}, but {v.version_file} names {ref}: an old checkout; "
        f"delete {v.source_dir} and configure again."
    )


def _mismatches(v: Verdict, ref: str, stack: StackOutcome) -> list[str]:
    """The verdict's lines when HEAD is right but the tree is not: each patch that fails, each file that differs."""
    out = [f"{v.pin}: {v.source_dir} does not match {v.version_file}: HEAD is {ref} as it should be, but:"]
    out += [f"- {patch} does not apply to {v.ref}: {why}" for patch, why in stack.failed]
    for d in v.differences:
        out.append(_difference_line(d, v.ref))
        out += [f"    {line}" for line in d.diff]
    return out


def render(verdict: Verdict) -> str:
    """What the maintainer reads: the verdict first, then each thing that differs and where it comes from."""
    v = verdict
    ref = _describe(v.ref, v.ref_commit)
    if v.head_commit != v.ref_commit:
        return _old_checkout(v, ref)
    stack = v.stack or StackOutcome()
    notes = [f"- note: {p} is already in {v.ref}; apply-patch.cmake skips it" for p in stack.skipped]
    if not v.ok:
        return "\n".join(_mismatches(v, ref, stack) + notes)
    count = len(stack.applied)
    applied = f"{count} carried patch{'' if count == 1 else 'es'} applied"
    verdict_line = f"{v.pin}: {v.source_dir} matches {v.version_file}: {ref} with {applied}, no other change."
    return "\n".join([verdict_line, *notes])


def open_checkout(build_dir: Path, pin: Pin) -> pygit2.Repository:
    """The pin's fetched source as a git repository with a checked-out commit."""
    source = _source_dir(build_dir, pin)
    if not (source / ".git").exists():  # else libgit2 would find the repository of an enclosing directory
        raise AnalysisError(f"{source}: not a git checkout")
    try:
        repo = pygit2.Repository(str(source), flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        raise AnalysisError(f"{source}: not a git checkout") from None
    if repo.workdir is None or repo.head_is_unborn:
        raise AnalysisError(f"{source}: a git repository without a checked-out commit")
    return repo


def _source_dir(build_dir: Path, pin: Pin) -> Path:
    """The pin's fetched source: `<build-dir>/_deps/<name>-src`, or --build-dir itself when it is a checkout."""
    if not build_dir.is_dir():
        raise AnalysisError(f"--build-dir {build_dir}: no such directory")
    if (build_dir / ".git").exists():
        return build_dir
    source = build_dir / "_deps" / f"{source_dir_name(pin.name)}-src"
    if not source.is_dir():
        raise AnalysisError(f"{source}: no such directory; has CMake fetched {pin.name} into {build_dir}?")
    return source


def _tags_at(repo: pygit2.Repository, commit_id: pygit2.Oid) -> set[str]:
    names = set()
    for name in repo.references:
        if name.startswith("refs/tags/"):
            try:
                if repo.lookup_reference(name).peel(pygit2.Commit).id == commit_id:
                    names.add(name.removeprefix("refs/tags/"))
            except (KeyError, ValueError, pygit2.GitError):
                continue
    return names


def _checkout_files(repo: pygit2.Repository, paths: set[str]) -> dict[str, bytes | None]:
    """The working-tree content of `paths` and of every path git status does not call current or ignored."""
    root = Path(repo.workdir)
    wanted = paths | set(repo.status(untracked_files="all", ignored=False))
    return {path: _checkout_content(root / path) for path in wanted}


def _checkout_content(target: Path) -> bytes | None:
    """What git sees at a path of the checkout: a symlink's target, a file's bytes, None for no file."""
    try:
        if target.is_symlink():
            return os.fsencode(os.readlink(target))
        return target.read_bytes() if target.is_file() else None
    except OSError as exc:
        raise AnalysisError(f"{target}: cannot read it ({exc.strerror or exc})") from None


def load_worktree_config(repo_dir: Path) -> Config:
    if not repo_dir.is_dir():
        raise AnalysisError(f"--repo {repo_dir}: no such directory")
    return load_config(WorkingTree(repo_dir))


def _pin_named(config: Config, pin_name: str) -> Pin:
    pin = config.pin(pin_name)
    if pin is None:
        pins = ", ".join(p.name for p in config.pins) or "none"
        raise AnalysisError(f"--pin {pin_name}: no pin has that name (pins: {pins})")
    return pin


def _upstream_for(
    checkout: pygit2.Repository, pin: Pin, ref: str, upstream_given: bool, open_upstream: OpenUpstream
) -> Upstream:
    """Where upstream's objects come from (`verify_source` says in which order)."""
    if not upstream_given and resolve(checkout, ref) is not None:
        return Upstream(checkout, pin.upstream)
    return open_upstream(pin, [ref])


def _carried_patches(ollama: WorkingTree, pin: Pin) -> list[tuple[str, bytes]]:
    """The pin's carried patches with their content, in the order apply-patch.cmake applies them."""
    return [(path, ollama.read(path) or b"") for path in patch_order(ollama, pin.patches)]


def verify_source(
    config: Config,
    repo_dir: Path,
    build_dir: Path | None,
    pin_name: str,
    upstream_given: bool,
    open_upstream: OpenUpstream,
) -> Verdict:
    """Compare the pin's fetched source with its pinned ref plus the carried patches in the working tree.

    Upstream objects come from --upstream-dir when `upstream_given`, else from the checkout itself when
    it has the pinned commit, else from `open_upstream` (the pin's mirror).
    """
    pin = _pin_named(config, pin_name)
    ollama = WorkingTree(repo_dir)
    ref = read_version(ollama, pin.version_file)
    if ref is None:
        raise AnalysisError(f"{repo_dir / pin.version_file}: no such file; is --repo an Ollama checkout?")
    checkout = open_checkout(build_dir or repo_dir / DEFAULT_BUILD_DIR, pin)
    source_dir = str(Path(checkout.workdir).resolve())
    upstream = _upstream_for(checkout, pin, ref, upstream_given, open_upstream)
    commit = upstream.commit(ref, pin.version_file)
    head = checkout.head.peel(pygit2.Commit)
    verdict = Verdict(pin.name, pin.version_file, source_dir, ref, str(commit.id), str(head.id), [])
    if head.id != commit.id:
        verdict.head_names = sorted(_tags_at(checkout, head.id) | _tags_at(upstream.repo, head.id))
        return verdict
    tree = Tree(GitSnapshot(upstream.repo, commit))
    verdict.stack = apply_stack(tree, _carried_patches(ollama, pin))
    actual = _checkout_files(checkout, set(tree.overlay))
    expected = {path: tree.read(path) for path in actual}
    verdict.differences = compare_files(expected, actual, verdict.stack.touched_by)
    return verdict
