"""`register`: GitHub's App manifest flow from the command line. A one-page form on loopback posts the manifest
(app.yml, with the webhook URL and name given) to GitHub; GitHub sends the browser back to the loopback
server's `/redirect` with a one-time code, which `POST /app-manifests/{code}/conversions` exchanges for the
App's id, private key, webhook secret and client credentials. They go to a file only its owner can read; the
terminal gets the install link and the next command, never a secret."""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import re
import secrets
import shlex
import socket
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web

from bot.cli.console import UsageError, emit

MANIFEST = Path(__file__).resolve().parents[1] / "app.yml"  # the App's manifest, shipped in the package
DEFAULT_OUT = "llama-bot-credentials.env"
DEFAULT_API = "https://api.github.com"
EXCHANGE_TIMEOUT = 30.0  # seconds the conversion may take
SAFE_VALUE = re.compile(r"[\w.:/@+=,-]+")  # written as it is in the env file; anything else is quoted


def cmd_register(args: argparse.Namespace) -> int:
    return asyncio.run(register(args))


async def register(args: argparse.Namespace, tell: Callable[[str], None] = emit) -> int:
    """The whole flow; what goes wrong is a UsageError (one line, exit 2)."""
    out, key_path = _credential_paths(args.out)
    manifest = app_manifest(
        read_app_yml(Path(args.manifest) if args.manifest else MANIFEST), args.webhook_url, args.name
    )
    org = args.org
    if org is not None and not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})", org):
        raise UsageError(f"--org {org!r} is not a GitHub organisation name")
    web_url = (args.github_url or os.environ.get("GITHUB_URL") or "https://github.com").rstrip("/")
    api_url = (os.environ.get("GITHUB_API_URL") or DEFAULT_API).rstrip("/")
    flow = Flow(manifest, web_url, api_url, org, out, key_path)
    runner, port = await flow.start(args.port)
    try:
        tell(
            f"Open http://127.0.0.1:{port}/ in a browser signed in to GitHub as "
            f"{'an owner of ' + org if org else 'the user who will own the App'}, and create the App there."
        )
        tell(f"Waiting for GitHub to send the browser back (at most {args.timeout} s; Ctrl-C stops) ...")
        app = await _answered(flow, port, args.timeout)
    finally:
        await runner.cleanup()
    for line in _next_steps(app, out, key_path, api_url):
        tell(line)
    return 0


def _credential_paths(given: str) -> tuple[Path, Path]:
    """The credentials file and the key file beside it; neither may exist yet."""
    out = Path(given).absolute()
    key_path = out.with_suffix(".pem") if out.suffix != ".pem" else out.with_name(out.name + ".key")
    for path in (out, key_path):
        if path.exists() or path.is_symlink():
            raise UsageError(f"{path} already exists: refusing to overwrite credentials (give another --out)")
    if not out.parent.is_dir():
        raise UsageError(f"--out {given}: no directory {out.parent}")
    return out, key_path


async def _answered(flow: Flow, port: int, timeout: float) -> dict:
    """The App once GitHub sent the browser back and the code was exchanged, `timeout` seconds at most (an
    exchange under way when they end is waited for: the App exists, its credentials are worth it)."""
    try:
        return await asyncio.wait_for(asyncio.shield(flow.done), timeout)
    except TimeoutError:
        if flow.exchanging:
            return await flow.done
        raise UsageError(
            f"GitHub did not send the browser back to http://127.0.0.1:{port}/redirect within "
            f"{timeout} s: nothing was written; run register again (--timeout SECONDS waits longer)"
        ) from None


