"""Where the command line gets each pin's upstream: a local git directory it was given, else a mirror."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bot.cli.console import UsageError
from bot.config import Config, Pin
from bot.repos.mirrors import parse_url_rewrites
from bot.repos.upstream import Mirrors, Upstream


def cli_data_dir() -> Path:
    """Where the CLI keeps its mirrors: the user's cache, never the current directory, which is usually an
    Ollama checkout (a mirror inside it would be one `git add -A` away from a commit)."""
    if os.environ.get("LLAMA_BOT_DATA_DIR"):
        return Path(os.environ["LLAMA_BOT_DATA_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "llama-bot"


def upstream_opener(dirs: list[str], config: Config, quiet: bool = False):
    local = local_upstreams(dirs, config)
    instead_of = os.environ.get("LLAMA_BOT_URL_INSTEADOF")
    parse_url_rewrites(instead_of)  # a bad value is named before any work
    announce = None if quiet else lambda text: print(f"llama-bot: {text}", file=sys.stderr)
    mirrors = Mirrors(cli_data_dir(), instead_of, local, announce)

    def open_upstream(pin: Pin, refs: list[str]) -> Upstream:
        return mirrors.open(pin.name, pin.upstream, refs)

    return open_upstream


def local_upstreams(dirs: list[str], config: Config) -> dict[str, str]:
    """The `--upstream-dir NAME=GITDIR` options: pin name -> git directory."""
    return dict(_upstream_dir(item, config) for item in dirs)


def _upstream_dir(item: str, config: Config) -> tuple[str, str]:
    name, sep, git_dir = item.partition("=")
    if "" in (name, sep, git_dir):
        raise UsageError(f"--upstream-dir {item!r}: expected NAME=GITDIR")
    if config.pin(name) is None:  # a typo would otherwise fetch from the network instead
        pins = ", ".join(p.name for p in config.pins) or "none"
        raise UsageError(f"--upstream-dir {item}: no pin is named {name!r} (pins: {pins})")
    return name, git_dir
