"""`python -m bot register`: GitHub's App manifest flow end to end against the fake GitHub on loopback. The
form page is read as a browser reads it (its action and fields parsed from the HTML) and its POST replayed;
the fake's github.com page records the manifest and sends the browser back with a one-time code, which the
command exchanges at `POST /app-manifests/{code}/conversions` (validated against the OpenAPI cut). With a
Chromium on PATH, a real headless browser submits the form too."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import aiohttp
import pytest

from bot.cli.console import UsageError
from bot.cli.parser import build_parser
from bot.cli.register import read_app_yml, register
from bot.service.settings import Settings
from tests.conftest import ROOT
from tests.fakegithub import FakeGitHub

WEBHOOK = "https://llama-bot.example.org/webhook"
OPEN = re.compile(r"Open (http://127\.0\.0\.1:\d+/) ")


class Form(HTMLParser):
    """The first form of a page, as a browser submits it: its method, action and named inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.method, self.action, self.fields = "", "", {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        if tag == "form" and not self.action:
            self.method, self.action = attr.get("method", "get").upper(), attr["action"]
        elif tag == "input" and "name" in attr:
            self.fields[attr["name"]] = attr.get("value", "")


def _form(page: str) -> Form:
    form = Form()
    form.feed(page)
    return form


async def _submit(session: aiohttp.ClientSession, page_url: str) -> tuple[Form, str]:
    """What a browser does with the page: GET it, POST its form to GitHub; the redirect's Location."""
    async with session.get(page_url) as resp:
        assert resp.status == 200 and resp.content_type == "text/html"
        form = _form(await resp.text())
    assert form.method == "POST"
    async with session.post(form.action, data=form.fields, allow_redirects=False) as resp:
        assert resp.status == 302, await resp.text()
        return form, resp.headers["Location"]


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url, allow_redirects=False) as resp:
        return resp.status, await resp.text()


def _with_state(url: str, state: str | None) -> str:
    parts = urllib.parse.urlsplit(url)
    query = {k: v for k, v in urllib.parse.parse_qsl(parts.query) if k != "state"}
    if state is not None:
        query["state"] = state
    return parts._replace(query=urllib.parse.urlencode(query)).geturl()


def _env_file(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _app_yml() -> tuple[dict, list]:
    """app.yml's permissions and events, read as tests/test_app_manifest.py reads them (a comment after
    an event too)."""
    text = (ROOT / "bot" / "app.yml").read_text()
    permissions = dict(re.findall(r"^  (\w+): (read|write)\b", text, re.MULTILINE))
    return permissions, re.findall(r"^  - (\w+)(?:\s+#.*)?$", text, re.MULTILINE)


def _conversion_errors(fake: FakeGitHub, app: dict) -> list[str]:
    """The App the fake answered, checked against the cut's whole 201 schema (not only required fields)."""
    op = fake.spec.doc["paths"]["/app-manifests/{code}/conversions"]["post"]
    schema = op["responses"]["201"]["content"]["application/json"]["schema"]
    return fake.spec.errors(schema, app, "response")


def _check_credentials(fake: FakeGitHub, out: Path, key: Path) -> dict[str, str]:
    (app,) = fake.apps_created
    assert _conversion_errors(fake, app) == []
    assert _mode(out) == 0o600 and _mode(key) == 0o600
    env = _env_file(out)
    assert env == {
        "GITHUB_APP_ID": str(app["id"]),
        "GITHUB_PRIVATE_KEY_PATH": str(key),
        "GITHUB_WEBHOOK_SECRET": app["webhook_secret"],
        "GITHUB_CLIENT_ID": app["client_id"],
        "GITHUB_CLIENT_SECRET": app["client_secret"],
        "GITHUB_API_URL": fake.url,
    }
    assert key.read_text() == app["pem"]
    assert f"# install it: {app['html_url']}/installations/new" in out.read_text()
    settings = Settings.from_env(env)  # what `serve` reads from it starts the service
    assert (settings.app_id, settings.webhook_secret) == (str(app["id"]), app["webhook_secret"])
    return env


def _secrets(fake: FakeGitHub) -> list[str]:
    (app,) = fake.apps_created
    return [app["webhook_secret"], app["client_secret"], "PRIVATE KEY", app["pem"].splitlines()[1]]


# -- as an operator runs it: `python -m bot register` -------------------------------------------------------


async def _spawn(fake: FakeGitHub, cwd: Path, *args: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "LLAMA_BOT_"))}
    env.update(GITHUB_URL=fake.url, GITHUB_API_URL=fake.url, PYTHONPATH=str(ROOT))
    return await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", "register", "--webhook-url", WEBHOOK, *args),
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _page_url(process: asyncio.subprocess.Process) -> tuple[str, list[str]]:
    """The loopback URL the command says to open, and the lines it printed up to it."""
    assert process.stdout is not None
    lines: list[str] = []
    while not (found := OPEN.search(lines[-1] if lines else "")):
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        assert line, f"register ended before its URL: {lines}"
        lines.append(line.decode())
    return found[1], lines


