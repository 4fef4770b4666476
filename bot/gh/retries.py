"""When a GitHub call is tried again, and whether GitHub is serving the bot: decisions over an answer's
status, headers and body (honouring `Retry-After` and `x-ratelimit-reset`), and the health /healthz reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import aiohttp
from gidgethub import BadRequest, GitHubBroken, RateLimitExceeded


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # tries per request, the first one included
    base_delay: float = 1.0  # first backoff; doubles on every retry
    max_delay: float = 60.0  # cap on one exponential backoff step
    secondary_wait: float = 60.0  # a secondary rate limit that says nothing about when: wait at least this
    max_wait: float = 900.0  # a wait longer than this gives up instead
    timeout: float = 30.0  # seconds for one request


DEFAULT_POLICY = RetryPolicy()


def _rate_limited(status: int, headers: Mapping[str, str], body: bytes) -> bool:
    if status == 429:
        return True
    return status == 403 and (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining") == "0"
        or b"rate limit" in body.lower()
    )


def answer_failed(status: int | None, headers: Mapping[str, str], body: bytes = b"") -> bool:
    """Whether GitHub is not serving the bot: no answer (`status` None), a 5xx, or a rate limit."""
    return status is None or status >= 500 or _rate_limited(status, headers, body)


def transient(exc: BaseException) -> bool:
    """Whether a call that raised `exc` after its retries may work later: GitHub was unreachable, failing
    (5xx) or rate limiting. Any other answer (404, 422, ...) would be the same next time."""
    if isinstance(exc, (aiohttp.ClientError, TimeoutError, GitHubBroken, RateLimitExceeded)):
        return True
    if isinstance(exc, BadRequest):
        message = str(exc.args[-1]) if exc.args else ""
        return int(exc.status_code) == 429 or (
            int(exc.status_code) == 403 and "rate limit" in message.lower()
        )
    return False


class GitHubHealth:
    """Whether GitHub answers the bot: failing from a failed call (see `answer_failed`) until a call gets
    any other answer. The service is degraded meanwhile; /healthz says since when and why."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.failing_since: float | None = None
        self.last_error: str | None = None

    def failed(self, what: str) -> None:
        if self.failing_since is None:
            self.failing_since = self.clock()
        self.last_error = what

    def answered(self) -> None:
        self.failing_since = None


def retry_delay(
    policy: RetryPolicy,
    attempt: int,
    status: int | None,
    headers: Mapping[str, str],
    body: bytes = b"",
    *,
    now: float,
    jitter: float,
) -> float | None:
    """Seconds to wait before retrying after `attempt` (1-based) failed, or None to stop.

    `status` None means no answer (timeout, connection error). `jitter` is a
    number in [0, 1) that spreads the backoff over its upper half.
    """
    if attempt >= policy.attempts:
        return None
    limited = status is not None and _rate_limited(status, headers, body)
    if status is not None and status < 500 and not limited:
        return None
    backoff = min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1)) * (0.5 + jitter / 2)
    wait = _asked_wait(policy, backoff, headers, limited, now)
    return wait if wait <= policy.max_wait else None


def _asked_wait(
    policy: RetryPolicy, backoff: float, headers: Mapping[str, str], limited: bool, now: float
) -> float:
    """The wait GitHub asks for: its Retry-After, else a primary rate limit's reset, else at least the
    secondary limit's wait when it is limited, else the backoff."""
    retry_after = headers.get("retry-after", "")
    if retry_after.strip().isdigit():
        return float(retry_after)
    if not limited:
        return backoff
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset", "").isdigit():
        return max(0.0, float(headers["x-ratelimit-reset"]) - now) + 1.0
    return max(policy.secondary_wait, backoff)
