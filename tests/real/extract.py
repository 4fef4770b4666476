"""Extract Ollama's real llama.cpp bumps into small fixtures under tests/data/real/.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP name git directories
of ollama/ollama and of llama.cpp (a fork whose `master` tracks upstream will do). For every Ollama commit
that changed LLAMA_CPP_VERSION it finds the old and new ref, the carried patches before (the parent's) and
after (the commit's, plus later commits that say they follow up the same pull request), checks each patch
with the real `git apply`, and writes one fixture per case where a patch stopped applying or was changed,
plus the CONTROLS below:

    <case>/case.toml          provenance: Ollama commit, refs, upstream commit and blob ids, each patch's fate
    <case>/before/, after/    the patches below llama/compat/ before the bump and as the maintainers left them
    <case>/upstream/old/, new/  only the upstream files the patches touch, at each ref, gzip-compressed

    python -m tests.real.extract --list          # every bump and what happened to its patches
    python -m tests.real.extract                 # (re)write tests/data/real/
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.engine import patch_order
from bot.patches.patchfile import PatchError, parse
from bot.repos.snapshot import GitSnapshot, MemorySnapshot
from tests.realcases import git_apply_files

VERSION_FILE = "LLAMA_CPP_VERSION"
PATCH_DIR = "llama/compat"
UPSTREAM_URL = "https://github.com/ggml-org/llama.cpp"
OLLAMA_URL = "https://github.com/ollama/ollama"
OUT = Path(__file__).resolve().parent.parent / "data" / "real"
TAG_NUMBER = re.compile(r"b(\d+)")

# Bumps in which every carried patch applied as it was, kept as controls: one with each patch layout.
CONTROLS = ("b9452-b9479", "b9888-b10069", "b10434-b10488")

# What the maintainers did to a patch, in one phrase, where the diff alone does not say it, by
# "<case id> <patch path>" (its path after the bump, or before it when they dropped it).
PHRASES = {
    "b9479-b9493 models/llama-cpp-laguna.patch": (
        "re-anchored the entries on upstream's new neighbours (after LLM_ARCH_MELLUM; the model-switch case "
        "moved up next to LLM_ARCH_TALKIE), renumbered LLAMA_VOCAB_PRE_TYPE_LAGUNA from 54 to 56 (upstream "
        "took 54 and 55), dropped the index lines"
    ),
    "b9509-b9626 models/003-llama-cpp-laguna.patch": (
        "moved LLM_ARCH_LAGUNA after upstream's new last arch (LLM_ARCH_EAGLE3); numbered the patches"
    ),
    "b9509-b9626 002-llama-cpp-ui-empty-assets.patch": "added: llama-ui-embed crashed without an asset directory",
    "b9626-b9672 002-llama-cpp-ui-empty-assets.patch": (
        "dropped: upstream's llama-ui-embed now accepts a missing asset directory itself"
    ),
    "b9672-b9781 001-llama-cpp-hooks.patch": (
        "re-indented the clip.cpp tensor-load hook into upstream's new nesting; new line numbers and index lines"
    ),
    "b9781-b9840 models/003-llama-cpp-laguna.patch": (
        "moved LLM_ARCH_LAGUNA after upstream's new last arch (LLM_ARCH_DFLASH) and its rope case after MELLUM"
    ),
    "b10069-b10091 models/003-llama-cpp-laguna.patch": "dropped: Laguna is native upstream now",
    "b10069-b10091 models/003-llama-cpp-laguna-metal.patch": "added: a Metal-only overflow fix for upstream's own Laguna",
    "b10091-b10242 001-llama-cpp-hooks.patch": (
        'put the include after upstream\'s new #include "llama.h"; the metadata hook sets this->use_mmap '
        "(upstream made the use_mmap parameter a member)"
    ),
}


class ExtractError(Exception):
    """The mirrors cannot give a case: one line for the user."""


def _git(repo: Path, *args: str) -> bytes:
    out = subprocess.run(["git", "-C", str(repo), *args], check=False, capture_output=True)
    if out.returncode:
        raise ExtractError(f"git {' '.join(args)} in {repo}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


class RefResolver:
    """Upstream refs as Ollama's version file names them, to commit ids.

    A tag resolves to its commit. Where the fork lacks a tag `bNNNN`, upstream's rule gives it: the commit
    of master's first-parent line whose `git rev-list --count` is NNNN. A 40-hex id resolves to itself.
    """

    def __init__(self, repo: Path, branch: str = "master"):
        self.repo = repo
        self.git = pygit2.Repository(str(repo))
        self.branch = branch
        self._by_count: dict[int, str] | None = None

    def resolve(self, ref: str) -> str:
        try:
            return str(self.git.lookup_reference(f"refs/tags/{ref}").peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.InvalidSpecError):
            pass
        if re.fullmatch(r"[0-9a-fA-F]{40}", ref):
            try:
                return str(self.git[ref.lower()].peel(pygit2.Commit).id)
            except (KeyError, ValueError, pygit2.GitError):
                raise ExtractError(f"{ref} is not a commit of {self.repo}") from None
        number = TAG_NUMBER.fullmatch(ref)
        if number is None:
            raise ExtractError(f"{ref!r} is neither a tag of {self.repo}, nor bNNNN, nor a 40-hex commit id")
        return self.by_count(int(number[1]))

    def by_count(self, wanted: int) -> str:
        """The commit of the first-parent line whose `rev-list --count` is `wanted`, ignoring tags."""
        counts = self._counts()
        if wanted in counts:
            return counts[wanted]
        top = max(counts, default=0)
        if wanted > top:
            raise ExtractError(f"b{wanted}: {self.branch} of {self.repo} has only {top} commits")
        raise ExtractError(
            f"b{wanted}: no commit on {self.branch}'s first-parent line has rev-list --count "
            f"{wanted} (a merge there brings several commits at once)"
        )

    def _counts(self) -> dict[int, str]:
        """rev-list --count of every commit on the first-parent line: one more than its parent's, or for a
        merge, plus what it brings (`rev-list --count parent..merge`)."""
        if self._by_count is None:
            line = _git(
                self.repo, "rev-list", "--first-parent", "--reverse", "--parents", self.branch
            ).decode()
            self._by_count, count = {}, 0
            for entry in line.splitlines():
                commit, *parents = entry.split()
                count += (
                    int(_git(self.repo, "rev-list", "--count", f"{parents[0]}..{commit}"))
                    if len(parents) > 1
                    else 1
                )
                self._by_count[count] = commit
        return self._by_count


@dataclass
class Bump:
    commit: str
    subject: str
    parent: str
    old_ref: str
    new_ref: str
    # later commits that fix patches and name the same pull request
    follow_ups: list[str] = field(default_factory=list)

    @property
    def case_id(self) -> str:
        return f"{self.old_ref[:12]}-{self.new_ref[:12]}"

    @property
    def pull_request(self) -> str | None:
        found = re.findall(r"\(#(\d+)\)", self.subject)
        return found[-1] if found else None


def read_blob(repo: pygit2.Repository, rev: str, path: str) -> bytes | None:
    tree = repo.revparse_single(rev).peel(pygit2.Commit).tree
    try:
        obj = tree[path]
    except KeyError:
        return None
    if not isinstance(obj, pygit2.Blob):
        return None
    return obj.data


def patches_at(repo: pygit2.Repository, rev: str, directory: str = PATCH_DIR) -> dict[str, bytes]:
    """Every *.patch below `directory` at `rev`, by path relative to it."""
    snapshot = GitSnapshot(repo, repo.revparse_single(rev).peel(pygit2.Commit))
    prefix = directory.rstrip("/") + "/"
    return {
        path.removeprefix(prefix): snapshot.read(path) or b""
        for path in snapshot.files(directory)
        if path.endswith(".patch")
    }


def stack_order(paths) -> list[str]:
    """apply-patch.cmake's order (by file name, as the engine applies them) of paths below the patch dir."""
    prefixed = MemorySnapshot({f"{PATCH_DIR}/{p}": b"" for p in paths})
    return [p.removeprefix(f"{PATCH_DIR}/") for p in patch_order(prefixed, PATCH_DIR)]