async def _finished(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_register_writes_the_apps_credentials_for_its_owner_alone(fake_github, tmp_path):
    process = await _spawn(fake_github, tmp_path)  # default --out, in the current directory
    url, printed = await _page_url(process)
    async with aiohttp.ClientSession() as session:
        form, location = await _submit(session, url)
        state = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(form.action).query))["state"]
        assert form.action == f"{fake_github.url}/settings/apps/new?state={state}"
        assert location.startswith(f"{url}redirect?code=")
        for wrong in ("not-the-state", "", None):  # refused, and the command keeps waiting
            assert (await _get(session, _with_state(location, wrong)))[0] == 400
        assert fake_github.manifest_codes  # the code was not spent on them
        status, page = await _get(session, location)
        assert status == 200 and "Done" in page
    code, out, err = await _finished(process)
    assert code == 0, err

    out_file, key = tmp_path / "llama-bot-credentials.env", tmp_path / "llama-bot-credentials.pem"
    _check_credentials(fake_github, out_file, key)
    (app,) = fake_github.apps_created
    terminal = "".join(printed) + out + err
    assert f"{app['html_url']}/installations/new" in terminal
    assert f"set -a && . {out_file} && set +a && {shlex.quote(sys.executable)} -m bot serve" in terminal
    assert not [secret for secret in _secrets(fake_github) if secret in terminal]

    (received,) = fake_github.manifests
    manifest = received["manifest"]
    permissions, events = _app_yml()
    assert received["org"] is None and received["state"] == state
    assert manifest["hook_attributes"] == {"url": WEBHOOK, "active": True}
    assert manifest["name"] == "llama-bot"  # app.yml's
    assert manifest["redirect_url"] == f"{url}redirect"
    assert manifest["default_permissions"] == permissions and manifest["default_events"] == events
    assert manifest["public"] is False and manifest["url"] == "https://github.com/ollama/ollama"
    assert app["permissions"] == permissions and app["events"] == events


