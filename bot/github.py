"""Talking to GitHub as the App: JWT, cached installation tokens, and retries GitHub asks for.

Every call goes through gidgethub's aiohttp `GitHubAPI`; `GitHubClient`
only wraps its raw `_request` so that 5xx answers, timeouts and rate limits
are retried with backoff (honouring `Retry-After` and `x-ratelimit-reset`),
and an installation token GitHub rejects with 401 is replaced once.
`GitHubHealth` remembers whether the last call got an answer, for /healthz.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from cachetools import TLRUCache
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from gidgethub import BadRequest, GitHubBroken, RateLimitExceeded, apps
from gidgethub.aiohttp import GitHubAPI

log = logging.getLogger("bot.github")

API_VERSION = "2022-11-28"
USER_AGENT = "llama-bot"
TOKEN_REFRESH_MARGIN = 300.0  # seconds before `expires_at` at which a cached token is renewed

ResponseHook = Callable[[str, str], None]  # (method, status or "error") for metrics


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # tries per request, the first one included
    base_delay: float = 1.0  # first backoff; doubles on every retry
    max_delay: float = 60.0  # cap on one exponential backoff step
    secondary_wait: float = 60.0  # a secondary rate limit that says nothing about when: wait at least this
    max_wait: float = 900.0  # a wait longer than this gives up instead
    timeout: float = 30.0  # seconds for one request


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

    @property
    def failing(self) -> bool:
        return self.failing_since is not None


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


# While a `post_once` is under way: how to find what an attempt whose answer was lost may have created.
_FIND_CREATED: ContextVar[Callable[[], Awaitable[Any]] | None] = ContextVar("find_created", default=None)


class _Created(Exception):
    def __init__(self, item: Any):
        self.item = item


class GitHubClient(GitHubAPI):
    """gidgethub's aiohttp client with retries; with `token` it authenticates as an installation."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        base_url: str,
        policy: RetryPolicy = RetryPolicy(),
        token: Callable[[str | None], Awaitable[str]] | None = None,
        on_response: ResponseHook | None = None,
        health: GitHubHealth | None = None,
    ):
        super().__init__(session, USER_AGENT, base_url=base_url)
        self.policy = policy
        self._token = token  # token(rejected) -> a valid token, a new one when `rejected` is the cached one
        self._on_response = on_response or (lambda method, status: None)
        self.health = health or GitHubHealth()

    async def for_another_loop(self) -> Callable[[aiohttp.ClientSession], GitHubClient]:
        """A maker of this client's twin for a session of another thread's event loop. The twin sends the
        token valid now: a cached installation token has at least TOKEN_REFRESH_MARGIN left, more than an
        analysis takes, and one GitHub rejects anyway fails the twin's request instead of renewing it."""
        token = await self._token(None) if self._token is not None else None

        async def fixed(_rejected: str | None) -> str:
            assert token is not None
            return token

        return functools.partial(
            GitHubClient,
            base_url=self.base_url,
            policy=self.policy,
            token=fixed if token is not None else None,
            on_response=self._on_response,
            health=self.health,
        )

    async def post_once(
        self, url: str, url_vars: Mapping[str, Any], *, data: Any, find: Callable[[], Awaitable[Any]]
    ) -> Any:
        """POST what must not exist twice (a comment). A POST that timed out or got a 5xx may still have
        been carried out, so before each retry `find()` looks for its result, and a found one is returned
        instead of posting again."""
        token = _FIND_CREATED.set(find)
        try:
            return await self.post(url, url_vars, data=data)
        except _Created as created:
            return created.item
        finally:
            _FIND_CREATED.reset(token)

    async def _raise_if_created(self, method: str) -> None:
        find = _FIND_CREATED.get()
        if method == "POST" and find is not None:
            token = _FIND_CREATED.set(None)  # the lookup's own requests are plain reads
            try:
                found = await find()
            finally:
                _FIND_CREATED.reset(token)
            if found is not None:
                raise _Created(found)

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        headers, token = await self._versioned_and_authorized(headers)
        path = urlsplit(url).path
        attempt, renewed = 0, False
        while True:
            attempt += 1
            try:
                async with self._session.request(
                    method,
                    url,
                    headers=headers,
                    data=body,
                    timeout=aiohttp.ClientTimeout(total=self.policy.timeout),
                ) as resp:
                    status, answer, data = resp.status, resp.headers, await resp.read()
            except (TimeoutError, aiohttp.ClientError) as exc:
                if not await self._retry_unanswered(method, path, attempt, exc):
                    raise
                continue
            self._record_answer(method, path, status, answer, data)
            fresh = None if renewed else await self._renewed_token(status, token, method, path)
            if fresh is not None:  # the same attempt again, once, with the new token
                renewed, token = True, fresh
                headers["authorization"] = f"token {token}"
                attempt -= 1
                continue
            delay = retry_delay(
                self.policy, attempt, status, answer, data, now=time.time(), jitter=random.random()
            )
            if delay is None:
                return status, answer, data
            await self._retry_answered(method, path, status, attempt, delay)

    async def _versioned_and_authorized(
        self, headers: Mapping[str, str]
    ) -> tuple[dict[str, str], str | None]:
        """The headers with the API version and, unless the caller chose one, the installation token; and the
        token sent, None when the caller's own authorization goes."""
        headers = {**headers, "x-github-api-version": API_VERSION}
        if self._token is None or "authorization" in headers:
            return headers, None
        token = await self._token(None)
        headers["authorization"] = f"token {token}"
        return headers, token

    async def _renewed_token(self, status: int, token: str | None, method: str, path: str) -> str | None:
        """A new installation token when GitHub rejected the one this client sent, else None."""
        if status != 401 or self._token is None or token is None:
            return None
        fresh = await self._token(token)
        log.info("installation token rejected, renewed", extra={"method": method, "path": path})
        return fresh

    def _record_answer(
        self, method: str, path: str, status: int, answer: Mapping[str, str], data: bytes
    ) -> None:
        self._on_response(method, str(status))
        if answer_failed(status, answer, data):
            self.health.failed(f"{method} {path}: GitHub answered {status}")
        else:
            self.health.answered()

    async def _retry_unanswered(self, method: str, path: str, attempt: int, exc: Exception) -> bool:
        """Whether to send the request again after it got no answer; waits first when so."""
        self._on_response(method, "error")
        self.health.failed(f"{method} {path}: no answer ({type(exc).__name__})")
        delay = retry_delay(self.policy, attempt, None, {}, now=time.time(), jitter=random.random())
        if delay is None:
            return False
        log.warning(
            "GitHub request failed, retrying",
            extra={
                "method": method,
                "path": path,
                "error": type(exc).__name__,
                "attempt": attempt,
                "delay": delay,
            },
        )
        await self.sleep(delay)
        await self._raise_if_created(method)
        return True

    async def _retry_answered(self, method: str, path: str, status: int, attempt: int, delay: float) -> None:
        """Wait before sending the request again after GitHub's answer `status`; after a server error the
        lost attempt may have made what was asked for."""
        log.warning(
            "GitHub answered %s, retrying",
            status,
            extra={
                "method": method,
                "path": path,
                "status": status,
                "attempt": attempt,
                "delay": round(delay, 3),
            },
        )
        await self.sleep(delay)
        if status >= 500:
            await self._raise_if_created(method)


