"""Extract the files the mutation suite needs from the mirrors into tests/data/mutations/.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP name git directories of
ollama/ollama and of llama.cpp (see tests/real/extract.py). It runs the whole suite on the real trees (llama.cpp
at b10488, Ollama at the commit that pins it) in a scratch repository that borrows the mirrors' objects,
records every file the review reads on either side (tests/real/review_excerpts.ReadLog), and writes:

    upstream/<path>, ollama/<path>      the files read, edited or cited, as they are (gzip-compressed: <path>.gz,
                                        above 4 kB)
    upstream-tree.txt.gz, ollama-tree.txt.gz   every file path of each tree (the others are empty files)
    provenance.json                     the repositories, commits and each kept file's blob id
    NOTICE                              where the files come from, and both MIT licences

Then it runs the suite again on what it wrote and compares, mutation by mutation, with the run on the real
trees: any difference (a file the review needs is missing) is an error.

    python -m tests.mutations.extract
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pygit2

from tests.mutations import suite
from tests.mutations.table import TableError, check_citations, load
from tests.real.extract import UPSTREAM_URL, ExtractError, RefResolver, mirrors, read_blob
from tests.real.review_excerpts import ReadLog

OLLAMA_URL = "https://github.com/ollama/ollama"
OLLAMA_COMMIT = "cd37044093f1023091975ed9f342dc0ae6283472"  # "llama.cpp update (#17851)": pins b10488
GZIP_ABOVE = 4_096


def _blob_paths(tree: pygit2.Tree, base: str = "") -> list[str]:
    found = []
    for entry in tree:
        path = base + (entry.name or "")
        if isinstance(entry, pygit2.Tree):
            found += _blob_paths(entry, path + "/")
        elif entry.type == pygit2.GIT_OBJECT_BLOB:
            found.append(path)
    return found


def _scratch(where: Path, *mirrors: Path) -> pygit2.Repository:
    """A bare repository at `where` that reads the mirrors' objects (it never writes to them)."""
    pygit2.init_repository(str(where), bare=True)
    (where / "objects" / "info" / "alternates").write_text(
        "".join(f"{(m / 'objects').resolve()}\n" for m in mirrors)
    )
    return pygit2.Repository(str(where))


def _read_on_real_trees(
    repo: pygit2.Repository, upstream: str, ollama: str, mutations
) -> tuple[set[str], set[str], suite.SuiteResult]:
    """The upstream and Ollama paths the review reads over the whole suite, and the suite's result."""
    log = ReadLog()
    cases = suite.prepare(repo, upstream, ollama, mutations)
    with log.installed():
        outcomes = suite.review_all(Path(repo.path), ollama, cases, workers=1)
    upstream_trees = {str(repo[upstream].peel(pygit2.Commit).tree.id)} | {
        str(repo.revparse_single(f"refs/tags/{c.tag}").peel(pygit2.Commit).tree.id) for c in cases
    }
    ollama_trees = {str(repo[ollama].peel(pygit2.Commit).tree.id)} | {
        str(repo[c.ollama_head].peel(pygit2.Commit).tree.id) for c in cases
    }
    read_upstream = set().union(*(log.by_tree.get(t, set()) for t in upstream_trees)) | log.needed
    read_ollama = set().union(*(log.by_tree.get(t, set()) for t in ollama_trees))
    result = suite.SuiteResult(
        {m.id: suite.verdict(m, outcomes[m.id]) for m in mutations},
        outcomes[suite.CONTROL],
        {c.id: c for c in cases},
        ollama,
        Path(repo.path),
        0.0,
    )
    return read_upstream, read_ollama, result


def _write_side(out: Path, side: str, repo: pygit2.Repository, commit: str, kept: set[str]) -> dict[str, str]:
    """Writes one side's kept files and tree listing; returns path -> blob id."""
    tree = repo[commit].peel(pygit2.Commit).tree
    paths = _blob_paths(tree)
    blobs = {}
    for path in sorted(kept & set(paths)):
        blob_id = tree[path].id
        if not repo.odb.exists(blob_id):
            raise ExtractError(f"{path} at {commit[:12]}: its blob is missing from the partial clone")
        data = repo[blob_id].peel(pygit2.Blob).data
        target = out / side / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if len(data) > GZIP_ABOVE:
            target.with_name(target.name + ".gz").write_bytes(gzip.compress(data, 9, mtime=0))
        else:
            target.write_bytes(data)
        blobs[path] = str(blob_id)
    listing = "\n".join(paths).encode()
    (out / f"{side}-tree.txt.gz").write_bytes(gzip.compress(listing, 9, mtime=0))
    return blobs


