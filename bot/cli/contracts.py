"""`contracts`: what the review protects, the contracts Ollama's code at one revision relies on, grouped, each
with its file and line. It reads the Ollama tree only (no upstream, no network), in this process."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable

from bot.cli.change import commit_at, open_repo
from bot.cli.console import UsageError, emit
from bot.model import LocalRef
from bot.review.consumers.contracts.model import (
    GROUPS,
    Behaviour,
    BuildItem,
    Inventory,
    LaunchSetting,
    OutputPattern,
    WireField,
)

MAX_REFS = 3  # places shown per entry in the markdown; the JSON has them all


def cmd_contracts(args: argparse.Namespace) -> int:
    from bot.repos.snapshot import GitSnapshot
    from bot.review.consumers import SnapshotTexts
    from bot.review.consumers.contracts import contract_inventory

    repo = open_repo(args.repo)
    commit = commit_at(repo, args.rev, "--rev")
    inventory = contract_inventory(SnapshotTexts(GitSnapshot(repo, commit)))
    if not any(inventory.sizes().values()):
        print(
            f"llama-bot: note: {args.rev} ({str(commit.id)[:12]}) has no Go code that starts an upstream program "
            "and no build configuration that names upstream's: is it an Ollama checkout?",
            file=sys.stderr,
        )
    if getattr(args, "producers", False):
        return _emit_producers(args, repo, commit, inventory)
    if args.format == "json":
        emit(json.dumps({"rev": args.rev, "commit": str(commit.id), **inventory.to_json()}, indent=2))
    else:
        emit(markdown(inventory, args.rev, str(commit.id)))
    return 0


def _emit_producers(args: argparse.Namespace, repo, commit, inventory: Inventory) -> int:
    """`--producers`: every contract joined with what upstream's tree at the pinned (or named) ref produces."""
    from bot.review.upstream import join, report
    from bot.review.upstream.producers import read_producers
    from bot.review.upstream.tree import read_tree

    snapshot, pin, ref = pinned(repo, commit, args.upstream)
    upstream = _open_upstream(args, snapshot, pin, ref)
    where = "--upstream" if args.upstream else f"{pin.version_file} at {args.rev}"
    upstream_commit = upstream.commit(ref, where)
    producers = read_producers(
        read_tree(upstream.repo, upstream_commit, ref), {s.program for s in inventory.launch}
    )
    resolutions = join.resolve(inventory, producers, ollama_build(snapshot, pin))
    if args.format == "json":
        body = {
            "rev": args.rev,
            "commit": str(commit.id),
            "producers": report.to_json(resolutions, producers),
        }
        emit(json.dumps(body, indent=2))
    else:
        emit(report.markdown(resolutions, producers, args.rev, str(commit.id)))
    return 0


def pinned(repo, commit, upstream_ref: str | None):
    """The Ollama snapshot, its llama.cpp pin, and the upstream ref: `--upstream`, else the pin's version file."""
    from bot.config import load_config, read_version
    from bot.repos.snapshot import GitSnapshot

    snapshot = GitSnapshot(repo, commit)
    config = load_config(snapshot)
    pin = next((p for p in config.pins if p.review == "llama.cpp"), None)
    if pin is None:
        raise UsageError("--producers: the repository's configuration has no llama.cpp pin")
    ref = upstream_ref or read_version(snapshot, pin.version_file)
    if not ref:
        raise UsageError(
            f"--producers: {pin.version_file} is missing at this revision; name one with --upstream"
        )
    return snapshot, pin, ref


def _open_upstream(args: argparse.Namespace, snapshot, pin, ref: str):
    """`--upstream-dir` as it is, else the pin's mirror (fetched when it lacks the ref)."""
    from bot.cli.upstreams import upstream_opener
    from bot.config import load_config
    from bot.repos.upstream import Upstream

    if args.upstream_dir:
        return Upstream.open_dir(args.upstream_dir, pin.upstream)
    return upstream_opener([], load_config(snapshot))(pin, [ref])


def ollama_build(snapshot, pin):
    """What Ollama's own tree defines that its build items may name: its presets, its other pins."""
    from bot.config import load_config
    from bot.review.upstream.join import OllamaBuild
    from bot.review.upstream.producers import preset_names

    presets = {
        name
        for path in snapshot.files()
        if path.endswith("CMakePresets.json")
        for name, _ in preset_names((snapshot.read(path) or b"").decode("utf-8", "replace"))
    }
    others = tuple(p.name for p in load_config(snapshot).pins if p.name != pin.name)
    return OllamaBuild(frozenset(presets), others)