def signing_key(pem: str):
    """The App's private key, parsed once: PyJWT given the PEM text parses it again for every JWT (~50 ms).

    Raises ValueError when the text is not an unencrypted PEM private key.
    """
    try:
        return load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not an unencrypted PEM private key ({type(exc).__name__})") from None


@dataclass(frozen=True)
class InstallationToken:
    token: str
    expires_at: float  # epoch seconds


def _token_ttu(_key: int, value: InstallationToken, _now: float) -> float:
    return value.expires_at - TOKEN_REFRESH_MARGIN


class GitHubApp:
    """The App's identity: it signs JWTs (RS256, `iss` = app id) and hands out installation clients.

    Installation tokens are cached per installation until shortly before
    their own `expires_at` (a cachetools TLRUCache: the per-item variant of
    TTLCache, since GitHub states each token's expiry).
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        app_id: str,
        private_key: str,
        base_url: str,
        policy: RetryPolicy = RetryPolicy(),
        on_response: ResponseHook | None = None,
        health: GitHubHealth | None = None,
    ):
        self.app_id = app_id
        self._private_key = signing_key(private_key)
        self._session = session
        self.base_url = base_url
        self.policy = policy
        self._on_response = on_response
        self.health = health or GitHubHealth()
        self._tokens: TLRUCache[int, InstallationToken] = TLRUCache(
            maxsize=1024, ttu=_token_ttu, timer=time.time
        )
        self._locks: dict[int, asyncio.Lock] = {}
        self.app_client = GitHubClient(
            session, base_url=base_url, policy=policy, on_response=on_response, health=self.health
        )

    async def installation_token(self, installation_id: int, rejected: str | None = None) -> str:
        """A valid token for the installation; a new one if `rejected` is the one cached."""
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            cached = self._tokens.get(installation_id)
            if cached is not None and cached.token != rejected:
                return cached.token
            data = await apps.get_installation_access_token(
                self.app_client,
                installation_id=str(installation_id),
                app_id=self.app_id,
                private_key=self._private_key,
            )
            expires = dt.datetime.fromisoformat(data["expires_at"]).timestamp()
            self._tokens[installation_id] = InstallationToken(data["token"], expires)
            log.info("installation token issued", extra={"installation_id": installation_id})
            return data["token"]

    async def repo_installation(self, owner: str, repo: str) -> int:
        """The id of the App's installation on owner/repo (for work that no delivery started)."""
        jwt = apps.get_jwt(app_id=self.app_id, private_key=self._private_key)
        found = await self.app_client.getitem(
            "/repos/{owner}/{repo}/installation", {"owner": owner, "repo": repo}, jwt=jwt
        )
        return int(found["id"])

    def installation(self, installation_id: int) -> GitHubClient:
        async def token(rejected: str | None) -> str:
            return await self.installation_token(installation_id, rejected)

        return GitHubClient(
            self._session,
            base_url=self.base_url,
            policy=self.policy,
            token=token,
            on_response=self._on_response,
            health=self.health,
        )
