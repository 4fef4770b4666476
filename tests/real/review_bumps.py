"""Run the upstream review on every real llama.cpp bump of Ollama and write its findings as test data.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP name git directories
of ollama/ollama and of llama.cpp (a fork whose `master` tracks upstream will do, see tests/real/extract.py).
For every Ollama commit that changed LLAMA_CPP_VERSION, `bot.engine.analyse(..., review=True)` compares the
bump's parent with the bump commit, over the Ollama mirror's git objects. The upstream refs resolve in a
scratch bare repository that borrows the llama.cpp mirror's objects (objects/info/alternates) and holds
only the two tags, so the mirror is never written to, and a blob its partial clone lacks stays unread
instead of being fetched.

    python -m tests.real.review_bumps            # (re)write tests/data/real-review/findings/<case>.json
                                                 # and <case>.bump-only.json
    python -m tests.real.review_bumps --list     # the bumps, write nothing

and the long jump (`LONG_JUMP`: an Ollama commit's tree with only the version file moved many releases on) as
`<old>-<new>.long-jump.json`, the review of a pull request that skips months of upstream.

`<case>.json` reviews the bump as merged: the maintainers' own fixes are in the head, so a detector that
stays quiet once Ollama sets what upstream asked for is quiet there. `<case>.bump-only.json` reviews the
first push such a pull request has: the parent's tree with only LLAMA_CPP_VERSION changed; recall is
measured on it.

Each finding keeps the report's keys, `check` among them: the check that raised it (`rule.<id>` for a
rule of bot/rules.toml).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pygit2

import bot.engine.pins
import bot.review
from bot.config import load_config
from bot.engine import analyse
from bot.model import AnalysisError, Finding
from bot.repos.snapshot import GitSnapshot
from bot.repos.upstream import Upstream
from bot.review import beside
from tests.real.extract import VERSION_FILE, Bump, ExtractError, RefResolver, find_bumps, mirrors

OUT = Path(__file__).resolve().parent.parent / "data" / "real-review" / "findings"
LONG_JUMP = ("630882621", "b9452", "b10587")  # an Ollama commit, the ref it pins, a ref months later
DETAIL_CHARS = 600  # enough of a finding's text to label it by; the full text is one rerun away


class Timer:
    """How long the reviews took, every check in this process."""

    def __init__(self):
        self.review_seconds = 0.0

    def timed(self, original: Callable) -> Callable:
        def review(ctx):
            start = time.perf_counter()
            try:
                return original(ctx)
            finally:
                self.review_seconds += time.perf_counter() - start

        return review

    @contextmanager
    def installed(self) -> Iterator[Timer]:
        with (
            mock.patch.object(beside, "_may_fork", lambda: False),
            mock.patch.object(bot.engine.pins, "review_pin", self.timed(bot.engine.pins.review_pin)),
        ):
            yield self


def scratch_upstream(mirror: Path, tags: dict[str, str], where: Path) -> pygit2.Repository:
    """A bare repository at `where` that reads the mirror's objects and has only `tags` (name -> commit)."""
    repo = pygit2.init_repository(str(where), bare=True)
    (where / "objects" / "info" / "alternates").write_text(str((mirror / "objects").resolve()) + "\n")
    repo = pygit2.Repository(str(where))
    for name, commit in tags.items():
        repo.references.create(f"refs/tags/{name}", pygit2.Oid(hex=commit), force=True)
    return repo


class VersionBumpOnly:
    """The parent's tree with only the version file taken from the bump: a pull request's first push."""

    def __init__(self, parent: GitSnapshot, path: str, data: bytes):
        self.parent, self.path, self.data = parent, path, data

    def read(self, path: str) -> bytes | None:
        return self.data if path == self.path else self.parent.read(path)

    def size(self, path: str) -> int | None:
        return len(self.data) if path == self.path else self.parent.size(path)

    def files(self, prefix: str = "") -> list[str]:
        return self.parent.files(prefix)


def finding_json(f: Finding) -> dict:
    detail = f.detail if len(f.detail) <= DETAIL_CHARS else f.detail[: DETAIL_CHARS - 1] + "…"
    return {
        "area": f.area,
        "severity": f.severity,
        "title": f.title,
        "upstream_path": f.upstream_path,
        "upstream_line": f.upstream_line,
        "check": f.check,
        "local_refs": [f"{r.path}:{r.line}" for r in f.local_refs],
        "upstream_commits": [c.sha[:12] for c in f.upstream_commits],
        "detail": detail,
    }


