"""Run the runtime contract probe on real llama.cpp bumps of Ollama and write what it saw as test data.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP name git directories of
ollama/ollama and of llama.cpp (a fork whose `master` tracks upstream will do: `bNNNN` is the commit of its
first-parent line whose `rev-list --count` is NNNN). For each Ollama bump commit named, it does what
`python -m bot probe --base <bump>^ --head <bump>` does: llama-server (and llama-quantize) built at both
refs with each side's carried patches as Ollama's CMake builds its CPU preset, the tiny model, the requests
and program runs of the head's inventory, and the comparison; the upstream refs resolve in a scratch repository borrowing the mirror's
objects (tests/real/review_bumps.py). It writes tests/data/probe-real/<old>-<new>.json: the plan, both
observations, the findings and the wall times, which tests/test_probe.py compares again without the
mirrors. One build directory serves every bump (`--work-dir`): the first build is cold, the next rebuild
what changed.

    python -m tests.real.probe_bumps c82ebbd5b 4f066a6fb --work-dir /tmp/probe-work

llama.cpp and Ollama are MIT licensed (tests/data/real-review/NOTICE); the files hold field names, flags,
Ollama's patterns and file:line references, and llama-server's own refusal messages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pygit2

from bot.cli.probe import _plan
from bot.model import LocalRef
from bot.probe import build, compare, session
from bot.probe.plan import Launch, Plan, Probe, ProgramRun
from bot.repos.snapshot import GitSnapshot
from bot.review.consumers.contracts.model import OutputPattern, WireField
from tests.real.extract import RefResolver
from tests.real.review_bumps import scratch_upstream

OUT = Path(__file__).resolve().parent.parent / "data" / "probe-real"
TINYMODEL = Path(__file__).resolve().parent.parent.parent / "bot" / "probe" / "tinymodel.py"


def bump_only(
    ollama: pygit2.Repository, head: pygit2.Commit, where: Path
) -> tuple[pygit2.Repository, pygit2.Commit]:
    """The pull request's first push: the bump's parent with only LLAMA_CPP_VERSION taken from the bump, as a
    commit of a scratch repository borrowing the mirror's objects (the mirror is never written to)."""
    scratch = pygit2.init_repository(str(where), bare=True)
    (where / "objects" / "info" / "alternates").write_text(
        str(Path(ollama.path).resolve() / "objects") + "\n"
    )
    scratch = pygit2.Repository(str(where))
    parent = head.parents[0]
    tree = scratch.TreeBuilder(scratch[parent.tree_id].peel(pygit2.Tree))
    tree.insert("LLAMA_CPP_VERSION", head.tree["LLAMA_CPP_VERSION"].id, pygit2.enums.FileMode.BLOB)
    signature = pygit2.Signature("llama-bot", "llama-bot@example.invalid", 0, 0)
    oid = scratch.create_commit(None, signature, signature, "bump only", tree.write(), [parent.id])
    return scratch, scratch[oid].peel(pygit2.Commit)


def probe_bump(
    ollama: pygit2.Repository, mirror: Path, bump: str, work: Path, first_push: bool = False
) -> dict:
    head = ollama.revparse_single(bump).peel(pygit2.Commit)
    if first_push:
        shutil.rmtree(work / "ollama-first-push.git", ignore_errors=True)
        ollama, head = bump_only(ollama, head, work / "ollama-first-push.git")
    base = head.parents[0]
    refs = [GitSnapshot(ollama, c).read("LLAMA_CPP_VERSION").decode().strip() for c in (base, head)]
    resolver = RefResolver(mirror)
    upstream = scratch_upstream(mirror, {r: resolver.resolve(r) for r in refs}, work / "upstream.git")
    plan = _plan(GitSnapshot(ollama, head))
    seen, times, failed = [], [], []
    for commit, ref in zip((base, head), refs, strict=True):
        started = time.monotonic()
        build.write_tree(ollama, commit, work / "ollama")
        build.write_tree(upstream, upstream.revparse_single(ref).peel(pygit2.Commit), work / "src")
        project = build.find_project(work / "ollama", "LLAMA_CPP_VERSION")
        try:
            binaries = build.build(
                project, work / "src", work / "build", 3600, os.cpu_count() or 2, plan.programs[1:]
            )
        except build.BuildFailed as exc:
            if commit == base:
                raise
            failed.append(compare.unbuilt(ref, str(exc)))
            break
        built = time.monotonic() - started
        model = work / f"tiny-{ref}.gguf"
        env = {**os.environ, "PYTHONPATH": str(work / "src" / "gguf-py")}
        vocab = work / "src" / "models" / "ggml-vocab-llama-spm.gguf"
        subprocess.run([sys.executable, str(TINYMODEL), str(model), str(vocab)], check=True, env=env)
        started = time.monotonic()
        seen.append(session.run(binaries[build.TARGET], model, plan, ref, work))
        seen[-1].programs = session.run_programs(binaries, model, plan, work)
        times.append(
            {"ref": ref, "build_seconds": round(built), "speak_seconds": round(time.monotonic() - started, 1)}
        )
    findings = failed or compare.compare(seen[0], seen[1], plan)
    return {
        "ollama_bump": str(head.id) if not first_push else f"{bump} (first push: only LLAMA_CPP_VERSION)",
        "old_ref": refs[0],
        "new_ref": refs[1],
        "plan": asdict(plan),
        "observations": [asdict(o) for o in seen],
        "findings": [f.to_json() for f in findings],
        "times": times,
    }


