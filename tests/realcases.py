"""The real-data fixtures of tests/data/real/ as the engine runs on them, and what the maintainers did.

A fixture (written by tests/real/extract.py) holds one real llama.cpp bump of Ollama: the carried patches
before and after it, and the upstream files they touch at the old and new ref. Here it becomes a bare
upstream repository with the two refs as tags, and an Ollama-like base and head whose patches are the
`before/` ones: the maintainers' starting point, so the engine's result can be set beside theirs.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import parse_config
from bot.engine import analyse, patch_order
from bot.model import PatchResult, PinReport
from bot.patches.patchfile import parse
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder

REAL_DATA = Path(__file__).resolve().parent / "data" / "real"


@dataclass(frozen=True)
class PatchChange:
    """One carried patch across the bump, as the maintainers handled it (paths relative to the patch dir)."""

    before: str | None  # None: the maintainers added it
    after: str | None  # None: they dropped it
    change: str  # unchanged | refreshed | rewritten | dropped | added
    phrase: str  # what they did, in words, where the diff alone does not say it


@dataclass
class RealCase:
    id: str
    root: Path
    meta: dict

    @property
    def old_ref(self) -> str:
        return self.meta["upstream"]["old_ref"]

    @property
    def new_ref(self) -> str:
        return self.meta["upstream"]["new_ref"]

    @property
    def patch_dir(self) -> str:
        return self.meta["patch_dir"]

    @property
    def changes(self) -> list[PatchChange]:
        return [
            PatchChange(p["before"] or None, p["after"] or None, p["change"], p["phrase"])
            for p in self.meta.get("patch", [])
        ]

    def patches(self, side: str) -> dict[str, bytes]:
        """`before` or `after`: patch path relative to the patch dir -> bytes."""
        top = self.root / side
        return {p.relative_to(top).as_posix(): p.read_bytes() for p in sorted(top.rglob("*.patch"))}

    def upstream(self, side: str) -> dict[str, bytes]:
        """`old` or `new`: the upstream files at that ref, by path."""
        top = self.root / "upstream" / side
        return {
            p.relative_to(top).as_posix().removesuffix(".gz"): gzip.decompress(p.read_bytes())
            for p in sorted(top.rglob("*.gz"))
        }

    def stack(self, side: str) -> list[tuple[str, bytes]]:
        """The patches of one side in apply-patch.cmake's order, with their paths in the Ollama tree."""
        files = {f"{self.patch_dir}/{p}": data for p, data in self.patches(side).items()}
        return [(p, files[p]) for p in patch_order(MemorySnapshot(files), self.patch_dir)]


def load(root: Path) -> RealCase:
    with open(root / "case.toml", "rb") as f:
        meta = tomllib.load(f)
    return RealCase(meta["id"], root, meta)


def all_cases(where: Path = REAL_DATA) -> list[RealCase]:
    """The fixtures in the order of the bumps (b9452-b9479 before b10069-b10091)."""

    def bump_order(path: Path) -> list:
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.parent.name)]

    return [load(p.parent) for p in sorted(where.glob("*/case.toml"), key=bump_order)]


def build_upstream(case: RealCase, path: Path) -> RepoBuilder:
    """A bare repository with `old_ref` tagged on the old files and `new_ref` one commit later."""
    up = RepoBuilder(path)
    old, new = case.upstream("old"), case.upstream("new")
    up.commit(
        f"llama.cpp at {case.old_ref} ({case.meta['upstream']['old_commit'][:12]}), the patched files", old
    )
    up.tag(case.old_ref)
    up.commit(
        f"llama.cpp at {case.new_ref} ({case.meta['upstream']['new_commit'][:12]}), the patched files",
        {**{p: None for p in old if p not in new}, **new},
    )
    up.tag(case.new_ref)
    return up


def fixture_upstream(up: RepoBuilder, case: RealCase) -> Upstream:
    return Upstream(up.repo, case.meta["upstream"]["repository"])


def run_engine(
    case: RealCase, upstream: Upstream, refs: tuple[str, str] | None = None, head_side: str = "before"
) -> PinReport:
    """The engine's report on the bump (no upstream review), from an Ollama-like base carrying the patches as
    they were before it and a head carrying them as they were before it (the maintainers' starting point)
    or, with `head_side="after"`, as the maintainers merged them (the finished bump). `refs` (old, new)
    replace the case's ref names, for an upstream that knows the commits by id only."""
    old, new = refs or (case.old_ref, case.new_ref)
    version = case.meta["version_file"]
    base = MemorySnapshot({version: f"{old}\n".encode(), **dict(case.stack("before"))})
    head = MemorySnapshot({version: f"{new}\n".encode(), **dict(case.stack(head_side))})
    report = analyse(parse_config(None), base, head, lambda pin, refs: upstream, [version], review=False)
    return report.pins[0]


