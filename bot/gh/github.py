"""Talking to GitHub as the App: JWT, cached installation tokens, and retries GitHub asks for.

Every call goes through gidgethub's aiohttp `GitHubAPI`; `GitHubClient`
only wraps its raw `_request` so that 5xx answers, timeouts and rate limits
are retried with backoff as `bot/gh/retries.py` decides, and an installation
token GitHub rejects with 401 is replaced once. An answer is read as it
arrives and held to ANSWER_BYTES; `get_capped` reads one that is not JSON (a
raw blob) to a bound of the caller's.
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
from gidgethub import apps, sansio
from gidgethub.aiohttp import GitHubAPI

from bot.gh.retries import DEFAULT_POLICY, GitHubHealth, RetryPolicy, answer_failed, retry_delay
from bot.repos.snapshot import size_text

log = logging.getLogger("bot.github")

API_VERSION = "2022-11-28"
USER_AGENT = "llama-bot"
TOKEN_REFRESH_MARGIN = 300.0  # seconds before `expires_at` at which a cached token is renewed
READ_CHUNK = 1 << 16  # bytes a capped read takes from the connection at a time
# What the service reads of any one answer of GitHub's. The largest it asks for are a recursive tree listing
# (GitHub stops at 100,000 entries and 7 MB) and a page of a pull request's files, whose patches GitHub
# leaves out past 20,000 lines; a pull request's file is read raw, under its own bound (bot/gh/rest.py).
ANSWER_BYTES = 32 << 20

ResponseHook = Callable[[str, str], None]  # (method, status or "error") for metrics


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
        policy: RetryPolicy = DEFAULT_POLICY,
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

    async def get_capped(
        self, url: str, url_vars: Mapping[str, Any], *, accept: str, max_bytes: int
    ) -> bytes:
        """The body of a GET, read as it arrives and held to `max_bytes` (as decoded: a small gzip stream may
        inflate to far more): BodyTooLarge as soon as it passes them, the rest never read. GitHub's refusals
        raise as they do from `getitem`, and what `getitem` retries is retried."""
        headers = sansio.create_headers(self.requester, accept=accept)
        status, answer, data = await self._send(
            "GET",
            sansio.format_url(url, url_vars, base_url=self.base_url),
            headers,
            b"",
            functools.partial(_read_capped, max_bytes=max_bytes),
        )
        if status != 200:
            sansio.decipher_response(status, answer, data)  # raises for GitHub's refusals
        return data

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        return await self._send(method, url, headers, body, _read_answer)

    async def _send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
        read: Callable[[aiohttp.ClientResponse], Awaitable[bytes]],
    ) -> tuple[int, Mapping[str, str], bytes]:
        """The request, retried as the policy says; `read` takes the body of each answer."""
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
                    status, answer, data = resp.status, resp.headers, await read(resp)
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


class BodyTooLarge(Exception):
    """An answer's body passed the bytes its reader would hold."""

    def __init__(self, max_bytes: int):
        super().__init__(
            f"GitHub answered with more than {size_text(max_bytes)}, which llama-bot does not read"
        )
        self.max_bytes = max_bytes


async def _read_answer(resp: aiohttp.ClientResponse) -> bytes:
    return await _read_capped(resp, ANSWER_BYTES)


async def _read_capped(resp: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The body, decoded, in chunks: BodyTooLarge once it passes `max_bytes`."""
    body = bytearray()
    async for chunk in resp.content.iter_chunked(READ_CHUNK):
        if len(body) + len(chunk) > max_bytes:
            raise BodyTooLarge(max_bytes)
        body += chunk
    return bytes(body)


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
        policy: RetryPolicy = DEFAULT_POLICY,
        on_response: ResponseHook | None = None,
        health: GitHubHealth | None = None,
    ):
        self.app_id = app_id
        self.use_private_key(private_key)
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

    def use_private_key(self, pem: str) -> None:
        """Sign the App's next tokens with `pem` (a rotated key; the ones issued stay valid)."""
        self._private_key = signing_key(pem)

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

    async def installations(self) -> list[int]:
        """The ids of the App's installations (for work that no delivery started)."""
        jwt = apps.get_jwt(app_id=self.app_id, private_key=self._private_key)
        return [
            int(i["id"]) async for i in self.app_client.getiter("/app/installations?per_page=100", jwt=jwt)
        ]

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
