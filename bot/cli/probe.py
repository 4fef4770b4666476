"""`probe`: build llama-server at the old and the new ref of each llama.cpp pin a change moves, as Ollama's
CMake builds it with its carried patches, speak to each as Ollama does (its contract inventory at the head),
and say what differs on something Ollama reads. It builds and runs upstream code and the change's CMake and
patches: it is for a maintainer's own machine or a CI runner, never the bot's service."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import asdict
from pathlib import Path

from bot.cli.change import Change, open_change
from bot.cli.console import UsageError, emit
from bot.cli.upstreams import cli_data_dir, upstream_opener
from bot.config import Pin, read_version
from bot.model import AnalysisError, Finding
from bot.probe import build, compare, plan, session, tinymodel
from bot.repos.snapshot import GitSnapshot


def cmd_probe(args: argparse.Namespace) -> int:
    change = open_change(args)
    base, head = GitSnapshot(change.repo, change.base), GitSnapshot(change.repo, change.head)
    moved = [
        p
        for p in change.config.pins
        if p.review == "llama.cpp" and base.read(p.version_file) != head.read(p.version_file)
    ]
    if not moved:
        print(f"llama-bot: {change.compared} moves no llama.cpp pin: nothing to probe", file=sys.stderr)
        return 0
    probe_plan = _plan(head)
    results = [_probe_pin(args, change, pin, base, head, probe_plan) for pin in moved]
    findings = [f for r in results for f in r["findings"]]
    if args.format == "json":
        emit(json.dumps({"pins": results, "skipped": list(probe_plan.skipped)}, indent=2, default=str))
    else:
        emit(_text(results, probe_plan))
    return 1 if any(f["severity"] in ("high", "medium") for f in findings) else 0


def _plan(head: GitSnapshot) -> plan.Plan:
    """The head's contract inventory as a probe plan."""
    from bot.review.consumers import SnapshotTexts
    from bot.review.consumers.contracts import contract_inventory
    from bot.review.requests import Documentation

    texts = SnapshotTexts(head)
    docs = Documentation(texts)
    return plan.make_plan(
        contract_inventory(texts), lambda options: [(d.value, d.says) for d in docs.values(options)]
    )


def _probe_pin(
    args: argparse.Namespace,
    change: Change,
    pin: Pin,
    base: GitSnapshot,
    head: GitSnapshot,
    probe_plan: plan.Plan,
) -> dict:
    """Both refs of one pin built, run and compared."""
    try:
        old, new = read_version(base, pin.version_file), read_version(head, pin.version_file)
        if old is None or new is None:
            raise UsageError(
                f"{pin.version_file} names no ref at the {'base' if old is None else 'head'}: nothing to build"
            )
        refs = (old, new)
        upstream = upstream_opener(args.upstream_dir, change.config, args.quiet)(pin, list(refs))
        commits = [upstream.commit(ref, f"{pin.version_file}") for ref in refs]
    except AnalysisError as exc:
        raise UsageError(str(exc)) from None
    work = Path(args.work_dir) if args.work_dir else cli_data_dir() / "probe" / pin.name
    seen: list[session.Observation] = []
    models: list[dict] = []
    for side, ollama_commit, ref, commit in zip(
        ("base", "head"), (change.base, change.head), refs, commits, strict=True
    ):
        _say(
            args,
            f"{pin.name}: building llama-server at {ref} with the carried patches of {side} (first build: minutes)",
        )
        build.write_tree(change.repo, ollama_commit, work / "ollama")
        upstream.fetch_tree(commit)  # a blobless clone: the files to build
        missing = build.write_tree(upstream.repo, commit, work / "src")
        try:
            project = build.find_project(work / "ollama", pin.version_file)
            binaries = build.build(
                project, work / "src", work / "build", args.build_timeout, args.jobs, probe_plan.programs[1:]
            )
        except build.BuildFailed as exc:
            if side == "base":
                raise UsageError(
                    f"{pin.name} at {ref} (the base) did not build, so nothing can be compared: {exc}"
                ) from None
            return _result(pin, refs, seen, [compare.unbuilt(ref, str(exc))], models)
        model, vocab = _model(work, ref, missing)
        models.append(_model_said(ref, vocab))
        _say(
            args,
            f"{pin.name}: speaking to llama-server at {ref} as Ollama does ({len(probe_plan.probes)} requests)",
        )
        seen.append(session.run(binaries[build.TARGET], model, probe_plan, ref, work))
        seen[-1].programs = session.run_programs(binaries, model, probe_plan, work)
    return _result(pin, refs, seen, compare.compare(seen[0], seen[1], probe_plan), models)


def _model_said(ref: str, vocab: str) -> dict:
    """What the report says of the model a ref was probed with."""
    return {
        "ref": ref,
        "architecture": tinymodel.ARCHITECTURE,
        "layers": tinymodel.LAYERS,
        "embedding": tinymodel.EMBED,
        "heads": tinymodel.HEADS,
        "seed": tinymodel.SEED,
        "vocab": vocab,
    }


def _model(work: Path, ref: str, missing: list[str]) -> tuple[Path, str]:
    """The tiny model, written by the tree's own gguf-py with its first vocab file at hand."""
    rules = tomllib.loads(plan.RULES.read_text())
    vocab = next(
        (work / "src" / v for v in rules["vocab"] if (work / "src" / v).is_file() and v not in missing), None
    )
    if vocab is None:
        raise UsageError(
            f"the upstream tree at {ref} holds none of the vocab files {', '.join(rules['vocab'])}"
        )
    out = work / f"tiny-{ref[:40]}.gguf"
    script = Path(__file__).resolve().parent.parent / "probe" / "tinymodel.py"
    env = {**os.environ, "PYTHONPATH": str(work / "src" / "gguf-py")}
    done = subprocess.run(
        [sys.executable, str(script), str(out), str(vocab)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        hint = " (install the probe's extra: pip install 'llama-bot[probe]')" if "numpy" in last else ""
        raise UsageError(f"the tiny model could not be written with the gguf-py of {ref}: {last}{hint}")
    return out, str(vocab.relative_to(work / "src"))


def _result(
    pin: Pin,
    refs: tuple[str, str],
    seen: list[session.Observation],
    findings: list[Finding],
    models: list[dict],
) -> dict:
    return {
        "name": pin.name,
        "old_ref": refs[0],
        "new_ref": refs[1],
        "models": models,
        "observations": [asdict(o) for o in seen],
        "findings": [f.to_json() for f in findings],
    }


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        print(f"llama-bot: {text}", file=sys.stderr)


def _text(results: list[dict], probe_plan: plan.Plan) -> str:
    lines = []
    for r in results:
        lines.append(
            f"{r['name']}: {r['old_ref']} -> {r['new_ref']}, {len(probe_plan.probes)} requests as Ollama sends them"
        )
        for f in r["findings"] or [
            {"severity": "", "title": "no difference on anything Ollama reads", "detail": "", "check": ""}
        ]:
            lines.append(f"- {f['severity']} {f['title']}" + (f" [{f['check']}]" if f["check"] else ""))
            lines += [f"    {line}" for line in f["detail"].splitlines() if line]
    if probe_plan.skipped:
        lines.append("not probed: " + "; ".join(probe_plan.skipped))
    return "\n".join(lines)