def git_apply_files(
    files: dict[str, bytes], stack: list[tuple[str, bytes]]
) -> tuple[dict[str, bool], dict[str, bytes]]:
    """The real `git apply --check` of each patch in order on a directory holding `files`, each applied when
    it fits (as apply-patch.cmake does, except that it stops at the first failure): patch -> whether it
    applied, and the files afterwards."""
    applied = {}
    with tempfile.TemporaryDirectory(prefix="llama-bot-realcase-") as tmp:
        root = Path(tmp) / "src"
        root.mkdir()
        for path, data in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": tmp}
        for i, (name, data) in enumerate(stack):
            patch = Path(tmp) / f"{i}.patch"
            patch.write_bytes(data)
            check = subprocess.run(
                ["git", "apply", "--whitespace=nowarn", "--check", str(patch)],
                cwd=root,
                env=env,
                capture_output=True,
                check=False,
            )
            if check.returncode == 0:
                subprocess.run(
                    ["git", "apply", "--whitespace=nowarn", str(patch)],
                    cwd=root,
                    env=env,
                    check=True,
                    capture_output=True,
                )
            applied[name] = check.returncode == 0
        result = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    return applied, result


APPLIED = ("clean", "offset", "regenerated", "fuzzy")  # the statuses whose patch the engine puts on the stack


def rebuilt_stack(pin: PinReport) -> list[tuple[str, bytes]]:
    """The patches as the engine leaves them: each one it applies or rebuilds, in stack order."""
    return [(p.path, p.new_text or b"") for p in pin.patches if p.status in APPLIED]


def git_verdicts(case: RealCase, pin: PinReport) -> dict[str, bool]:
    """Whether each patch as it was passes the real `git apply --check` on the new ref, with the earlier
    patches as the engine left them (a rebuilt one rebuilt, a conflict left out): what the engine checks."""
    files = case.upstream("new")
    results = {r.path: r for r in pin.patches}
    verdicts = {}
    for path, data in case.stack("before"):
        verdicts[path] = git_apply_files(files, [(path, data)])[0][path]
        if results[path].status in APPLIED:
            files = git_apply_files(files, [(path, results[path].new_text or b"")])[1]
    return verdicts


def touched(stack: list[tuple[str, bytes]]) -> set[str]:
    """The upstream paths the patches change."""
    return {p for _, data in stack for fp in parse(data).files for p in (fp.old_path, fp.new_path) if p}


def squeeze(data: bytes) -> bytes:
    """A file with all whitespace removed: equal when two files differ only in spacing and line breaks."""
    return b"".join(data.split())


@dataclass
class Measured:
    """One carried patch of a real case: what the maintainers did, what the engine does, and whether the
    engine's files equal theirs (None where the maintainers added the patch: the engine never saw it)."""

    case: RealCase
    change: PatchChange
    applies: bool | None  # the patch as it was, by the real git apply on the new ref (see git_verdicts)
    result: PatchResult | None
    equal: bool | None
    # the files that differ from the maintainers' beyond whitespace
    differing: list[str] = field(default_factory=list)
    why: str = ""  # when not equal: what the engine says (message and hunk details), or what differs

    @property
    def patch(self) -> str:
        return self.change.before or self.change.after or ""


def measure(case: RealCase, pin: PinReport) -> list[Measured]:
    """Every patch of the case, the engine's result set beside the maintainers'.

    The engine's files for a patch are the new ref with the maintainers' final stack, in which only that
    patch is replaced by the engine's version: another patch the engine got wrong cannot make this one
    look different. A dropped patch is equal when the engine says `upstreamed`.
    """
    new = case.upstream("new")
    before = case.stack("before")
    after = case.stack("after")
    applies = git_verdicts(case, pin)
    _, theirs = git_apply_files(new, after)
    results = {r.path: r for r in pin.patches}
    out = []
    for change in case.changes:
        if change.before is None:
            out.append(Measured(case, change, None, None, None))
            continue
        path = f"{case.patch_dir}/{change.before}"
        result = results[path]
        measured = Measured(case, change, applies[path], result, False)
        out.append(measured)
        if change.after is None:
            measured.equal = result.status == "upstreamed"
            measured.why = (
                "" if measured.equal else f"maintainers dropped it; the engine says: {reason(result)}"
            )
            continue
        if result.status not in APPLIED:
            measured.why = reason(result)
            continue
        ours_path = f"{case.patch_dir}/{change.after}"
        stack = [(p, result.new_text or b"") if p == ours_path else (p, data) for p, data in after]
        fits, ours = git_apply_files(new, stack)
        if not fits[ours_path]:
            measured.why = (
                "the engine's patch does not apply on the maintainers' other patches; "
                f"the engine says: {reason(result)}"
            )
            continue
        paths = touched([(path, dict(before)[path]), (ours_path, dict(after)[ours_path])])
        measured.differing = sorted(
            p for p in paths if squeeze(ours.get(p, b"")) != squeeze(theirs.get(p, b""))
        )
        measured.equal = not measured.differing
        if measured.differing:
            measured.why = f"{', '.join(measured.differing)} differ; the engine says: {reason(result)}"
    return out


def reason(result: PatchResult) -> str:
    """What the engine says about a patch: its message, and the detail of each hunk it did not apply as is."""
    details = [
        f"{h.file}:{h.new_line} {h.status}: {h.detail}"
        for h in result.hunks
        if h.status not in ("clean", "offset") and h.detail
    ]
    return " | ".join([result.message, *details])