class Flow:
    """The loopback server's state: the form, the `state` it expects back, the App once exchanged."""

    def __init__(self, manifest: dict, web_url: str, api_url: str, org: str | None, out: Path, key: Path):
        self.manifest, self.web_url, self.api_url, self.org = manifest, web_url, api_url, org
        self.out, self.key = out, key
        self.state = secrets.token_urlsafe(24)
        self.done: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self.exchanging = False

    async def start(self, port: int) -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_get("/", self.form)
        app.router.add_get("/redirect", self.redirect)
        try:
            sock = socket.create_server(("127.0.0.1", port))
        except OSError as exc:
            raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        bound = sock.getsockname()[1]  # with --port 0, the port the system chose
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=5.0)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self.manifest["redirect_url"] = f"http://127.0.0.1:{bound}/redirect"
        return runner, bound

    async def form(self, request: web.Request) -> web.Response:
        """The page whose form posts the manifest to GitHub; `?submit=1` submits it on load."""
        where = f"organizations/{self.org}/settings" if self.org else "settings"
        action = f"{self.web_url}/{where}/apps/new?{urllib.parse.urlencode({'state': self.state})}"
        onload = ' onload="document.forms[0].submit()"' if request.query.get("submit") == "1" else ""
        name, hook = self.manifest["name"], self.manifest["hook_attributes"]["url"]
        owner = f"the organisation {self.org}" if self.org else "your GitHub user"
        return _page(
            f"Register {name}",
            f"<p>This creates the GitHub App <b>{html.escape(name)}</b> for {html.escape(owner)}, "
            f"its webhook at <code>{html.escape(hook)}</code>. GitHub asks you to confirm, then sends you "
            "back here.</p>\n"
            f'<form action="{html.escape(action)}" method="post">\n'
            f'<input type="hidden" name="manifest" value="{html.escape(json.dumps(self.manifest))}">\n'
            '<button type="submit">Create the App on GitHub</button>\n</form>',
            onload,
        )

    async def redirect(self, request: web.Request) -> web.StreamResponse:
        """GitHub's redirect with the one-time code: exchanged, the credentials written, then the answer."""
        if not secrets.compare_digest(request.query.get("state", ""), self.state):
            return _page("Wrong state", "<p>This is not the answer to this register's form.</p>", status=400)
        code = request.query.get("code", "")
        if not code:
            return _page(
                "No code", "<p>GitHub sent no code: create the App from the form again.</p>", status=400
            )
        if self.exchanging:
            return _page("Already done", "<p>This register has taken its code already.</p>", status=409)
        self.exchanging = True
        try:
            app = await exchange(self.api_url, code)
            write_credentials(self.out, self.key, app, self.api_url)
        except UsageError as exc:
            response = _page("Not registered", f"<p>{html.escape(str(exc))}</p>", status=502)
            await _send(request, response)
            self.done.set_exception(exc)
            return response
        response = _page(
            "Done",
            f"<p>The App <b>{html.escape(app['name'])}</b> is registered and its credentials are in "
            f"<code>{html.escape(str(self.out))}</code>. You can close this page; the terminal says what "
            "comes next.</p>",
        )
        await _send(request, response)
        self.done.set_result(app)
        return response


async def exchange(api_url: str, code: str) -> dict:
    """`POST /app-manifests/{code}/conversions` (no authentication): the App GitHub created, with its secrets."""
    url = f"{api_url}/app-manifests/{urllib.parse.quote(code, safe='')}/conversions"
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=EXCHANGE_TIMEOUT)) as session,
            session.post(url, headers=headers) as resp,
        ):
            text = await resp.text(errors="replace")
            status = resp.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UsageError(f"cannot reach {api_url} to exchange the code: {type(exc).__name__} {exc}") from None
    try:
        app = json.loads(text)
    except ValueError:
        app = None
    if not 200 <= status < 300:
        message = app.get("message") if isinstance(app, dict) else None
        raise UsageError(
            f"GitHub answered {status} to the code's exchange ({' '.join(str(message or text).split())[:200]}): "
            "nothing was written; run register again"
        )
    texts = ("slug", "name", "html_url", "pem", "client_id", "client_secret")
    if (
        not isinstance(app, dict)
        or not isinstance(app.get("id"), int)
        or any(not isinstance(app.get(key), str) for key in texts)
        or not isinstance(app.get("webhook_secret", ""), str | None)
    ):
        raise UsageError(
            f"GitHub's answer to the code's exchange (HTTP {status}) is not the App it made: nothing was written"
        )
    return app


