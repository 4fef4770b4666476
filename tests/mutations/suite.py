"""Run the real upstream review on each mutation of the table and say whether it caught it.

One bare repository holds everything: the upstream's old commit (tag OLD_TAG) and, per mutation, a child
commit with the edit applied (its own tag, b10490 on); Ollama's base commit (LLAMA_CPP_VERSION pins OLD_TAG)
and, per mutation, a child that pins the mutation's tag: the first push of a bump pull request. An extra
upstream commit with the old tree (CONTROL) checks that an unchanged upstream gives no finding at all.
`bot.engine.analyse` with the review on (what `python -m bot check` runs) compares each head with the base;
the cases run in a few worker processes.

A breaking mutation is caught when a high or medium finding names it (one of its `names`, in the title or
the text) and points at one of the Ollama lines it breaks (`consumers`, in the finding's local_refs), or when
a carried patch it cites gets a status that asks for a change (fuzzy, conflict, ...: the check run's patch
section, above the findings); anything else is a miss, described. A harmless one raises a false alarm with any finding above info.
"""

from __future__ import annotations

import dataclasses
import gzip
import multiprocessing
import os
import re
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.config import load_config
from bot.engine import analyse
from bot.model import NEEDS_CHANGE
from bot.repos.snapshot import GitSnapshot
from bot.repos.upstream import Upstream
from tests.mutations.relocate import Layout, relocate, relocate_mutations
from tests.mutations.table import Mutation, check_citations, load

DATA = Path(__file__).resolve().parent.parent / "data" / "mutations"
VERSION_FILE = "LLAMA_CPP_VERSION"
OLD_TAG = "b10488"
FIRST_NUMBER = 10489  # the control's tag; the mutations' follow in table order
CONTROL = "control-unmutated"
SIGNATURE = pygit2.Signature("llama-bot mutations", "mutations@invalid", 0, 0)
RAISING = ("high", "medium")


class SuiteError(Exception):
    """The excerpts or the table cannot be used: one line for the user."""


@dataclass(frozen=True)
class Case:
    """One review to run: Ollama's head commit pinning the new upstream tag."""

    id: str  # a mutation's id, or CONTROL
    tag: str
    ollama_head: str


@dataclass(frozen=True)
class Outcome:
    """What the review said about one case: its findings (plain dicts), or the crash that stopped it."""

    findings: tuple[dict, ...] = ()
    error: str | None = None
    patches: tuple[tuple[str, str], ...] = ()  # (patch path, status)


@dataclass(frozen=True)
class Verdict:
    mutation: Mutation
    outcome: Outcome
    caught: bool  # breaking: a raising finding names it and points at its consumer
    false_alarm: bool  # harmless: a finding above info, or a crash
    why: str  # one line: the finding that caught it, or what the review said instead


# ------------------------------------------------------------------------------------------ excerpts


class Excerpts:
    """The committed excerpts of one side (upstream or Ollama): every path of its tree, with the texts of
    the files kept (the others are empty files)."""

    def __init__(self, root: Path):
        self.root = root
        try:
            listing = gzip.decompress((root.parent / f"{root.name}-tree.txt.gz").read_bytes()).decode()
        except OSError as exc:
            raise SuiteError(
                f"{root}: no tree listing ({exc}); run python -m tests.mutations.extract"
            ) from None
        self.paths = [p for p in listing.split("\n") if p]

    def read(self, path: str) -> bytes | None:
        plain, packed = self.root / path, self.root / f"{path}.gz"
        if packed.is_file():
            return gzip.decompress(packed.read_bytes())
        if plain.is_file():
            return plain.read_bytes()
        return None


def _tree(repo: pygit2.Repository, files: Mapping[str, bytes]) -> pygit2.Oid:
    index = pygit2.Index()
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    return index.write_tree(repo)


def excerpt_files(root: Path, layout: Layout | None = None) -> dict[str, bytes]:
    """Every path of one side's tree with its kept text (the others empty), relocated by `layout`."""
    excerpts = Excerpts(root)
    files = {p: excerpts.read(p) or b"" for p in excerpts.paths}
    return files if layout is None else relocate(files, layout)


def excerpt_commits(
    repo: pygit2.Repository, data: Path = DATA, layout: Layout | None = None
) -> tuple[str, str]:
    """The upstream's old commit and Ollama's base commit (its tree relocated by `layout`), made in `repo`
    from the excerpts."""
    commits = []
    for side in ("upstream", "ollama"):
        tree = _tree(repo, excerpt_files(data / side, layout if side == "ollama" else None))
        commits.append(str(repo.create_commit(None, SIGNATURE, SIGNATURE, f"{side} excerpt", tree, [])))
    return commits[0], commits[1]


# ------------------------------------------------------------------------------------------ repository