def _notice(repo: pygit2.Repository, upstream: str) -> str:
    """Where the files come from, and both licences (read through `repo`, which borrows both mirrors)."""
    llama_license = read_blob(repo, upstream, "LICENSE")
    ollama_license = read_blob(repo, OLLAMA_COMMIT, "LICENSE")
    if llama_license is None or ollama_license is None:
        raise ExtractError(f"no LICENSE at {upstream[:12]} upstream or at {OLLAMA_COMMIT[:12]} in Ollama")
    return (
        "Where these files come from\n"
        "===========================\n\n"
        "Extracted by tests/mutations/extract.py; provenance.json names each file's blob id.\n"
        f"- upstream/: files of llama.cpp ({UPSTREAM_URL}) at {suite.OLD_TAG},\n"
        f"  commit {upstream}, some gzip-compressed, under llama.cpp's license below.\n"
        f"- ollama/: files of Ollama ({OLLAMA_URL}) at commit\n"
        f"  {OLLAMA_COMMIT}, some gzip-compressed, under Ollama's license below.\n"
        "- upstream-tree.txt.gz, ollama-tree.txt.gz: the file paths of those two trees.\n\n"
        "llama.cpp's LICENSE\n-------------------\n\n"
        + llama_license.decode()
        + "\nOllama's LICENSE\n----------------\n\n"
        + ollama_license.decode()
    )


def _comparable(result: suite.SuiteResult) -> dict[str, object]:
    """What must not differ between the real trees and the excerpts: every finding but its text (which may
    name commits), the patch statuses and the verdicts."""

    def findings(outcome: suite.Outcome) -> list:
        keys = ("area", "severity", "title", "upstream_path", "upstream_line", "local_refs")
        return sorted(json.dumps([f[k] for k in keys]) for f in outcome.findings)

    found: dict[str, object] = {suite.CONTROL: (findings(result.control), result.control.error)}
    for ident, v in result.verdicts.items():
        found[ident] = (findings(v.outcome), v.outcome.error, v.outcome.patches, v.caught, v.false_alarm)
    return found


def _mirrors_at_the_pin(mutations) -> tuple[Path, Path, str]:
    """The mirrors and b10488's commit, once Ollama's commit is seen to pin it and to hold what the table
    cites."""
    ollama_dir, llama_dir = mirrors()
    upstream = RefResolver(llama_dir).resolve(suite.OLD_TAG)
    ollama = pygit2.Repository(str(ollama_dir))
    pinned = (read_blob(ollama, OLLAMA_COMMIT, suite.VERSION_FILE) or b"").decode().strip()
    if pinned != suite.OLD_TAG:
        raise ExtractError(f"Ollama {OLLAMA_COMMIT[:12]} pins {pinned!r}, not {suite.OLD_TAG}")
    cited = {c.path for m in mutations for c in m.consumers}
    check_citations(mutations, {p: (read_blob(ollama, OLLAMA_COMMIT, p) or b"").decode() for p in cited})
    return ollama_dir, llama_dir, upstream


def _write(out: Path, repo: pygit2.Repository, upstream: str, kept: tuple[set[str], set[str]]) -> dict:
    """Both sides' files, the provenance and the notice under `out`; the provenance."""
    for side in ("upstream", "ollama"):  # SOURCE.md beside them is written by hand
        shutil.rmtree(out / side, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    provenance = {
        "upstream": {
            "repository": UPSTREAM_URL,
            "ref": suite.OLD_TAG,
            "commit": upstream,
            "files": _write_side(out, "upstream", repo, upstream, kept[0]),
        },
        "ollama": {
            "repository": OLLAMA_URL,
            "commit": OLLAMA_COMMIT,
            "files": _write_side(out, "ollama", repo, OLLAMA_COMMIT, kept[1]),
        },
    }
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    (out / "NOTICE").write_text(_notice(repo, upstream))
    return provenance


def _differences(real: suite.SuiteResult, excerpted: suite.SuiteResult) -> list[str]:
    """One line per case the excerpts review differently from the real trees."""
    want, got = _comparable(real), _comparable(excerpted)
    return [f"{i}: real trees {want[i]}, excerpts {got.get(i)}" for i in want if want[i] != got.get(i)]


def extract(out: Path = suite.DATA) -> int:
    mutations = load()
    ollama_dir, llama_dir, upstream = _mirrors_at_the_pin(mutations)
    with tempfile.TemporaryDirectory(prefix="mutations-extract-") as tmp:
        repo = _scratch(Path(tmp) / "real.git", llama_dir, ollama_dir)
        read_upstream, read_ollama, real = _read_on_real_trees(repo, upstream, OLLAMA_COMMIT, mutations)
        edited = {e.path for m in mutations for e in m.edits}
        cited = {c.path for m in mutations for c in m.consumers}
        provenance = _write(out, repo, upstream, (read_upstream | edited, read_ollama | cited))
    differ = _differences(real, suite.run_suite(out, mutations, workers=1))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    counts = {side: len(provenance[side]["files"]) for side in ("upstream", "ollama")}
    print(
        f"wrote {out}: {counts['upstream']} upstream and {counts['ollama']} Ollama files, {size / 1e6:.2f} MB"
    )
    print("".join(f"  {line}\n" for line in differ), end="")
    if differ:
        raise ExtractError(f"the excerpts review {len(differ)} cases differently from the real trees")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutations.extract", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--out", type=Path, default=suite.DATA, help=f"where the excerpts go (default {suite.DATA})"
    )
    args = parser.parse_args(argv)
    try:
        return extract(args.out)
    except (ExtractError, TableError, suite.SuiteError) as exc:
        print(f"extract: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