def find_bumps(ollama: Path) -> tuple[list[Bump], list[str]]:
    """Every commit that changed the version file from one ref to another (oldest first), and the commits
    that changed it otherwise (added it), each with why it is not a case."""
    repo = pygit2.Repository(str(ollama))
    log = _git(ollama, "log", "--reverse", "--format=%H", "--", VERSION_FILE).decode().split()
    bumps, skipped = [], []
    for commit in log:
        c = repo[commit]
        parent = str(c.parent_ids[0]) if c.parent_ids else None
        new = read_blob(repo, commit, VERSION_FILE)
        old = read_blob(repo, parent, VERSION_FILE) if parent else None
        subject = c.message.split("\n", 1)[0]
        if old is None or new is None:
            skipped.append(f"{commit[:10]} {subject}: {'adds' if old is None else 'removes'} {VERSION_FILE}")
            continue
        old_ref, new_ref = old.decode().strip(), new.decode().strip()
        if old_ref == new_ref:
            skipped.append(f"{commit[:10]} {subject}: {VERSION_FILE} keeps {new_ref}")
            continue
        bumps.append(Bump(commit, subject, parent or "", old_ref, new_ref))
    for i, bump in enumerate(bumps):
        until = bumps[i + 1].commit if i + 1 < len(bumps) else "HEAD"
        bump.follow_ups = _follow_ups(ollama, repo, bump, until)
    return bumps, skipped


