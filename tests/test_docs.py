"""The docs/ pages say what the code does: every CLI option, the default configuration, every rule key and
command, and links that lead somewhere."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from bot.cli.parser import build_parser
from bot.commands import COMMANDS
from bot.config import parse_config
from bot.review.ruleset import KEYS as RULE_KEYS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _sections(text: str) -> dict[str, str]:
    """`## \\`name\\`` headings of docs/cli.md -> the text up to the next `## `."""
    parts = re.split(r"^## `([\w-]+)`\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_cli_page_documents_every_option_and_choice_of_each_command(name):
    section = _sections((DOCS / "cli.md").read_text()).get(name)
    assert section is not None, f"docs/cli.md has no section for `{name}`"
    missing = []
    for action in _subcommands()[name]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        shown = action.option_strings[0] if action.option_strings else (action.metavar or action.dest.upper())
        if f"`{shown}" not in section:
            missing.append(shown)
        missing += [
            f"{shown} {choice}"
            for choice in action.choices or ()
            if f"`{choice}`" not in section
            and not re.search(rf"`{re.escape(shown)} [^`]*\b{re.escape(choice)}\b", section)
        ]
    assert missing == []


def test_configuration_page_shows_the_real_defaults():
    text = (DOCS / "configuration.md").read_text()
    block = re.search(r"## The defaults\n\n```toml\n(.*?)```", text, re.DOTALL)
    assert block is not None
    assert parse_config(block[1]) == parse_config(None)


def test_configuration_page_lists_every_rule_key():
    text = (DOCS / "configuration.md").read_text()
    table = text.split("## `[rules.<id>]`", 1)[1]
    listed = set(re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE))
    assert listed == RULE_KEYS


def test_service_page_lists_every_slash_command():
    text = (DOCS / "service.md").read_text()
    assert [c.name for c in COMMANDS if f"`/llama {c.name}" not in text] == []


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as dashes."""
    headings = re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_lead_to_a_file_and_heading(page):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and anchor not in _anchors(linked.read_text())):
            broken.append(target)
    assert broken == []
