"""The web service: GitHub's webhook, health and metrics endpoints, and `serve`.

The webhook answers within milliseconds: it checks the signature on the
raw bytes, lets the routers decide which jobs the delivery needs, stores
them durably, and leaves all GitHub calls and analysis to the workers.
"""

from __future__ import annotations

import gc
import hmac
import json
import logging
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

import aiohttp
import simdjson
from aiohttp import web
from gidgethub import sansio
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import handlers
from bot.github import GitHubApp, GitHubHealth, RetryPolicy, signing_key
from bot.jobs import DB_NAME, JobQueue, JobRequest, SqliteJobQueue
from bot.service import JobBackoff, Metrics, Service

log = logging.getLogger("bot.app")

MAX_BODY = 25 * 1024 * 1024  # GitHub never delivers more (FACTS.md section 1)
SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
METRICS = web.AppKey("metrics", Metrics)
QUEUE = web.AppKey("queue", JobQueue)
SERVICE = web.AppKey("service", Service)
HEALTH = web.AppKey("health", GitHubHealth)


class SettingsError(Exception):
    """The environment cannot run the service: one line saying what is missing."""


@dataclass(frozen=True)
class Settings:
    app_id: str
    private_key: str
    webhook_secret: str
    api_url: str = "https://api.github.com"
    host: str = "0.0.0.0"
    port: int = 8080
    data_dir: Path = Path("./var")
    url_instead_of: str | None = None
    workers: int = 2

    def __repr__(self) -> str:  # never print the key or the secret
        return f"Settings(app_id={self.app_id!r}, api_url={self.api_url!r}, data_dir={str(self.data_dir)!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """The environment variables of CONTRACT section 5."""
        secret = env.get("GITHUB_WEBHOOK_SECRET")
        if not secret:
            raise SettingsError("GITHUB_WEBHOOK_SECRET is not set: refusing to accept unsigned webhooks")
        app_id = env.get("GITHUB_APP_ID")
        if not app_id:
            raise SettingsError("GITHUB_APP_ID is not set")
        key = env.get("GITHUB_PRIVATE_KEY")
        if not key and env.get("GITHUB_PRIVATE_KEY_PATH"):
            try:
                key = Path(env["GITHUB_PRIVATE_KEY_PATH"]).read_text()
            except OSError as exc:
                raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH: cannot read {env['GITHUB_PRIVATE_KEY_PATH']} "
                                    f"({exc.strerror})") from None
        if not key:
            raise SettingsError("set GITHUB_PRIVATE_KEY (PEM text) or GITHUB_PRIVATE_KEY_PATH")
        try:
            signing_key(key)
        except ValueError as exc:
            raise SettingsError(f"the App's private key is {exc}") from None
        try:
            port, workers = int(env.get("PORT") or 8080), int(env.get("LLAMA_BOT_WORKERS") or 2)
        except ValueError:
            raise SettingsError("PORT and LLAMA_BOT_WORKERS must be whole numbers") from None
        if workers < 1:
            raise SettingsError("LLAMA_BOT_WORKERS must be at least 1")
        return cls(app_id=app_id, private_key=key, webhook_secret=secret,
                   api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
                   host=env.get("HOST") or "0.0.0.0", port=port,
                   data_dir=Path(env.get("LLAMA_BOT_DATA_DIR") or "./var"),
                   url_instead_of=env.get("LLAMA_BOT_URL_INSTEADOF") or None, workers=workers)


# -- logs -----------------------------------------------------------------------------------------

_SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"  # PEM keys
    r"|\bgh[opsuir]_[A-Za-z0-9_]{16,}"  # GitHub tokens
    r"|\b(?:token|bearer)\s+[A-Za-z0-9._\-]{20,}", re.DOTALL | re.IGNORECASE)  # Authorization header values
_RECORD_FIELDS = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line; anything shaped like a key or token, or equal to a known secret, is masked."""

    def __init__(self, secrets: tuple[str, ...] = ()):
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return _SECRET_SHAPES.sub("[redacted]", text)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                       + f".{int(record.msecs):03d}Z", "level": record.levelname, "logger": record.name,
                       "message": self.redact(record.getMessage())}
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS:
                entry[key] = value if isinstance(value, (int, float, bool)) or value is None else self.redact(str(value))
        if record.exc_info:
            entry["exception"] = self.redact(self.formatException(record.exc_info))
        return json.dumps(entry)


def configure_logging(settings: Settings, stream=None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(JsonFormatter((settings.webhook_secret, settings.private_key.strip())))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    # What the JSON lines never show is not collected either (the logging HOWTO's "Optimization").
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    logging._srcfile = None  # type: ignore[attr-defined]
    return handler


# -- the webhook ----------------------------------------------------------------------------------


def signature_valid(body: bytes, signature: str | None, secret: str) -> bool:
    """`X-Hub-Signature-256` check on the raw bytes, in constant time."""
    if not signature or not signature.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, sha256).hexdigest()
    return hmac.compare_digest(signature.encode(), expected.encode())


class BadDelivery(Exception):
    """A signed delivery the service cannot read (answered 400 with this message)."""


# One parser, reused: simdjson decodes only the values the routers read, a dozen of a pull_request
# payload's 25 KB, in a quarter of the time a full decode takes. It refuses to parse while the previous
# document is still referenced; a delivery that finds it so gets a parser of its own.
_parser = simdjson.Parser()