def _follow_ups(ollama: Path, repo: pygit2.Repository, bump: Bump, until: str) -> list[str]:
    """Commits after the bump and before the next one that change a patch and name the bump's pull request
    (Ollama squashes pull requests, so a fix in a later commit says "follow up to #N" or carries the number)."""
    if bump.pull_request is None:
        return []
    log = _git(ollama, "log", "--reverse", "--format=%H", f"{bump.commit}..{until}", "--", PATCH_DIR).decode()
    found = []
    for commit in log.split():
        if commit == until:
            continue
        if f"#{bump.pull_request}" in repo[commit].message and patches_at(repo, commit) != patches_at(
            repo, f"{commit}^"
        ):
            found.append(commit)
    return found


def touched_paths(patches: dict[str, bytes]) -> set[str]:
    paths: set[str] = set()
    for data in patches.values():
        try:
            files = parse(data).files
        except PatchError as exc:
            raise ExtractError(f"a carried patch does not parse: {exc}") from None
        paths |= {p for fp in files for p in (fp.old_path, fp.new_path) if p}
    return paths


def upstream_files(llama: pygit2.Repository, commit: str, paths: set[str]) -> dict[str, tuple[bytes, int]]:
    """The paths that exist at `commit`: content and file mode. A partial clone's missing blob is an error."""
    tree = llama[commit].peel(pygit2.Commit).tree
    found = {}
    for path in sorted(paths):
        try:
            entry = tree[path]
        except KeyError:
            continue
        if not llama.odb.exists(entry.id):
            raise ExtractError(f"{path} at {commit[:12]}: its blob is missing from the partial clone")
        found[path] = (llama[entry.id].data, entry.filemode)
    return found


def _changed_lines(data: bytes) -> list[bytes]:
    """The patch's added and removed lines with their file headers: what it does, not where."""
    return [line for line in data.splitlines() if line[:1] in (b"+", b"-") or line.startswith(b"diff --git")]


def pair(before: dict[str, bytes], after: dict[str, bytes]) -> list[tuple[str | None, str | None]]:
    """Patches before and after, matched by path, else by name without its numeric prefix and directory
    (Ollama numbered its patches at b9637), else by identical content."""

    def stem(path: str) -> str:
        return re.sub(r"^\d+-", "", path.rsplit("/", 1)[-1])

    pairs: list[tuple[str | None, str | None]] = []
    left = dict.fromkeys(after)
    for path in stack_order(before):
        match = (
            path
            if path in left
            else next((p for p in left if stem(p) == stem(path) or after[p] == before[path]), None)
        )
        if match is not None:
            del left[match]
        pairs.append((path, match))
    pairs += [(None, p) for p in stack_order(left)]
    return pairs


def change_kind(before: bytes | None, after: bytes | None) -> str:
    if before is None:
        return "added"
    if after is None:
        return "dropped"
    if before == after:
        return "unchanged"
    if _changed_lines(before) == _changed_lines(after):
        return "refreshed"  # only line numbers, context or index lines differ
    return "rewritten"