def _with_files(repo: pygit2.Repository, commit: str, files: Mapping[str, bytes], message: str) -> str:
    """A child of `commit` whose tree is its tree with `files` replaced."""
    parent = repo[commit].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    for path, data in files.items():
        mode = pygit2.enums.FileMode(index[path].mode) if path in index else pygit2.enums.FileMode.BLOB
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
    tree = index.write_tree(repo)
    return str(repo.create_commit(None, SIGNATURE, SIGNATURE, message, tree, [parent.id]))


def reader(repo: pygit2.Repository, commit: str) -> Callable[[str], str]:
    """The text of a file at `commit` (for the edits)."""
    tree = repo[commit].peel(pygit2.Commit).tree

    def read(path: str) -> str:
        try:
            return repo[tree[path].id].peel(pygit2.Blob).data.decode("utf-8")
        except KeyError:
            raise SuiteError(f"{path} is not in the upstream tree at {commit[:12]}") from None

    return read


def prepare(
    repo: pygit2.Repository, upstream_old: str, ollama_base: str, mutations: Iterable[Mutation]
) -> list[Case]:
    """The control and one case per mutation, their commits and tags made in `repo`."""
    repo.references.create(f"refs/tags/{OLD_TAG}", pygit2.Oid(hex=upstream_old), force=True)
    read = reader(repo, upstream_old)
    cases = []
    changes: list[tuple[str, dict[str, bytes], str]] = [(CONTROL, {}, "the old tree, unchanged")]
    changes += [(m.id, {p: t.encode() for p, t in m.apply(read).items()}, m.what) for m in mutations]
    for number, (ident, files, what) in enumerate(changes, start=FIRST_NUMBER):
        tag = f"b{number}"
        new = _with_files(repo, upstream_old, files, f"{ident}: {what}")
        repo.references.create(f"refs/tags/{tag}", pygit2.Oid(hex=new), force=True)
        head = _with_files(repo, ollama_base, {VERSION_FILE: f"{tag}\n".encode()}, f"llama.cpp {tag}")
        cases.append(Case(ident, tag, head))
    return cases


# ------------------------------------------------------------------------------------------ review


def finding_json(f) -> dict:
    return {
        "area": f.area,
        "severity": f.severity,
        "title": f.title,
        "detail": f.detail,
        "upstream_path": f.upstream_path,
        "upstream_line": f.upstream_line,
        "local_refs": [[r.path, r.line] for r in f.local_refs],
    }


def review(repo: pygit2.Repository, ollama_base: str, case: Case) -> Outcome:
    """The review of Ollama's base -> the case's head; a crash is an outcome too (named, not raised)."""
    base, head = GitSnapshot(repo, ollama_base), GitSnapshot(repo, case.ollama_head)
    try:
        config = load_config(base)
        config = dataclasses.replace(
            config, pins=tuple(p for p in config.pins if p.version_file == VERSION_FILE)
        )
        errors: dict[str, str] = {}
        report = analyse(
            config,
            base,
            head,
            lambda pin, _refs: Upstream(repo, pin.upstream, "the mutation repository"),
            None,
            review=True,
            errors=errors,
        )
    except Exception as exc:  # noqa: BLE001 (a crash is what this case found: named, as a miss)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return Outcome(error=f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})")
    if errors:
        return Outcome(error="; ".join(errors.values()))
    pins = report.pins
    return Outcome(
        findings=tuple(finding_json(f) for pin in pins for f in pin.findings),
        patches=tuple((p.path, p.status) for pin in pins for p in pin.patches),
    )


_WORKER: dict[str, object] = {}


def _review_in_worker(repo_path: str, ollama_base: str, case: Case) -> tuple[str, Outcome]:
    """One case in a worker process, which keeps its repository open between cases."""
    if _WORKER.get("path") != repo_path:
        _WORKER.update(path=repo_path, repo=pygit2.Repository(repo_path))
    return case.id, review(_WORKER["repo"], ollama_base, case)  # type: ignore[arg-type]


def review_all(repo_path: Path, ollama_base: str, cases: list[Case], workers: int) -> dict[str, Outcome]:
    """Every case's outcome, by id, reviewed in `workers` processes (in this one when workers is 1)."""
    if workers <= 1:
        repo = pygit2.Repository(str(repo_path))
        return {c.id: review(repo, ollama_base, c) for c in cases}
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_review_in_worker, str(repo_path), ollama_base, c) for c in cases]
        return dict(f.result() for f in futures)


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


# ------------------------------------------------------------------------------------------ verdicts


def _named(name: str, text: str) -> bool:
    """Whether `text` names `name`: case-insensitive, and not as part of a longer word."""
    before = r"(?<![\w-])" if re.match(r"[\w-]", name) else ""
    after = r"(?![\w-])" if re.search(r"[\w-]$", name) else ""
    return re.search(before + re.escape(name) + after, text, re.IGNORECASE) is not None


def _points_at(finding: dict, mutation: Mutation) -> bool:
    refs = {(path, line) for path, line in finding["local_refs"]}
    return any((c.path, c.line) in refs for c in mutation.consumers)


def _names_it(finding: dict, mutation: Mutation) -> bool:
    text = f"{finding['title']}\n{finding['detail']}"
    return any(_named(n, text) for n in mutation.names)


