"""The pin dashboard: one issue per repository saying, per pin, how far behind the newest upstream ref it
is and what a bump there would meet (the same analysis a bump runs), with a checkbox that asks for the bump.

Pure functions over plain data: the worker (bot/worker/dashboard.py) reads GitHub and runs the analyses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.decisions.bump import RefChoice, ancestry_downgrade
from bot.model import PinReport

MARKER = "<!-- llama-bot:dashboard -->"
BODY_LIMIT = 65536  # GitHub's limit on an issue's body
MAX_FINDINGS = 10  # high and medium items shown per pin; the bump pull request's checklist has them all
SEVERE = ("high", "medium")
# a task-list line the bot wrote: its box, and the pin its hidden id names
_BOX = re.compile(
    r"^[ \t]*[-*][ \t]+\[([ xX])\][^\n]*<!-- id:bump-([A-Za-z0-9._-]{1,100}) -->[ \t]*$", re.MULTILINE
)


_BOX_ID = re.compile(r"[A-Za-z0-9._-]{1,100}")


def box_id(pin: str) -> str:
    """The hidden id of a pin's checkbox; "" for a pin name the id cannot carry (it gets no box)."""
    return f"<!-- id:bump-{pin} -->" if _BOX_ID.fullmatch(pin) else ""


def any_ticked(body: str) -> bool:
    """Whether a box the bot wrote is ticked (the webhook's cheap test; the job reads which)."""
    return any(m[1] in "xX" for m in _BOX.finditer(body))


def ticked(body: str, pins: tuple[str, ...]) -> list[str]:
    """The configured pins whose box is ticked in the dashboard's body, in the order shown."""
    found = [m[2] for m in _BOX.finditer(body or "") if m[1] in "xX" and m[2] in pins]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class OpenBump:
    """A pin's open bump pull request, and whether it is at the ref the dashboard offers."""

    number: int
    url: str
    ref: str | None  # the ref its version file names


@dataclass(frozen=True)
class PinState:
    """One pin's line of the dashboard."""

    pin: str
    current: str | None
    newest: str | None  # None: nothing to offer (up to date, or `why` says)
    why: str = ""  # why there is no newest to offer, or why the forecast could not be made
    commits: int = 0  # upstream commits from current to newest
    days: int | None = None  # how much newer the newest ref's commit is than the current one's
    compare_url: str | None = None
    patches: tuple[tuple[str, str], ...] = ()  # (patch file, status at the newest ref)
    findings: tuple[tuple[str, str], ...] = ()  # (severity, title) of the review's high and medium items
    more_findings: int = 0  # beyond MAX_FINDINGS
    unchecked: tuple[str, ...] = ()
    pull: OpenBump | None = None

    @property
    def behind(self) -> bool:
        return self.newest is not None and self.newest != self.current


def state_of(
    choice: RefChoice, report: PinReport | None, failure: str = "", pull: OpenBump | None = None
) -> PinState:
    """A pin's line from the ref a bump would choose and the report of the bump's analysis (None when the
    pin is at its newest ref or no analysis ran; `failure` says why one could not)."""
    if choice.ref is None or choice.already:
        return PinState(choice.pin, choice.current, None, choice.refusal or "", pull=pull)
    if report is None:
        return PinState(choice.pin, choice.current, choice.ref, failure, pull=pull)
    if ancestry_downgrade(report):  # never offered: a bump without a named ref refuses it
        back = f"{choice.ref} is older than {choice.current} ({report.reverted_count} upstream commits would be taken away)"
        return PinState(choice.pin, choice.current, None, back, pull=pull)
    severe = [(f.severity, f.title) for f in report.findings if f.severity in SEVERE]
    severe.sort(key=lambda item: SEVERE.index(item[0]))
    return PinState(
        choice.pin,
        choice.current,
        choice.ref,
        report.error or failure,
        report.commit_count,
        days_between(report.old_time, report.new_time),
        report.compare_url,
        tuple((p.path, p.status) for p in report.patches),
        tuple(severe[:MAX_FINDINGS]),
        max(0, len(severe) - MAX_FINDINGS),
        tuple(report.unchecked),
        pull,
    )


def days_between(old: int | None, new: int | None) -> int | None:
    """Whole days from the old commit to the new one (0 when the new one is older)."""
    return None if old is None or new is None else max(0, new - old) // 86400


def due(
    shown: dict[str, str] | None, newest: dict[str, str], refreshed_at: float, every: int, now: float
) -> bool:
    """Whether a scheduled look refreshes the dashboard: never shown, an upstream moved since, or `every`
    seconds have passed."""
    return shown is None or shown != newest or now - refreshed_at >= every


def fit(text: str) -> str:
    """The body within GitHub's limit, its marker first: a text too long loses its end."""
    room = BODY_LIMIT - len(MARKER) - 40
    shown = text if len(text) <= room else text[:room] + "\n\n… (cut to fit)"
    return f"{MARKER}\n{shown}"