@dataclass
class Case:
    bump: Bump
    old_commit: str
    new_commit: str
    commits_between: int
    before: dict[str, bytes]
    after: dict[str, bytes]
    pairs: list[tuple[str | None, str | None]]
    applies_old: dict[str, bool]
    applies_new: dict[str, bool]
    after_applies_new: dict[str, bool]
    old_files: dict[str, tuple[bytes, int]]
    new_files: dict[str, tuple[bytes, int]]

    @property
    def broken(self) -> bool:
        """A carried patch stopped applying, or the maintainers had to change one."""
        return not all(self.applies_new.values()) or any(
            change_kind(self.before.get(b or ""), self.after.get(a or "")) != "unchanged"
            for b, a in self.pairs
        )


def _applies(files: dict[str, tuple[bytes, int]], patches: dict[str, bytes]) -> dict[str, bool]:
    return git_apply_files(
        {p: d for p, (d, _) in files.items()}, [(p, patches[p]) for p in stack_order(patches)]
    )[0]


def build_case(bump: Bump, ollama: pygit2.Repository, llama: pygit2.Repository, refs: RefResolver) -> Case:
    old_commit, new_commit = refs.resolve(bump.old_ref), refs.resolve(bump.new_ref)
    before = patches_at(ollama, bump.parent)
    last = bump.follow_ups[-1] if bump.follow_ups else bump.commit
    after = patches_at(ollama, last)
    paths = touched_paths(before) | touched_paths(after)
    old_files = upstream_files(llama, old_commit, paths)
    new_files = upstream_files(llama, new_commit, paths)
    walker = llama.walk(pygit2.Oid(hex=new_commit))
    walker.hide(pygit2.Oid(hex=old_commit))
    return Case(
        bump,
        old_commit,
        new_commit,
        sum(1 for _ in walker),
        before,
        after,
        pair(before, after),
        _applies(old_files, before),
        _applies(new_files, before),
        _applies(new_files, after),
        old_files,
        new_files,
    )


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def case_toml(case: Case) -> str:
    """The provenance of a fixture, read back by tests/realcases.py."""
    b = case.bump
    lines = [
        f"id = {_toml_str(b.case_id)}",
        f"version_file = {_toml_str(VERSION_FILE)}",
        f"patch_dir = {_toml_str(PATCH_DIR)}",
        "",
        "[ollama]",
        f"repository = {_toml_str(OLLAMA_URL)}",
        f"commit = {_toml_str(b.commit)}",
        f"subject = {_toml_str(b.subject)}",
        f"parent = {_toml_str(b.parent)}",
        f"follow_ups = [{', '.join(_toml_str(c) for c in b.follow_ups)}]",
        "",
        "[upstream]",
        f"repository = {_toml_str(UPSTREAM_URL)}",
        f"old_ref = {_toml_str(b.old_ref)}",
        f"old_commit = {_toml_str(case.old_commit)}",
        f"new_ref = {_toml_str(b.new_ref)}",
        f"new_commit = {_toml_str(case.new_commit)}",
        f"commits_between = {case.commits_between}",
    ]
    for before, after in case.pairs:
        kind = change_kind(case.before.get(before or ""), case.after.get(after or ""))
        lines += [
            "",
            "[[patch]]",
            f"before = {_toml_str(before or '')}",
            f"after = {_toml_str(after or '')}",
            f"change = {_toml_str(kind)}",
            f"phrase = {_toml_str(PHRASES.get(f'{b.case_id} {after or before}', ''))}",
        ]
        if before:
            lines += [
                f"applies_at_old_ref = {str(case.applies_old[before]).lower()}",
                f"applies_at_new_ref = {str(case.applies_new[before]).lower()}",
            ]
        if after:
            lines.append(f"after_applies_at_new_ref = {str(case.after_applies_new[after]).lower()}")
    for path in sorted(case.old_files.keys() | case.new_files.keys()):
        old, new = case.old_files.get(path), case.new_files.get(path)
        lines += [
            "",
            "[[file]]",
            f"path = {_toml_str(path)}",
            f"old_blob = {_toml_str(str(pygit2.hash(old[0])) if old else '')}",
            f"new_blob = {_toml_str(str(pygit2.hash(new[0])) if new else '')}",
            f"mode = {_toml_str(oct((new or old)[1])[2:])}",
        ]  # type: ignore[index]
    return "\n".join(lines) + "\n"