def markdown(inventory: Inventory, rev: str, commit: str) -> str:
    """The inventory as a maintainer reads it: a summary, then one table per group."""
    sizes = inventory.sizes()
    lines = [
        f"# What Ollama relies on of upstream, at {rev} ({commit[:12]})",
        "",
        (
            "What the upstream review protects: each entry is something Ollama's code or build expects of "
            "llama-server, the programs it starts, or upstream's build, with the Ollama file and line."
        ),
        "",
        "| group | entries |",
        "|---|---|",
        *(f"| {title} | {sizes[key]} |" for key, title in GROUPS),
    ]
    for key, title in GROUPS:
        header, row = _TABLES[key]
        lines += ["", f"## {title} ({sizes[key]})", "", _INTROS[key], "", header, _rule(header)]
        lines += [row(entry) for entry in getattr(inventory, key)] or [
            "| " + " | ".join(["none"] + [""] * (header.count("|") - 2)) + " |"
        ]
    return "\n".join(lines) + "\n"


def _rule(header: str) -> str:
    return "|" + "---|" * (header.count("|") - 1)


def _code(text: str) -> str:
    """A table cell's code span, whatever backticks and pipes the text holds."""
    text = " ".join(text.split()).replace("|", "\\|")
    if not text:
        return '""'
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _where(refs: Iterable[LocalRef]) -> str:
    refs = list(refs)
    shown = ", ".join(f"{r.path}:{r.line}" for r in refs[:MAX_REFS])
    return shown + (f" (+{len(refs) - MAX_REFS})" if len(refs) > MAX_REFS else "")


def _listed(values: Iterable[str]) -> str:
    return ", ".join(_cell(v) for v in values)


def _pattern_row(entry: OutputPattern) -> str:
    """A constant as Go would write it (quoted, escapes visible), a regular expression as it is."""
    value = entry.value if entry.kind == "regexp" else json.dumps(entry.value)
    used = (
        f" (compared at {_where(entry.used_at)})" if entry.used_at and entry.used_at[0] != entry.ref else ""
    )
    return f"| {_code(value)} | {entry.kind} | {_listed(entry.sources)} | {_where([entry.ref])}{used} |"


def _launch_row(entry: LaunchSetting) -> str:
    when = "every start" if entry.always else "some starts; upstream's default otherwise"
    return f"| {entry.program} | {entry.kind} | {_code(entry.name)} | {_listed(entry.values)} | {when} | {_where(entry.refs)} |"


def _request_row(entry: WireField) -> str:
    when = (
        "some requests only (or not when zero); upstream's default otherwise"
        if entry.optional
        else "every request"
    )
    values = _listed(entry.values)
    return f"| {entry.endpoint} | {_code(entry.path)} | {_code(entry.go_type) if entry.go_type else ''} | {values} | {when} | {_where([entry.ref])} |"


def _response_row(entry: WireField) -> str:
    return f"| {entry.endpoint} | {entry.direction} | {_code(entry.path)} | {_code(entry.go_type) if entry.go_type else ''} | {_where([entry.ref])} |"


def _behaviour_row(entry: Behaviour) -> str:
    return f"| {entry.area} | {_cell(entry.subject)} | {_cell(entry.setting)} | {_where(entry.refs)} |"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _build_row(entry: BuildItem) -> str:
    return f"| {entry.kind} | {_code(entry.name)} | {_code(entry.value) if entry.value else ''} | {_where(entry.refs)} |"


_TABLES: dict[str, tuple[str, Callable]] = {
    "output_patterns": ("| constant | kind | compared with | where |", _pattern_row),
    "launch": ("| program | kind | name | values | passed | where |", _launch_row),
    "request_fields": ("| endpoint | field | Go type | values | sent | where |", _request_row),
    "response_fields": ("| endpoint | read as | field | Go type | where |", _response_row),
    "behaviours": ("| area | what | Ollama | where |", _behaviour_row),
    "build": ("| kind | name | value | where |", _build_row),
}

_INTROS = {
    "output_patterns": "Constants Ollama's Go code looks for in what an upstream program prints (its log lines, "
    "`--list-devices`) or answers over HTTP (response bodies, stream framing): a change upstream makes to "
    "them goes unnoticed by Ollama's code.",
    "launch": "Flags and environment variables Ollama starts upstream programs with. One passed on some starts "
    "only leaves the program's own default in force on the others: that default is relied on too.",
    "request_fields": "JSON fields Ollama sends, with the Go type and the values its code can put there "
    "(constants quoted, otherwise the kind of value).",
    "response_fields": "JSON fields Ollama decodes from a response body or a stream chunk.",
    "behaviours": "The sampler, tokenizer and chat-template settings among the above: what Ollama sets, and "
    "where it leaves upstream's default.",
    "build": "What Ollama's build configuration relies on upstream's build having: options it sets, presets it "
    "runs, targets it builds or installs, packages and programs it looks for, tools its CMake runs.",
}
