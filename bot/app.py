"""The web service: GitHub's webhook, health and metrics endpoints, and `serve`.

The webhook answers within milliseconds: it checks the signature on the
raw bytes, lets the routers decide which jobs the delivery needs, stores
them durably, and leaves all GitHub calls and analysis to the workers.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import json
import logging
import os
import re
import signal
import socket
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

import aiohttp
import psycopg
import simdjson
from aiohttp import web
from gidgethub import sansio
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import handlers
from bot.gitcli import public_url
from bot.github import GitHubApp, GitHubHealth, RetryPolicy, signing_key
from bot.jobs import JobQueue, JobRequest
from bot.metrics import Metrics
from bot.model import AnalysisError
from bot.pgstore import PostgresJobQueue, PostgresValidationStore
from bot.sqlitejobs import DB_NAME, SqliteJobQueue
from bot.upstream import parse_url_rewrites
from bot.worker.runner import JobBackoff, Service

log = logging.getLogger("bot.app")

MAX_BODY = 25 * 1024 * 1024  # GitHub never delivers more
SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
METRICS = web.AppKey("metrics", Metrics)
QUEUE = web.AppKey("queue", JobQueue)
SERVICE = web.AppKey("service", Service)
HEALTH = web.AppKey("health", GitHubHealth)
MIN_SECRET = 16  # characters a webhook secret needs: a shorter one is within reach of guessing


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
    database_url: str | None = None  # the shared job store; None: SQLite in data_dir

    def __repr__(self) -> str:  # never print the key, the secret or the database's password
        return f"Settings(app_id={self.app_id!r}, api_url={self.api_url!r}, data_dir={str(self.data_dir)!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """The service's environment variables; the first that cannot work is a one-line SettingsError."""
        secret, app_id, key = _webhook_secret(env), _app_id(env), _private_key(env)
        port = _whole_number(env, "PORT", 8080)
        if not 0 <= port <= 65535:
            raise SettingsError(f"PORT must be a port number from 0 to 65535, not {port}")
        workers = _whole_number(env, "LLAMA_BOT_WORKERS", 2)
        if workers < 1:
            raise SettingsError("LLAMA_BOT_WORKERS must be at least 1")
        try:
            parse_url_rewrites(env.get("LLAMA_BOT_URL_INSTEADOF"))
        except AnalysisError as exc:  # at start, not in the first analysis that fetches
            raise SettingsError(str(exc)) from None
        return cls(
            app_id=app_id,
            private_key=key,
            webhook_secret=secret,
            api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            host=env.get("HOST") or "0.0.0.0",
            port=port,
            data_dir=Path(env.get("LLAMA_BOT_DATA_DIR") or "./var"),
            url_instead_of=env.get("LLAMA_BOT_URL_INSTEADOF") or None,
            workers=workers,
            database_url=_database_url(env.get("DATABASE_URL")),
        )


def _webhook_secret(env: Mapping[str, str]) -> str:
    secret = env.get("GITHUB_WEBHOOK_SECRET")
    if not secret:
        raise SettingsError("GITHUB_WEBHOOK_SECRET is not set: refusing to accept unsigned webhooks")
    if len(secret) < MIN_SECRET:
        raise SettingsError(
            f"GITHUB_WEBHOOK_SECRET is {len(secret)} characters long: use at least {MIN_SECRET} "
            "random ones (e.g. `openssl rand -hex 32`), set the same on the App"
        )
    return secret


def _app_id(env: Mapping[str, str]) -> str:
    app_id = env.get("GITHUB_APP_ID")
    if not app_id:
        raise SettingsError("GITHUB_APP_ID is not set")
    if not re.fullmatch(r"[0-9]+", app_id):
        raise SettingsError(
            f"GITHUB_APP_ID must be the App's numeric id (its settings page shows it), not {app_id[:40]!r}"
        )
    return app_id


def _private_key(env: Mapping[str, str]) -> str:
    """The App's key, as PEM text or from a file; one that cannot sign is refused here, not at the first call."""
    key = env.get("GITHUB_PRIVATE_KEY")
    if not key and env.get("GITHUB_PRIVATE_KEY_PATH"):
        try:
            key = Path(env["GITHUB_PRIVATE_KEY_PATH"]).read_text()
        except OSError as exc:
            raise SettingsError(
                f"GITHUB_PRIVATE_KEY_PATH: cannot read {env['GITHUB_PRIVATE_KEY_PATH']} ({exc.strerror})"
            ) from None
    if not key:
        raise SettingsError("set GITHUB_PRIVATE_KEY (PEM text) or GITHUB_PRIVATE_KEY_PATH")
    try:
        signing_key(key)
    except ValueError as exc:
        raise SettingsError(f"the App's private key is {exc}") from None
    return key


