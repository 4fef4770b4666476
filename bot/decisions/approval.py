"""Who may make the bot act, and on which commit: the head a person with write access saw.

A command is written against the PR head its author looked at; a push can land between the comment and
the job that runs it (the job may wait behind a long analysis). Running or committing on whatever the head
is by then would act on code nobody with write access has seen, with the repository's secrets. So a
command acts only on a head that is provably the one of the comment's time, by one of two proofs:

- the bot's own record: each time it sees a PR's head (a `pull_request` delivery, queued after its
  signature check, or one of its own reads of the PR) it notes it, and the head now has been the head,
  without another seen in between, since at or before the comment. The bot sees a head only after GitHub
  made it, so its times err late; the comment's time is the earlier of GitHub's and the time its delivery
  was queued, so a clock that runs behind GitHub's does not err early.
- GitHub's own clock: nothing was pushed to the head repository after the comment (its `pushed_at` is
  before the comment's second: GitHub writes whole seconds).

Everything here is pure: the stores and GitHub are read at the edges (`bot.worker.approve`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

WRITE_ROLES = {"admin", "maintain", "write"}


def may_write(answer: dict) -> bool:
    """Whether a collaborator-permission answer allows commands (`maintain` is reported as `write`)."""
    return answer.get("permission") in WRITE_ROLES or answer.get("role_name") in WRITE_ROLES


def permission_of(answer: dict) -> str:
    """The role a collaborator-permission answer names, as people know it."""
    return str(answer.get("role_name") or answer.get("permission") or "none")


@dataclass(frozen=True)
class HeadSeen:
    """A PR head the bot saw, and when (epoch seconds, the bot's clock)."""

    sha: str
    at: float


@dataclass(frozen=True)
class CommentTime:
    """When a comment was written (GitHub's clock) and when its delivery was queued (the bot's)."""

    created_at: float | None  # None when the delivery did not say, or said something unreadable
    received_at: float


@dataclass(frozen=True)
class Approval:
    """Whether a command may act on the head it finds, and what to say when it may not."""

    head: str  # the PR's head when the job looked
    approved: bool
    seen: str | None = None  # the head at the comment's time, when known and not `head`


def epoch(stamp: object) -> float | None:
    """A time as GitHub writes it, in epoch seconds; None for anything else (hostile input included)."""
    if not isinstance(stamp, str) or len(stamp) > 40:
        return None
    try:
        parsed = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).timestamp()


def stints(seen: Sequence[HeadSeen]) -> list[HeadSeen]:
    """The sightings in recorded order with repeats of the same head merged into the first: each one is
    when a head was first seen after another."""
    merged: list[HeadSeen] = []
    for sighting in seen:
        if not merged or merged[-1].sha != sighting.sha:
            merged.append(sighting)
    return merged


def head_when(seen: Sequence[HeadSeen], moment: float) -> str | None:
    """The head the bot knew last at `moment`, or None when it had seen none by then."""
    before = [s for s in stints(seen) if s.at <= moment]
    return before[-1].sha if before else None


def approve(head: str, seen: Sequence[HeadSeen], comment: CommentTime, pushed_at: float | None) -> Approval:
    """Whether `head`, the PR's head now, is the one the comment was written against.

    `seen` is the PR's head sightings in recorded order; `pushed_at` the head repository's last push
    (GitHub's clock), None when unknown. A comment whose time is unknown approves nothing.
    """
    if comment.created_at is None:
        return Approval(head, False)
    moment = min(comment.created_at, comment.received_at)
    merged = stints(seen)
    unchanged = bool(merged) and merged[-1].sha == head and merged[-1].at <= moment
    not_pushed = pushed_at is not None and pushed_at < comment.created_at
    if unchanged or not_pushed:
        return Approval(head, True)
    before = head_when(seen, moment)
    return Approval(head, False, before if before != head else None)


def rerun_refusal(head: str, dispatch_sha: str, may: bool) -> str | None:
    """Why a re-requested `validate:` check run is not dispatched again ("permission", "moved"), or None:
    it is, only for a sender with write access (`may`), and only while its own commit is the head."""
    if not may:
        return "permission"
    return "moved" if head != dispatch_sha else None