def _titles(findings: Iterable[dict]) -> str:
    return "; ".join(f"{f['severity']} '{f['title']}'" for f in findings)


def verdict(mutation: Mutation, outcome: Outcome) -> Verdict:
    """Caught or missed (breaking), quiet or a false alarm (harmless), with one line saying why."""
    if outcome.error is not None:
        return Verdict(
            mutation, outcome, False, not mutation.breaking, f"the review crashed: {outcome.error}"
        )
    raising = [f for f in outcome.findings if f["severity"] in RAISING]
    flagged = _flagged_patches(mutation, outcome)
    if mutation.breaking and flagged:
        return Verdict(mutation, outcome, True, False, f"caught: the patch section says {flagged}")
    if not mutation.breaking:
        rebuilt = [f"{path} {status}" for path, status in outcome.patches if status in NEEDS_CHANGE]
        if rebuilt:
            return Verdict(
                mutation, outcome, False, True, f"false alarm: the patch section says {rebuilt[0]}"
            )
        why = f"false alarm: {_titles(raising)}" if raising else "quiet (nothing above info)"
        return Verdict(mutation, outcome, False, bool(raising), why)
    return Verdict(mutation, outcome, *_breaking(mutation, outcome.findings, raising))


def _flagged_patches(mutation: Mutation, outcome: Outcome) -> str:
    """The carried patches the mutation cites whose status asks for a change (a patch that no longer applies
    as it is: the check run's patch section says so before any finding), as one phrase; "" when none."""
    cited = {c.path for c in mutation.consumers}
    return ", ".join(
        f"{path} {status}" for path, status in outcome.patches if path in cited and status in NEEDS_CHANGE
    )


def _breaking(mutation: Mutation, findings: tuple[dict, ...], raising: list[dict]) -> tuple[bool, bool, str]:
    for f in raising:
        if _names_it(f, mutation) and _points_at(f, mutation):
            return True, False, f"caught: {f['severity']} '{f['title']}'"
    named = [f for f in raising if _names_it(f, mutation)]
    if named:
        return False, False, f"named by {_titles(named[:2])}, but it points at {_refs(named)}"
    if raising:
        return False, False, f"a finding above info that does not name it: {_titles(raising[:2])}"
    if findings:
        return False, False, f"information only: {_titles(findings[:2])}"
    return False, False, "no finding at all"


def _refs(findings: list[dict], shown: int = 6) -> str:
    """The Ollama lines the findings point at, the first few."""
    refs = [f"{p}:{n}" for p, n in sorted({(p, n) for f in findings for p, n in f["local_refs"]})]
    if not refs:
        return "no Ollama line"
    more = f" (+{len(refs) - shown} more)" if len(refs) > shown else ""
    return ", ".join(refs[:shown]) + more


# ------------------------------------------------------------------------------------------ the suite


@dataclass(frozen=True)
class SuiteResult:
    verdicts: dict[str, Verdict]  # by mutation id, in table order
    control: Outcome  # the unchanged upstream's review
    cases: dict[str, Case]  # by id, the control's too
    ollama_base: str
    repo: Path  # the repository the cases are in (gone after run_suite unless it was given `where`)
    seconds: float  # wall time of the reviews


def run_cases(
    repo: pygit2.Repository,
    upstream_old: str,
    ollama_base: str,
    mutations: list[Mutation],
    workers: int,
) -> SuiteResult:
    """The verdict of every mutation, reviewed in `repo` from these two commits."""
    cases = prepare(repo, upstream_old, ollama_base, mutations)
    started = time.perf_counter()
    outcomes = review_all(Path(repo.path), ollama_base, cases, workers)
    return SuiteResult(
        {m.id: verdict(m, outcomes[m.id]) for m in mutations},
        outcomes[CONTROL],
        {c.id: c for c in cases},
        ollama_base,
        Path(repo.path),
        time.perf_counter() - started,
    )


def run_suite(
    data: Path = DATA,
    mutations: list[Mutation] | None = None,
    workers: int | None = None,
    where: Path | None = None,
    layout: Layout | None = None,
) -> SuiteResult:
    """The suite on the committed excerpts, Ollama's tree relocated by `layout` and the mutations' cited
    lines with it, in a repository made at `where` (kept), else in a scratch one."""
    mutations = load() if mutations is None else mutations
    if layout is not None:
        mutations = relocate_mutations(mutations, layout)
    ollama = excerpt_files(data / "ollama", layout)
    cited = {c.path for m in mutations for c in m.consumers}
    check_citations(mutations, {p: ollama.get(p, b"").decode() for p in cited})
    with tempfile.TemporaryDirectory(prefix="llama-bot-mutations-") as tmp:
        repo = pygit2.init_repository(str(where or Path(tmp) / "mutations.git"), bare=True)
        upstream_old, ollama_base = excerpt_commits(repo, data, layout)
        return run_cases(repo, upstream_old, ollama_base, mutations, workers or default_workers())