def test_an_existing_credentials_file_is_never_overwritten(tmp_path):
    out = tmp_path / "creds.env"
    out.write_text("GITHUB_APP_ID=1\n")
    for existing in (out, tmp_path / "creds.pem"):
        existing.write_text("kept\n")
        result = subprocess.run(
            [sys.executable, "-m", "bot", "register", "--webhook-url", WEBHOOK, "--out", str(out)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"llama-bot: {existing} already exists: refusing to overwrite credentials (give another --out)"
        ]
        assert existing.read_text() == "kept\n" and result.stdout == ""
        if existing == out:
            out.unlink()


@pytest.mark.parametrize(
    "status, body, said",
    [
        (
            404,
            {"message": "Not Found", "documentation_url": "x"},
            "GitHub answered 404 to the code's exchange",
        ),
        (
            422,
            {"message": "Validation Failed"},
            "GitHub answered 422 to the code's exchange (Validation Failed)",
        ),
        (201, "<html>a proxy's page</html>", "(HTTP 201) is not the App it made"),
        (
            502,
            "<html>\nBad gateway\n</html>",
            "GitHub answered 502 to the code's exchange (<html> Bad gateway",
        ),
    ],
)
async def test_a_github_error_is_one_line_and_exit_2(fake_github, tmp_path, status, body, said):
    fake_github.fail("POST", r"^/app-manifests/.+/conversions$", status=status, body=body)
    process = await _spawn(fake_github, tmp_path, "--out", "creds.env")
    url, _ = await _page_url(process)
    async with aiohttp.ClientSession() as session:
        _, location = await _submit(session, url)
        status_seen, page = await _get(session, location)
    assert status_seen == 502 and "Not registered" in page
    code, out, err = await _finished(process)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("llama-bot: ") and said in line and "nothing was written" in line
    assert "Traceback" not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- in process: the organisation's form, the state, the page's escaping, the timeout -----------------------


def _args(tmp_path: Path, fake: FakeGitHub, *extra: str):
    return build_parser().parse_args(
        [
            "register",
            "--webhook-url",
            WEBHOOK,
            "--github-url",
            fake.url,
            "--out",
            str(tmp_path / "c.env"),
            *extra,
        ]
    )


async def _started(args, lines: list[str]) -> tuple[asyncio.Task, str]:
    task = asyncio.create_task(register(args, lines.append))
    for _ in range(200):
        if found := next((OPEN.search(line) for line in lines if OPEN.search(line)), None):
            return task, found[1]
        if task.done():
            await task
        await asyncio.sleep(0.02)
    raise AssertionError(f"register printed no URL: {lines}")


async def test_an_organisations_app_and_a_wrong_state_refused(fake_github, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    name = """llama "bot" <b>ops</b> & 'co'"""
    lines: list[str] = []
    task, url = await _started(_args(tmp_path, fake_github, "--org", "acme", "--name", name), lines)
    async with aiohttp.ClientSession() as session:
        page = (await _get(session, url))[1]
        assert "<b>ops</b>" not in page  # the name is data on the page, not markup
        form = _form(page)
        assert form.action.startswith(f"{fake_github.url}/organizations/acme/settings/apps/new?state=")
        assert json.loads(form.fields["manifest"])["name"] == name
        _, location = await _submit(session, url)
        assert (await _get(session, _with_state(location, "forged")))[0] == 400
        assert not task.done() and not (tmp_path / "c.env").exists()
        assert (await _get(session, location))[0] == 200
    assert await asyncio.wait_for(task, 30) == 0
    assert fake_github.manifest_codes == {}  # the code is spent
    _check_credentials(fake_github, tmp_path / "c.env", tmp_path / "c.pem")
    (received,) = fake_github.manifests
    assert received["org"] == "acme" and received["manifest"]["name"] == name
    (app,) = fake_github.apps_created
    assert app["owner"]["login"] == "acme" and app["owner"]["type"] == "Organization"
    assert app["slug"] == "llama-bot-b-ops-b-co"
    assert any(f"{app['html_url']}/installations/new" in line for line in lines)


async def test_no_answer_from_github_within_the_timeout_ends_it(fake_github, tmp_path):
    lines: list[str] = []
    task, url = await _started(_args(tmp_path, fake_github, "--timeout", "1"), lines)
    with pytest.raises(
        UsageError, match=r"did not send the browser back to .* within 1 s: nothing was written"
    ):
        await asyncio.wait_for(task, 10)
    with pytest.raises(aiohttp.ClientError):  # the loopback server is gone with it
        async with aiohttp.ClientSession() as session:
            await _get(session, url)
    assert list(tmp_path.iterdir()) == []


def test_the_shipped_manifest_is_read_whole_and_a_broken_one_is_one_line(tmp_path):
    manifest = read_app_yml(ROOT / "bot" / "app.yml")
    permissions, events = _app_yml()
    assert manifest["default_permissions"] == permissions and manifest["default_events"] == events
    assert manifest["hook_attributes"] == {"url": "https://llama-bot.example.com/webhook", "active": True}
    assert manifest["public"] is False and manifest["name"] == "llama-bot"
    assert manifest["description"].startswith("Checks and regenerates Ollama's carried llama.cpp and MLX")
    assert "\n" not in manifest["description"] and manifest["description"].endswith("up to date.")
    bad = tmp_path / "app.yml"
    bad.write_text("name: x\nhook_attributes: [\n")
    with pytest.raises(UsageError, match=r"app.yml: not YAML \(while parsing"):
        read_app_yml(bad)
    bad.write_text("- a list\n")
    with pytest.raises(UsageError, match=r"app.yml: not a YAML mapping"):
        read_app_yml(bad)


# -- a real browser, where one is installed -----------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium or chromium-browser on PATH (apt install chromium)")
async def test_a_headless_chromium_registers_the_app(fake_github, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    lines: list[str] = []
    task, url = await _started(_args(tmp_path, fake_github), lines)
    browser = await asyncio.create_subprocess_exec(
        *(CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"),
        *(f"--user-data-dir={tmp_path / 'chromium'}", f"{url}?submit=1"),  # the page submits its form on load
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert await asyncio.wait_for(task, 60) == 0
    finally:
        browser.terminate()
        await browser.wait()
    _check_credentials(fake_github, tmp_path / "c.env", tmp_path / "c.pem")
    assert fake_github.manifests[0]["manifest"]["hook_attributes"]["url"] == WEBHOOK
