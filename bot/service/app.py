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
import signal
import socket
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Mapping
from hashlib import sha256
from pathlib import Path

import aiohttp
import psycopg
import simdjson
from aiohttp import web
from gidgethub import sansio
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import handlers
from bot.child.environment import forget_secrets
from bot.gh.github import GitHubApp
from bot.gh.retries import GitHubHealth, RetryPolicy
from bot.service.logs import add_secret, configure_logging
from bot.service.settings import OLD_DATA_DIR, Settings, SettingsError, private_key
from bot.stores.jobs import JobQueue, JobRequest
from bot.stores.pgstore import PostgresJobQueue
from bot.stores.sqlitejobs import DB_NAME, SqliteJobQueue
from bot.stores.validationstore import PostgresValidationStore
from bot.worker.metrics import Metrics
from bot.worker.runner import JobBackoff, Service

log = logging.getLogger("bot.app")

MAX_BODY = 25 * 1024 * 1024  # GitHub never delivers more
SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
METRICS = web.AppKey("metrics", Metrics)
QUEUE = web.AppKey("queue", JobQueue)
SERVICE = web.AppKey("service", Service)
HEALTH = web.AppKey("health", GitHubHealth)


# -- the webhook ----------------------------------------------------------------------------------


# Events counted by their own name: those the routers act on, and those GitHub sends every App whatever it
# subscribes to. The event header is not covered by the signature, so any other name is counted as `other`
# and the metric's label values stay this short list whatever is sent.
APP_EVENTS = frozenset(
    {"ping", "installation", "installation_repositories", "installation_target", "github_app_authorization"}
)
COUNTED_EVENTS = handlers.EVENTS | APP_EVENTS
UNVERIFIED = "unverified"  # the event label and log field of a delivery whose signature was not verified
MAX_DELIVERY_ID = 64  # GitHub's delivery ids are GUIDs (36 characters)


def signature_valid(body: bytes, signature: str | None, secret: str) -> bool:
    """`X-Hub-Signature-256` check on the raw bytes, in constant time. A header that is not ASCII (aiohttp
    gives bytes that are not UTF-8 as surrogates) is no signature."""
    if not signature or not signature.isascii() or not signature.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, sha256).hexdigest()
    return hmac.compare_digest(signature, expected)


def _secret_used(body: bytes, signature: str | None, settings: Settings) -> str | None:
    """Which webhook secret signed the delivery: "current", "previous" (during a rotation) or None."""
    if signature_valid(body, signature, settings.webhook_secret):
        return "current"
    previous = settings.previous_webhook_secret
    return "previous" if previous and signature_valid(body, signature, previous) else None


def event_label(event_name: str) -> str:
    """A signed delivery's `event` label and log field: its name when the service counts it, else `other`."""
    return event_name if event_name in COUNTED_EVENTS else "other"


def delivery_key(delivery_id: str, body: bytes) -> str:
    """What a signed delivery is stored and logged under: GitHub's id; the body's sha256 when it sends none,
    so a redelivered body still counts once; the id's own sha256 when it is not short ASCII text (headers
    are not signed), which deduplicates the same way in a bounded, storable form."""
    if not delivery_id:
        return "sha256:" + sha256(body).hexdigest()
    if len(delivery_id) > MAX_DELIVERY_ID or not delivery_id.isascii():
        return "sha256:" + sha256(delivery_id.encode(errors="surrogateescape")).hexdigest()
    return delivery_id


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


async def _body(request: web.Request) -> bytes | None:
    """The delivery's raw bytes; None when there are more than GitHub ever sends."""
    if (request.content_length or 0) > MAX_BODY:
        return None
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        return None


async def webhook(request: web.Request) -> web.Response:
    """Until the signature is verified nothing of the delivery reaches a metric label, a log field or the
    store: the metric and the log line call it `unverified`."""
    app = request.app
    metrics: Metrics = app[METRICS]
    context = {"event": UNVERIFIED}

    def outcome(name: str, code: int, **data) -> web.Response:
        metrics.deliveries.labels(context["event"], name).inc()
        log.info("webhook %s", name, extra={**context, "status": code})
        return _answer(code, **data)

    body = await _body(request)
    if body is None:
        return outcome("too_large", 413, error="body larger than 25 MiB")
    signed_with = _secret_used(body, request.headers.get("X-Hub-Signature-256"), app[SETTINGS])
    if signed_with is None:
        return outcome("unauthorized", 401, error="missing or wrong X-Hub-Signature-256")
    if signed_with == "previous":  # the operator drops GITHUB_WEBHOOK_SECRET_PREVIOUS once these stop
        context["signed_with"] = "GITHUB_WEBHOOK_SECRET_PREVIOUS"
    event_name = request.headers.get("X-GitHub-Event", "")
    delivery = delivery_key(request.headers.get("X-GitHub-Delivery", ""), body)
    context.update(event=event_label(event_name), delivery_id=delivery)
    if not event_name:
        return outcome("bad_request", 400, error="missing X-GitHub-Event")
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
                limits=settings.analysis_limits,
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


def name_old_state(data_dir: Path) -> None:
    """A `./var` an earlier version kept its job store in, not the data directory now: named, not read."""
    if (OLD_DATA_DIR / DB_NAME).exists() and OLD_DATA_DIR.resolve() != data_dir.resolve():
        log.warning(
            "found the state of an earlier version in %s, which this one does not read (its data directory is "
            "%s): set LLAMA_BOT_DATA_DIR=%s to keep using it, or move it there",
            OLD_DATA_DIR.resolve(),
            data_dir,
            OLD_DATA_DIR.resolve(),
            extra={"old_data_dir": str(OLD_DATA_DIR.resolve()), "data_dir": str(data_dir)},
        )


def reload_private_key(app: web.Application, env: Mapping[str, str]) -> bool:
    """SIGHUP: the App's private key read again from the environment (a replaced GITHUB_PRIVATE_KEY_PATH
    file), used for the next tokens; one that cannot sign leaves the running key in place, and the log says
    why. Tokens already issued stay valid until they expire."""
    try:
        key = private_key(env)
    except SettingsError as exc:
        log.error("private key not reloaded: %s", exc)
        return False
    app[SERVICE].github.use_private_key(key)
    add_secret(key)
    log.info("private key reloaded")
    return True


async def _run(app: web.Application, sock: socket.socket) -> None:
    """Serve on `sock` until SIGTERM or SIGINT, then stop the workers and close the job store."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGHUP, reload_private_key, app, os.environ)
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
        name_old_state(app[SETTINGS].data_dir)
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
        forget_secrets()  # read once: nothing the service starts from here on inherits them
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