async def _job_requests(body: bytes, event_name: str, delivery: str) -> list[JobRequest]:
    """What the routers ask of a delivery; the parsed payload is released when this returns."""
    try:
        try:
            data = _parser.parse(body)
        except RuntimeError:
            data = simdjson.Parser().parse(body)
    except ValueError:
        raise BadDelivery("body is not JSON") from None
    if not isinstance(data, simdjson.Object):
        raise BadDelivery("body is not a JSON object")
    try:
        return await handlers.job_requests(sansio.Event(data, event=event_name, delivery_id=delivery))
    except (KeyError, TypeError, AttributeError, ValueError):
        raise BadDelivery("payload lacks fields this event must have, or has them in another shape") from None


def _answer(code: int, **data) -> web.Response:
    return web.json_response(data, status=code)


async def webhook(request: web.Request) -> web.Response:
    app = request.app
    settings: Settings = app[SETTINGS]
    metrics: Metrics = app[METRICS]
    event_name = request.headers.get("X-GitHub-Event", "")
    delivery = request.headers.get("X-GitHub-Delivery", "")
    context = {"delivery_id": delivery, "event": event_name}

    def outcome(name: str, code: int, **data) -> web.Response:
        metrics.deliveries.labels(event_name or "unknown", name).inc()
        log.info("webhook %s", name, extra={**context, "status": code})
        return _answer(code, **data)

    if (request.content_length or 0) > MAX_BODY:
        return outcome("too_large", 413, error="body larger than 25 MiB")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return outcome("too_large", 413, error="body larger than 25 MiB")
    if not signature_valid(body, request.headers.get("X-Hub-Signature-256"), settings.webhook_secret):
        return outcome("unauthorized", 401, error="missing or wrong X-Hub-Signature-256")
    if not event_name:
        return outcome("bad_request", 400, error="missing X-GitHub-Event")
    if not delivery:  # GitHub always names its deliveries; a redelivered body still counts once
        delivery = context["delivery_id"] = "sha256:" + sha256(body).hexdigest()
    try:
        requests = await _job_requests(body, event_name, delivery)
    except BadDelivery as exc:
        return outcome("bad_request", 400, error=str(exc))
    if not requests:
        return outcome("ignored", 200, status="ignored")
    queue: JobQueue = app[QUEUE]
    ids = await queue.enqueue(delivery, event_name, requests)
    if ids is None:
        return outcome("duplicate", 200, status="duplicate")
    app[SERVICE].wake()
    return outcome("queued", 202, status="queued", jobs=ids)


async def healthz(request: web.Request) -> web.Response:
    """200 either way: webhooks are still taken (and kept) while GitHub fails, so nothing should restart
    the service for it; `degraded` says GitHub calls fail, since when, and the last failure."""
    health = request.app[HEALTH]
    jobs = await request.app[QUEUE].counts()
    if health.failing_since is None:
        return _answer(200, status="ok", jobs=jobs, github={"status": "ok"})
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(health.failing_since))
    return _answer(200, status="degraded", jobs=jobs,
                   github={"status": "failing", "since": since, "last_error": health.last_error})


async def metrics_endpoint(request: web.Request) -> web.Response:
    metrics: Metrics = request.app[METRICS]
    for status, count in (await request.app[QUEUE].counts()).items():
        metrics.queue.labels(status).set(count)
    return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})


def create_app(settings: Settings, *, queue: JobQueue | None = None, policy: RetryPolicy | None = None,
               poll_interval: float = 1.0, backoff: JobBackoff | None = None) -> web.Application:
    """The service; `queue`, `policy` and `backoff` let tests use a prepared queue (with its clock) and
    short backoffs."""
    app = web.Application(client_max_size=MAX_BODY)
    app[SETTINGS] = settings
    app[METRICS] = metrics = Metrics()
    app[HEALTH] = health = GitHubHealth()
    app.router.add_post("/webhook", webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_endpoint)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        app[QUEUE] = queue or SqliteJobQueue(settings.data_dir / DB_NAME)
        async with aiohttp.ClientSession() as session:
            github = GitHubApp(session, app_id=settings.app_id, private_key=settings.private_key,
                               base_url=settings.api_url, policy=policy or RetryPolicy(),
                               on_response=metrics.github_call, health=health)
            service = app[SERVICE] = Service(queue=app[QUEUE], github=github, data_dir=settings.data_dir,
                                               url_instead_of=settings.url_instead_of, workers=settings.workers,
                                               metrics=metrics, poll_interval=poll_interval,
                                               backoff=backoff or JobBackoff())
            service.start()
            log.info("service started", extra={"workers": settings.workers, "api_url": settings.api_url})
            yield
            await service.stop()
        await app[QUEUE].close()

    app.cleanup_ctx.append(lifecycle)
    return app


def serve(host: str | None = None, port: int | None = None) -> None:
    """`python -m bot serve`: refuses to start without the webhook secret and the App's credentials."""
    try:
        settings = Settings.from_env(os.environ)
    except SettingsError as exc:
        print(f"llama-bot serve: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    configure_logging(settings)
    app = create_app(settings)
    # Everything imported so far lives as long as the process: keeping it out of the collector's full
    # passes turns 40-60 ms pauses of the webhook under load into a few ms.
    gc.freeze()
    web.run_app(app, host=host or settings.host, port=port or settings.port,
                print=None, access_log=None)