def review_snapshots(upstream_repo: pygit2.Repository, base, head, source: str) -> dict:
    """The review of Ollama's `base` -> `head` against the upstream refs `upstream_repo` holds, as JSON."""
    config = load_config(base)
    pins = tuple(p for p in config.pins if p.version_file == VERSION_FILE)
    config = dataclasses.replace(config, pins=pins)

    def open_upstream(pin, _refs):
        return Upstream(upstream_repo, pin.upstream, source)

    timer = Timer()
    errors: dict[str, str] = {}
    start = time.perf_counter()
    with timer.installed():
        report = analyse(config, base, head, open_upstream, None, review=True, errors=errors)
    total = time.perf_counter() - start
    pin = report.pins[0] if report.pins else None
    return {
        "error": next(iter(errors.values()), None),
        "analyse_seconds": round(total, 2),
        "review_seconds": round(timer.review_seconds, 2),
        "patches": {p.path: p.status for p in pin.patches} if pin else {},
        "exit": report.exit_status(),  # what `check` would exit with
        "unchecked": pin.unchecked if pin else [],
        "findings": [finding_json(f) for f in (pin.findings if pin else [])],
    }


def review_bump(
    bump: Bump,
    ollama: pygit2.Repository,
    llama_dir: Path,
    refs: RefResolver,
    scratch: Path,
    bump_only: bool,
    version: bytes | None = None,
) -> dict:
    """The review of one bump as the committed JSON: provenance, timings, patch statuses, findings
    (`version`: the version file's bytes at the head, else the bump commit's)."""
    old_commit, new_commit = refs.resolve(bump.old_ref), refs.resolve(bump.new_ref)
    upstream_repo = scratch_upstream(llama_dir, {bump.old_ref: old_commit, bump.new_ref: new_commit}, scratch)
    base = GitSnapshot(ollama, bump.parent)
    merged = GitSnapshot(ollama, bump.commit)
    version = merged.read(VERSION_FILE) or b"" if version is None else version
    head = VersionBumpOnly(base, VERSION_FILE, version) if bump_only else merged
    return {
        "case": bump.case_id,
        "ollama_commit": bump.commit,
        "ollama_parent": bump.parent,
        "subject": bump.subject,
        "head": "the parent with only LLAMA_CPP_VERSION bumped" if bump_only else "the bump commit",
        "old_ref": bump.old_ref,
        "new_ref": bump.new_ref,
        "old_commit": old_commit,
        "new_commit": new_commit,
        **review_snapshots(upstream_repo, base, head, f"the scratch repository {scratch}"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.real.review_bumps", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--list", action="store_true", help="print every bump, write nothing")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the findings go (default {OUT})")
    parser.add_argument("--case", action="append", default=[], help="only this case (old-new), repeatable")
    args = parser.parse_args(argv)
    try:
        ollama_dir, llama_dir = mirrors()
        bumps, _ = find_bumps(ollama_dir)
    except ExtractError as exc:
        print(f"review_bumps: {exc}", file=sys.stderr)
        return 2
    unknown = set(args.case) - {b.case_id for b in bumps}
    if unknown:
        print(f"review_bumps: no bump {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.list:
        for b in bumps:
            print(f"{b.case_id}  {b.commit[:10]} {b.subject}")
        return 0
    ollama, refs = pygit2.Repository(str(ollama_dir)), RefResolver(llama_dir)
    args.out.mkdir(parents=True, exist_ok=True)
    for bump in bumps:
        if args.case and bump.case_id not in args.case:
            continue
        for bump_only, suffix in ((False, ""), (True, ".bump-only")):
            with tempfile.TemporaryDirectory(prefix="review-bump-") as tmp:
                try:
                    data = review_bump(bump, ollama, llama_dir, refs, Path(tmp) / "upstream.git", bump_only)
                except (ExtractError, AnalysisError, subprocess.SubprocessError) as exc:
                    print(f"review_bumps: {bump.case_id}: {exc}", file=sys.stderr)
                    return 2
            path = args.out / f"{bump.case_id}{suffix}.json"
            path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
            counts = {
                s: sum(f["severity"] == s for f in data["findings"]) for s in ("high", "medium", "info")
            }
            print(f"wrote {path}: {counts}, review {data['review_seconds']} s")
    if not args.case:
        return _write_long_jump(ollama, llama_dir, refs, args.out)
    return 0


def _write_long_jump(ollama: pygit2.Repository, llama_dir: Path, refs: RefResolver, out: Path) -> int:
    commit, old_ref, new_ref = LONG_JUMP
    full = str(ollama.revparse_single(commit).id)
    jump = Bump(full, f"{old_ref} -> {new_ref} on {commit}", full, old_ref, new_ref)
    with tempfile.TemporaryDirectory(prefix="review-jump-") as tmp:
        try:
            data = review_bump(
                jump, ollama, llama_dir, refs, Path(tmp) / "upstream.git", True, f"{new_ref}\n".encode()
            )
        except (ExtractError, AnalysisError, subprocess.SubprocessError) as exc:
            print(f"review_bumps: {jump.case_id}: {exc}", file=sys.stderr)
            return 2
    path = out / f"{jump.case_id}.long-jump.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path}: review {data['review_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
