"""The one jinja environment every comment, reply and check-run text is made with, and the marks the bot
finds its own comment by."""

from __future__ import annotations

from pathlib import Path

import jinja2

from bot.markup import fence
from bot.render.findings import after_consequence
from bot.render.markdown import code, code_cell, html_text, plain, plain_cell, subject

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
MARKER = "<!-- llama-bot:checklist -->"
RUNNING = "<!-- llama-bot:running -->"  # in the comment while a run is under way
HEADING = "## 🦙 llama-bot: upstream bump checklist"
STATUS_ICON = {
    "clean": "✅",
    "offset": "✅",
    "regenerated": "🔁",
    "fuzzy": "⚠️",
    "conflict": "❌",
    "upstreamed": "🗑️",
    "error": "⛔",
}

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_env.globals.update(icon=STATUS_ICON, heading=HEADING)
_env.filters.update(
    after_consequence=after_consequence,
    code=code,
    code_cell=code_cell,
    fence=fence,
    html_text=html_text,
    plain=plain,
    plain_cell=plain_cell,
    subject=subject,
)


def render_template(name: str, **context) -> str:
    """Any of bot/templates/, rendered by the one environment so every text shares its whitespace rules."""
    return _env.get_template(name).render(**context)


def under_way(body: str) -> bool:
    """Whether a checklist comment says a run is under way: the mark beside the marker on its first line,
    where the bot writes it (a name quoted further down may hold the same text)."""
    return body.split("\n", 1)[0].rstrip("\r") == MARKER + RUNNING