def kept_plan(data: dict) -> Plan:
    """A plan as `probe_bump` wrote it."""

    def ref(r: dict | None) -> LocalRef | None:
        return LocalRef(**r) if r else None

    probes = tuple(Probe(**{**p, "ref": ref(p["ref"])}) for p in data["probes"])
    patterns = tuple(
        OutputPattern(
            p["kind"], p["value"], tuple(p["sources"]), ref(p["ref"]), tuple(ref(u) for u in p["used_at"]), ()
        )
        for p in data["patterns"]
    )
    decoded = tuple(
        WireField(
            **{**f, "values": tuple(f["values"]), "ref": ref(f["ref"]), "forwards": tuple(f["forwards"])}
        )
        for f in data["decoded"]
    )
    runs = tuple(
        ProgramRun(**{**r, "args": tuple(r["args"]), "ref": ref(r["ref"])}) for r in data.get("runs", ())
    )
    launches = tuple(
        Launch(x["name"], tuple(x["args"]), tuple(tuple(e) for e in x["env"]), ref(x["ref"]))
        for x in data.get("launches", ())
    )
    skipped = tuple(data.get("skipped", ()))
    return Plan(
        tuple(data["args"]),
        data["env"],
        tuple(data["listing"]),
        probes,
        patterns,
        decoded,
        skipped,
        runs,
        launches,
    )


def written(data: dict) -> str:
    """A runner's record as the file holds it: each distinct answer shape once (`answer_shapes`), every answer
    its index there (the same shapes repeat across requests and starts); a started server's output is not
    kept."""
    shapes: dict[str, int] = {}

    def indexed(answers: dict) -> dict:
        return {n: shapes.setdefault(json.dumps(a, sort_keys=True), len(shapes)) for n, a in answers.items()}

    data = expanded(data)
    for o in data["observations"]:
        o["answers"] = indexed(o["answers"])
        for start in o.get("launches", {}).values():
            start["answers"] = indexed(start["answers"])
            start.pop("streams", None)
    data["answer_shapes"] = [json.loads(key) for key in shapes]
    return json.dumps(data, indent=1, default=str) + "\n"


def expanded(data: dict) -> dict:
    """A record read back with each answer's shape in place of its index (a record written before the index
    was kept as it is)."""
    data = json.loads(json.dumps(data, default=str))
    shapes = data.pop("answer_shapes", [])

    def shaped(answers: dict) -> dict:
        return {n: shapes[a] if isinstance(a, int) else a for n, a in answers.items()}

    for o in data["observations"]:
        o["answers"] = shaped(o["answers"])
        for start in o.get("launches", {}).values():
            start["answers"] = shaped(start["answers"])
    return data


def observation(data: dict) -> session.Observation:
    """An observation as `probe_bump` wrote it."""
    answers = {name: session.Answer(**a) for name, a in data["answers"].items()}
    programs = {name: session.ProgramAnswer(**a) for name, a in data.get("programs", {}).items()}
    launches = {
        name: session.Started(**{**a, "answers": {n: session.Answer(**x) for n, x in a["answers"].items()}})
        for name, a in data.get("launches", {}).items()
    }
    return session.Observation(**{**data, "answers": answers, "programs": programs, "launches": launches})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bumps", nargs="*", help="Ollama commits that moved LLAMA_CPP_VERSION")
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument(
        "--first-push",
        action="store_true",
        help="probe each pull request's first push (the parent with only LLAMA_CPP_VERSION bumped): "
        "<old>-<new>.first-push.json",
    )
    parser.add_argument(
        "--recompare",
        action="store_true",
        help="compare the kept observations again with today's code; build nothing",
    )
    args = parser.parse_args()
    if args.recompare:
        for path in sorted(OUT.glob("*.json")):
            data = expanded(json.loads(path.read_text()))
            if len(data["observations"]) < 2:
                path.write_text(written(data))
                print(f"{path.name}: {len(data['findings'])} findings (the new ref did not build: kept)")
                continue
            findings = compare.compare(
                *(observation(o) for o in data["observations"]), kept_plan(data["plan"])
            )
            data["findings"] = [f.to_json() for f in findings]
            path.write_text(written(data))
            print(f"{path.name}: {len(findings)} findings")
        return
    if not args.bumps or args.work_dir is None:
        parser.error("name the bumps and --work-dir, or give --recompare")
    if not (os.environ.get("LLAMA_BOT_REAL_OLLAMA") and os.environ.get("LLAMA_BOT_REAL_LLAMA_CPP")):
        sys.exit("set LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP to the mirrors' git directories")
    ollama = pygit2.Repository(os.environ["LLAMA_BOT_REAL_OLLAMA"])
    OUT.mkdir(parents=True, exist_ok=True)
    for bump in args.bumps:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        mirror = Path(os.environ["LLAMA_BOT_REAL_LLAMA_CPP"])
        data = probe_bump(ollama, mirror, bump, args.work_dir, args.first_push)
        path = OUT / f"{data['old_ref']}-{data['new_ref']}{'.first-push' if args.first_push else ''}.json"
        path.write_text(written(data))
        print(f"wrote {path}: {len(data['findings'])} findings, {data['times']}")


if __name__ == "__main__":
    main()