def write_credentials(out: Path, key_path: Path, app: dict, api_url: str) -> None:
    """The private key to `key_path`, the rest to `out` as an environment file, both created for the owner alone
    (0600), neither overwriting anything."""
    _create(key_path, app["pem"] if app["pem"].endswith("\n") else app["pem"] + "\n")
    lines = [
        f"# llama-bot's GitHub App {app['slug']}: {app['html_url']}",
        f"# install it: {app['html_url']}/installations/new",
        f"GITHUB_APP_ID={app['id']}",
        f"GITHUB_PRIVATE_KEY_PATH={_value(str(key_path))}",
    ]
    if app.get("webhook_secret"):
        lines.append(f"GITHUB_WEBHOOK_SECRET={_value(app['webhook_secret'])}")
    else:
        lines.append("# GITHUB_WEBHOOK_SECRET=  GitHub gave none: set one on the App's page and here")
    lines += [
        f"GITHUB_CLIENT_ID={_value(app['client_id'])}",
        f"GITHUB_CLIENT_SECRET={_value(app['client_secret'])}",
    ]
    if api_url != DEFAULT_API:
        lines.append(f"GITHUB_API_URL={_value(api_url)}")
    _create(out, "\n".join(lines) + "\n")


def _create(path: Path, text: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise UsageError(f"cannot create {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w") as file:
        file.write(text)


def _value(text: str) -> str:
    """A value for the env file that a shell's `.`, systemd's EnvironmentFile and `docker --env-file` read
    alike (GitHub's ids and secrets are all such); anything else shell-quoted."""
    if "\n" in text:
        raise UsageError("GitHub's answer holds a line break in a value: nothing more written")
    return text if SAFE_VALUE.fullmatch(text) else shlex.quote(text)


def _next_steps(app: dict, out: Path, key_path: Path, api_url: str) -> list[str]:
    return [
        f"Registered the GitHub App {app['slug']} (id {app['id']}): {app['html_url']}",
        f"Wrote {out} and the private key {key_path} (both readable by you alone).",
        f"Install it on the repository: {app['html_url']}/installations/new",
        "Then start the service with those credentials:",
        f"  set -a && . {shlex.quote(str(out))} && set +a && {shlex.quote(sys.executable)} -m bot serve",
    ]


async def _send(request: web.Request, response: web.Response) -> None:
    """Answer the browser before the command ends and the loopback server with it."""
    await response.prepare(request)
    await response.write_eof()


def _page(title: str, body: str, onload: str = "", status: int = 200) -> web.Response:
    text = (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"</head>\n<body{onload}>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )
    return web.Response(text=text, status=status, content_type="text/html")


def app_manifest(base: dict, webhook_url: str, name: str | None) -> dict:
    """The manifest GitHub gets: app.yml's, with the webhook URL and the name (redirect_url is the server's)."""
    parsed = urllib.parse.urlsplit(webhook_url)
    if parsed.scheme not in ("https", "http") or not parsed.netloc:
        raise UsageError(f"--webhook-url {webhook_url!r} is not an http(s) URL")
    manifest = {**base, "hook_attributes": {**base.get("hook_attributes", {}), "url": webhook_url}}
    if name:
        manifest["name"] = name
    if not manifest.get("name"):
        raise UsageError("the App needs a name: give --name NAME")
    return manifest


def read_app_yml(path: Path) -> dict[str, Any]:
    """The manifest file as data; a file that is not a YAML mapping is one line."""
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UsageError(f"cannot read the manifest {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not YAML ({' '.join(str(exc).split())[:200]})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a YAML mapping of the manifest's keys")
    return data
