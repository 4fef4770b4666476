"""Excerpts of the real bumps that reproduce the upstream review without the mirrors, and the review over them.

Extraction (needs LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP) runs the review of every bump, merged
and bump-only, records every file it reads (Ollama's base and head, upstream's old and new tree through
snapshots, the FileChange loaders and the History) and stores those files as one git bundle: per case an
upstream old commit, the upstream commits between the refs that touch those files (replayed on it, with their
messages, so the review credits the same commits; the last one is the new ref), an Ollama base commit and an Ollama head commit
(child of base). manifest.json names the refs, the source commits and the paths.

    python -m tests.real.review_excerpts            # (re)write tests/data/real-review/excerpts/

`live_reviews()` rebuilds a bare repository from the bundle in a temp dir and runs the real review
(bot.engine.analyse with review=True) on each case, returning the same JSON review_bumps.py commits.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import pygit2

import bot.engine.pins
import bot.review
from bot.repos.history import History
from bot.repos.snapshot import GitSnapshot
from tests.real.extract import VERSION_FILE, ExtractError, RefResolver, find_bumps, mirrors
from tests.real.review_bumps import VersionBumpOnly, review_snapshots, scratch_upstream

EXCERPTS = Path(__file__).resolve().parent.parent / "data" / "real-review" / "excerpts"
# An upstream file larger than this is kept only when a high or medium finding names it or a patch touches it:
# the large ones (a backend's kernels, the web UI's lock file) give information at most, and would make the
# excerpts many times larger.
MAX_EXCERPT_BYTES = 96_000
SIGNATURE = pygit2.Signature("llama-bot excerpts", "excerpts@invalid", 0, 0)


class ReadLog:
    """The paths read from each git tree (by tree id) while the review runs."""

    def __init__(self):
        self.by_tree: dict[str, set[str]] = defaultdict(set)
        self.needed: set[str] = set()  # files kept whatever their size: patch targets, findings' files

    @contextmanager
    def installed(self) -> Iterator[ReadLog]:
        log = self
        snapshot_read, history_read = GitSnapshot.read, History.read
        changes, reviewed = bot.review.upstream_changes, bot.engine.pins.review_pin

        def review(ctx):
            # the files the patches touch: the patch-context items need their hunks, which the diff makes
            # without any read the log can see
            targets = {fp.path for _, pf in ctx.patches for fp in pf.files}
            log.needed |= targets
            for snapshot in (ctx.old, ctx.new):
                log.by_tree[str(snapshot.tree.id)].update(targets)
            return reviewed(ctx)

        def read(snapshot, path):
            log.by_tree[str(snapshot.tree.id)].add(path)
            return snapshot_read(snapshot, path)

        def history(h, commit, path):
            log.by_tree[str(commit.tree.id)].add(path)
            return history_read(h, commit, path)

        def upstream_changes(repo, old, new):
            found, skipped = changes(repo, old, new)
            for change in found:
                for tree, side, attr in (
                    (old, change.old_path, "_load_old"),
                    (new, change.new_path, "_load_new"),
                ):
                    if side:
                        loader = getattr(change, attr)
                        setattr(change, attr, _logged(loader, log.by_tree[str(tree.id)], side))
            return found, skipped

        with ExitStack() as stack:
            stack.enter_context(mock.patch.object(GitSnapshot, "read", read))
            stack.enter_context(mock.patch.object(History, "read", history))
            stack.enter_context(mock.patch.object(bot.review, "upstream_changes", upstream_changes))
            stack.enter_context(mock.patch.object(bot.engine.pins, "review_pin", review))
            yield self


def _logged(loader, paths: set[str], path: str):
    def load():
        paths.add(path)
        return loader()

    return load


def _size(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> int:
    try:
        return repo[tree[path].id].size
    except KeyError:
        return 0


def _exists(tree: pygit2.Tree, path: str) -> bool:
    try:
        return isinstance(tree[path], pygit2.Blob)
    except KeyError:
        return False


def _all_files(tree: pygit2.Tree, base: str = "") -> Iterator[str]:
    for entry in tree:
        path = base + (entry.name or "")
        if isinstance(entry, pygit2.Tree):
            yield from _all_files(entry, path + "/")
        elif entry.type == pygit2.GIT_OBJECT_BLOB:
            yield path


def _commit(
    out: pygit2.Repository,
    source: pygit2.Repository,
    tree: pygit2.Tree,
    paths: set[str],
    parents,
    message: str = "excerpt",
) -> str:
    """A commit in `out` holding `paths` of `tree` (files the source lacks or does not have are left out), and
    every other file of `tree` empty: the review lists whole trees, and an empty file on both sides is no
    change."""
    index = pygit2.Index()
    empty = out.create_blob(b"")
    for path in _all_files(tree):
        if path not in paths:
            index.add(pygit2.IndexEntry(path, empty, pygit2.GIT_FILEMODE_BLOB))
    for path in sorted(paths):
        try:
            entry = tree[path]
            data = source[entry.id].data
        except KeyError:
            continue
        if not isinstance(entry, pygit2.Blob):
            continue
        index.add(pygit2.IndexEntry(path, out.create_blob(data), entry.filemode))
    tree_id = index.write_tree(out)
    return str(out.create_commit(None, SIGNATURE, SIGNATURE, message, tree_id, parents))


def _history(
    out: pygit2.Repository,
    llama: pygit2.Repository,
    llama_dir: Path,
    old: str,
    new: str,
    paths: set[str],
    base: str,
) -> str:
    """The upstream commits between the refs that touch `paths`, replayed on `base` with their messages and
    only those files: attribution names the same commits (by subject) as on the mirror. Returns the last one,
    whose files are the new ref's."""
    listed = subprocess.run(
        [
            "git",
            "-C",
            str(llama_dir),
            "rev-list",
            "--reverse",
            "--first-parent",
            f"{old}..{new}",
            "--",
            *sorted(paths),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    tip = base
    for sha in listed or [new]:
        commit = llama[sha].peel(pygit2.Commit)
        tip = _commit(out, llama, commit.tree, paths, [tip], commit.message)
    final = llama[new].peel(pygit2.Commit)
    if listed and listed[-1] != str(final.id):
        tip = _commit(out, llama, final.tree, paths, [tip], final.message)
    return tip


def live_cases(labels: Path = EXCERPTS.parent / "labels.toml") -> set[str]:
    """The bumps `make test` reviews live, as labels.toml's `live` names them (the others are reviewed from the
    mirrors only, by tests/real/review_bumps.py)."""
    return set(tomllib.loads(labels.read_text()).get("live", []))


def extract(out_dir: Path = EXCERPTS) -> int:
    ollama_dir, llama_dir = mirrors()
    bumps, _ = find_bumps(ollama_dir)
    ollama, refs = pygit2.Repository(str(ollama_dir)), RefResolver(llama_dir)
    llama = pygit2.Repository(str(llama_dir))
    manifest = []
    with tempfile.TemporaryDirectory(prefix="review-excerpts-") as tmp:
        out = pygit2.init_repository(str(Path(tmp) / "excerpts.git"), bare=True)
        for bump in (b for b in bumps if b.case_id in live_cases()):
            log = ReadLog()
            with log.installed():
                for bump_only in (True,):
                    scratch = Path(tmp) / f"{bump.case_id}-{bump_only}.git"
                    old_commit, new_commit = refs.resolve(bump.old_ref), refs.resolve(bump.new_ref)
                    upstream_repo = scratch_upstream(
                        llama_dir, {bump.old_ref: old_commit, bump.new_ref: new_commit}, scratch
                    )
                    base = GitSnapshot(ollama, bump.parent)
                    merged = GitSnapshot(ollama, bump.commit)
                    head = (
                        VersionBumpOnly(base, VERSION_FILE, merged.read(VERSION_FILE) or b"")
                        if bump_only
                        else merged
                    )
                    data = review_snapshots(upstream_repo, base, head, f"the scratch repository {scratch}")
                    log.needed |= {f["upstream_path"] for f in data["findings"] if f["severity"] != "info"}
            sides = {
                "upstream_old": (llama, llama[old_commit].peel(pygit2.Commit).tree),
                "upstream_new": (llama, llama[new_commit].peel(pygit2.Commit).tree),
                "ollama_base": (ollama, base.tree),
                "ollama_head": (ollama, merged.tree),
            }
            read = {side: log.by_tree.get(str(tree.id), set()) for side, (_, tree) in sides.items()}
            # a file read on one side only is kept on both, or the excerpt would show it added or removed
            upstream = {
                p
                for p in read["upstream_old"] | read["upstream_new"]
                if p in log.needed or _size(llama, sides["upstream_new"][1], p) <= MAX_EXCERPT_BYTES
            }
            local = read["ollama_base"] | read["ollama_head"]
            both = {
                "upstream_old": upstream,
                "upstream_new": upstream,
                "ollama_base": local,
                "ollama_head": local,
            }
            paths = {
                side: sorted(p for p in both[side] if _exists(tree, p)) for side, (_, tree) in sides.items()
            }
            made: dict[str, str] = {}
            for side, parent in (
                ("upstream_old", None),
                ("upstream_new", "upstream_old"),
                ("ollama_base", None),
                ("ollama_head", "ollama_base"),
            ):
                repo, tree = sides[side]
                if side == "upstream_new":
                    made[side] = _history(
                        out, llama, llama_dir, old_commit, new_commit, set(paths[side]), made["upstream_old"]
                    )
                else:
                    made[side] = _commit(out, repo, tree, set(paths[side]), [made[parent]] if parent else [])
                out.references.create(
                    f"refs/excerpts/{bump.case_id}/{side}", pygit2.Oid(hex=made[side]), force=True
                )
            manifest.append(
                {
                    "case": bump.case_id,
                    "old_ref": bump.old_ref,
                    "new_ref": bump.new_ref,
                    "old_commit": old_commit,
                    "new_commit": new_commit,
                    "ollama_parent": bump.parent,
                    "ollama_commit": bump.commit,
                    "subject": bump.subject,
                    "files": {side: len(p) for side, p in paths.items()},
                }
            )
            print(f"{bump.case_id}: {', '.join(f'{s} {len(p)}' for s, p in paths.items())}")
        out_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", out.path, "gc", "-q", "--aggressive"], check=True)
        subprocess.run(
            ["git", "-C", out.path, "bundle", "create", str(out_dir / "excerpts.bundle"), "--all"],
            check=True,
            capture_output=True,
        )
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


def excerpt_repository(where: Path, bundle: Path = EXCERPTS / "excerpts.bundle") -> pygit2.Repository:
    """A bare repository at `where` with every excerpt ref of the bundle."""
    subprocess.run(["git", "init", "-q", "--bare", str(where)], check=True)
    subprocess.run(
        ["git", "-C", str(where), "fetch", "-q", str(bundle), "refs/excerpts/*:refs/excerpts/*"],
        check=True,
        capture_output=True,
    )
    return pygit2.Repository(str(where))


def live_reviews(cases: list[str] | None = None, root: Path = EXCERPTS) -> dict[str, dict[str, dict]]:
    """review name ("bump-only": the first push of each pull request) -> case -> the review's JSON, run on the
    excerpts alone."""
    manifest = json.loads((root / "manifest.json").read_text())
    reviews: dict[str, dict[str, dict]] = {"bump-only": {}}
    with tempfile.TemporaryDirectory(prefix="review-excerpts-") as tmp:
        repo = excerpt_repository(Path(tmp) / "excerpts.git", root / "excerpts.bundle")
        for entry in manifest:
            case = entry["case"]
            if cases and case not in cases:
                continue
            ref = f"refs/excerpts/{case}"
            tags = {
                entry["old_ref"]: str(repo.references[f"{ref}/upstream_old"].target),
                entry["new_ref"]: str(repo.references[f"{ref}/upstream_new"].target),
            }
            base = GitSnapshot(repo, str(repo.references[f"{ref}/ollama_base"].target))
            merged = GitSnapshot(repo, str(repo.references[f"{ref}/ollama_head"].target))
            for name, bump_only in (("bump-only", True),):
                scratch = Path(tmp) / f"{case}-{name}.git"
                upstream = scratch_upstream(Path(repo.path), tags, scratch)
                head = (
                    VersionBumpOnly(base, VERSION_FILE, merged.read(VERSION_FILE) or b"")
                    if bump_only
                    else merged
                )
                data = review_snapshots(upstream, base, head, f"the excerpt of {case}")
                reviews[name][case] = {
                    "case": case,
                    "old_ref": entry["old_ref"],
                    "new_ref": entry["new_ref"],
                    "old_commit": entry["old_commit"],
                    "new_commit": entry["new_commit"],
                    **data,
                }
    return reviews


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.real.review_excerpts", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--out", type=Path, default=EXCERPTS, help=f"where the excerpts go (default {EXCERPTS})"
    )
    args = parser.parse_args(argv)
    try:
        return extract(args.out)
    except ExtractError as exc:
        print(f"review_excerpts: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