def write_case(case: Case, out: Path) -> Path:
    where = out / case.bump.case_id
    if where.exists():
        shutil.rmtree(where)
    for sub, files in (("before", case.before), ("after", case.after)):
        for path, data in files.items():
            (where / sub / path).parent.mkdir(parents=True, exist_ok=True)
            (where / sub / path).write_bytes(data)
    for sub, upstream in (("upstream/old", case.old_files), ("upstream/new", case.new_files)):
        for path, (data, _) in upstream.items():
            (where / sub / path).parent.mkdir(parents=True, exist_ok=True)
            (where / sub / f"{path}.gz").write_bytes(gzip.compress(data, 9, mtime=0))
    (where / "case.toml").write_text(case_toml(case))
    return where


def write_notice(out: Path, ollama: pygit2.Repository, llama: pygit2.Repository, cases: list[Case]) -> None:
    llama_license = read_blob(llama, cases[-1].new_commit, "LICENSE")
    ollama_license = read_blob(ollama, cases[-1].bump.commit, "LICENSE")
    if llama_license is None or ollama_license is None:
        raise ExtractError(
            f"no LICENSE at {cases[-1].new_commit[:12]} upstream or at {cases[-1].bump.commit[:12]}"
        )
    text = (
        "Where these files come from\n"
        "===========================\n\n"
        "Each directory is one real llama.cpp bump of Ollama, extracted by tests/real/extract.py.\n"
        f"- <case>/before/, <case>/after/: Ollama's patches under {PATCH_DIR}/ at the bump's parent and at the\n"
        f"  bump or its last follow-up commit (commit ids in <case>/case.toml), from {OLLAMA_URL}, under\n"
        "  Ollama's license below.\n"
        "- <case>/upstream/old/, <case>/upstream/new/: files of llama.cpp at the old and new ref (commit ids\n"
        f"  in <case>/case.toml, blob ids in its [[file]] tables), gzip-compressed, from {UPSTREAM_URL},\n"
        "  under llama.cpp's license below.\n\n"
        "llama.cpp's LICENSE\n-------------------\n\n"
        + llama_license.decode()
        + "\nOllama's LICENSE\n----------------\n\n"
        + ollama_license.decode()
    )
    (out / "NOTICE").write_text(text)


def mirrors() -> tuple[Path, Path]:
    paths = []
    for name in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP"):
        value = os.environ.get(name, "")
        if not value:
            raise ExtractError(f"set {name} to the git directory of the mirror (see tests/real/extract.py)")
        if not Path(value).is_dir():
            raise ExtractError(f"{name}={value}: no such directory")
        paths.append(Path(value))
    return paths[0], paths[1]


def all_cases(ollama_dir: Path, llama_dir: Path) -> tuple[list[Case], list[str]]:
    ollama, llama = pygit2.Repository(str(ollama_dir)), pygit2.Repository(str(llama_dir))
    refs = RefResolver(llama_dir)
    bumps, skipped = find_bumps(ollama_dir)
    return [build_case(b, ollama, llama, refs) for b in bumps], skipped


def selected(cases: list[Case]) -> list[Case]:
    """Every case where a patch stopped applying or was changed, and the controls."""
    return [c for c in cases if c.broken or c.bump.case_id in CONTROLS]


def describe(case: Case) -> str:
    b = case.bump
    out = [f"{b.case_id}  {b.commit[:10]} {b.subject}  ({case.commits_between} upstream commits)"]
    for before, after in case.pairs:
        kind = change_kind(case.before.get(before or ""), case.after.get(after or ""))
        applies = "" if before is None else ("applies" if case.applies_new[before] else "DOES NOT APPLY")
        out.append(f"    {before or '-'} -> {after or '-'}: {kind}; {applies}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.real.extract", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--list", action="store_true", help="print every bump and its patches, write nothing")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the fixtures go (default {OUT})")
    args = parser.parse_args(argv)
    try:
        ollama_dir, llama_dir = mirrors()
        cases, skipped = all_cases(ollama_dir, llama_dir)
    except ExtractError as exc:
        print(f"extract: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for line in skipped:
            print(f"not a bump: {line}")
        for case in cases:
            print(describe(case))
        return 0
    chosen = selected(cases)
    if not chosen:
        print("extract: no bump in which a carried patch stopped applying or was changed", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        write_notice(args.out, pygit2.Repository(str(ollama_dir)), pygit2.Repository(str(llama_dir)), chosen)
    except ExtractError as exc:
        print(f"extract: {exc}", file=sys.stderr)
        return 2
    for case in chosen:
        print(f"wrote {write_case(case, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