def _database_url(value: str | None) -> str | None:
    """DATABASE_URL, the platform's convention for the shared PostgreSQL database; one line when it is not one."""
    if not value:
        return None
    if not value.startswith(("postgres://", "postgresql://")):
        raise SettingsError(f"DATABASE_URL must be a postgresql:// URL, not {public_url(value)[:60]!r}")
    return value


def _whole_number(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name) or str(default)
    if not re.fullmatch(r"\s*[0-9]+\s*", text):
        raise SettingsError(f"{name} must be a whole number, not {text[:40]!r}")
    return int(text)


# -- logs -----------------------------------------------------------------------------------------

REDACTED = "[redacted]"
# Values that are credentials by their shape, wherever they occur in a line.
_SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"  # PEM keys
    r"|\bgh[opsuir]_[A-Za-z0-9_]{16,}"  # GitHub tokens
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+",  # JWTs (the App's)
    re.DOTALL | re.IGNORECASE,
)
_AUTHORIZATION = re.compile(r"\b(token|bearer)(\s+)[A-Za-z0-9._\-]{20,}", re.IGNORECASE)  # a header's value
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/\s@]+@")  # user:password@ in a URL
_SECRET_FIELDS = re.compile(
    r"token|secret|password|authorization|private_key", re.IGNORECASE
)  # `extra` names
_RECORD_FIELDS = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line, with credentials masked where they are logged: a message argument or an
    `extra` field that is a known secret (the webhook secret, the App's key) or is named like one, and
    anything shaped like a key, a token or a URL's password. Known secrets are matched as whole values,
    never searched for inside other text: a short one would otherwise mangle every line and show itself."""

    def __init__(self, secrets: tuple[str, ...] = ()):
        super().__init__()
        self.secrets = frozenset(s.strip() for s in secrets if s and s.strip())

    def redact(self, text: str) -> str:
        text = _AUTHORIZATION.sub(rf"\1\2{REDACTED}", _SECRET_SHAPES.sub(REDACTED, text))
        return _URL_CREDENTIALS.sub(REDACTED + "@", text)

    def _value(self, value: object) -> object:
        return REDACTED if isinstance(value, str) and value.strip() in self.secrets else value

    def _message(self, record: logging.LogRecord) -> str:
        args = record.args
        if isinstance(args, tuple):
            args = tuple(self._value(arg) for arg in args)
        elif isinstance(args, Mapping):
            args = {key: self._value(value) for key, value in args.items()}
        text = str(self._value(record.msg))
        return text % args if args else text

    def format(self, record: logging.LogRecord) -> str:
        entry: dict = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": self.redact(self._message(record)),
        }
        for key, value in vars(record).items():
            if key in _RECORD_FIELDS:
                continue
            if _SECRET_FIELDS.search(key):
                entry[key] = REDACTED
            elif isinstance(value, (int, float, bool)) or value is None:
                entry[key] = value
            else:
                entry[key] = self.redact(str(self._value(value)))
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


def _parse(body: bytes) -> simdjson.Object | simdjson.Array | object:
    try:
        return _parser.parse(body)
    except ValueError:
        raise BadDelivery("body is not JSON") from None
    except RuntimeError:  # the shared parser still holds a document, or this one nests too deeply
        pass
    try:
        return simdjson.Parser().parse(body)
    except ValueError:
        raise BadDelivery("body is not JSON") from None
    except RuntimeError as exc:  # DEPTH_ERROR: more than 1024 levels of objects and arrays
        reason = str(exc).partition(": ")[2] or str(exc)
        raise BadDelivery(f"body is JSON the service does not read: {reason}") from None


async def _job_requests(body: bytes, event_name: str, delivery: str) -> list[JobRequest]:
    """What the routers ask of a delivery; the parsed payload is released when this returns."""
    data = _parse(body)
    if not isinstance(data, simdjson.Object):
        raise BadDelivery("body is not a JSON object")
    try:
        requests = await handlers.job_requests(sansio.Event(data, event=event_name, delivery_id=delivery))
        for request in requests:  # an object where a number or a name belongs is in the job's payload now
            json.dumps(request.payload)
        return requests
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
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
    return _answer(
        200,
        status="degraded",
        jobs=jobs,
        github={"status": "failing", "since": since, "last_error": health.last_error},
    )


async def metrics_endpoint(request: web.Request) -> web.Response:
    metrics: Metrics = request.app[METRICS]
    for status, count in (await request.app[QUEUE].counts()).items():
        metrics.queue.labels(status).set(count)
    return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})


def create_app(
    settings: Settings,
    *,
    queue: JobQueue | None = None,
    policy: RetryPolicy | None = None,
    poll_interval: float = 1.0,
    backoff: JobBackoff | None = None,
) -> web.Application:
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
        store = None
        if queue is not None:
            app[QUEUE] = queue
        elif settings.database_url:
            app[QUEUE] = await PostgresJobQueue.open(settings.database_url)
            store = PostgresValidationStore(settings.database_url)
        else:
            app[QUEUE] = SqliteJobQueue(settings.data_dir / DB_NAME)
        async with aiohttp.ClientSession() as session:
            github = GitHubApp(
                session,
                app_id=settings.app_id,
                private_key=settings.private_key,
                base_url=settings.api_url,
                policy=policy or RetryPolicy(),
                on_response=metrics.github_call,
                health=health,
            )
            service = app[SERVICE] = Service(
                queue=app[QUEUE],
                github=github,
                data_dir=settings.data_dir,
                url_instead_of=settings.url_instead_of,
                workers=settings.workers,
                metrics=metrics,
                poll_interval=poll_interval,
                backoff=backoff or JobBackoff(),
                store=store,
            )
            if isinstance(shared := app[QUEUE], PostgresJobQueue):
                shared.on_work(service.wake)  # another instance queued a job or freed a pull request
            service.start()
            yield
            await service.stop()
        await app[QUEUE].close()

    app.cleanup_ctx.append(lifecycle)
    return app


def listen(host: str, port: int) -> socket.socket:
    """The service's socket, bound before anything else starts, so that a port in use is one line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        # the system's words, without the "(while attempting to bind on address ...)" create_server adds
        reason = (exc.strerror or str(exc)).split(" (while attempting", 1)[0]
        raise SettingsError(f"cannot listen on {host}:{port}: {reason}") from None


async def _run(app: web.Application, sock: socket.socket) -> None:
    """Serve on `sock` until SIGTERM or SIGINT, then stop the workers and close the job store."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runner = web.AppRunner(app, access_log=None)
    try:
        await runner.setup()
    except (OSError, sqlite3.Error, psycopg.Error) as exc:
        await runner.cleanup()
        where = "the database DATABASE_URL names" if app[SETTINGS].database_url else app[SETTINGS].data_dir
        raise SettingsError(f"cannot open the job store in {where}: {' '.join(str(exc).split())}") from None
    try:
        await web.SockSite(runner, sock).start()
        host, port = sock.getsockname()[:2]
        log.info(
            "service started, listening on %s:%s",
            host,
            port,
            extra={
                "host": host,
                "port": port,
                "workers": app[SETTINGS].workers,
                "api_url": app[SETTINGS].api_url,
            },
        )
        await stop.wait()
        log.info("service stopping")
    finally:
        await runner.cleanup()
    log.info("service stopped")


def serve(host: str | None = None, port: int | None = None) -> None:
    """`python -m bot serve`: refuses to start without the webhook secret and the App's credentials.

    `host` and `port` (the command line's) win over HOST and PORT; only here are those read.
    """
    env = {
        **os.environ,
        **({"HOST": host} if host else {}),
        **({"PORT": str(port)} if port is not None else {}),
    }
    try:
        settings = Settings.from_env(env)
        sock = listen(settings.host, settings.port)
    except SettingsError as exc:
        print(f"llama-bot serve: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    configure_logging(settings)
    app = create_app(settings)
    # Everything imported so far lives as long as the process: keeping it out of the collector's full
    # passes turns 40-60 ms pauses of the webhook under load into a few ms.
    gc.freeze()
    try:
        asyncio.run(_run(app, sock))
    except SettingsError as exc:
        print(f"llama-bot serve: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        sock.close()
