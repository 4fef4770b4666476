"""The ways docs/deploy.md runs the service: the systemd unit in deploy/ is one systemd reads, with the state
directory, the environment file, the reload signal and the hardening the page names; the Dockerfile runs it as
a user of its own, with the data directory a volume and a health check on /healthz that really answers; and,
where a docker daemon is at hand (and LLAMA_BOT_DOCKER_TEST=0 does not turn it off; a build takes minutes),
the image builds, runs, is healthy and stops cleanly; without one, or without the base image, it says so."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.request
import uuid

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.cli.parser import build_parser
from tests.conftest import ROOT

UNIT = ROOT / "deploy" / "llama-bot.service"
DOCKERFILE = ROOT / "Dockerfile"
SHIPPED_PYTHON = "/opt/llama-bot/venv/bin/python"


def _unit() -> dict[tuple[str, str], list[str]]:
    """(section, key) -> the values in order, as systemd reads a unit (a key may repeat)."""
    found: dict[tuple[str, str], list[str]] = {}
    section = ""
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if header := re.fullmatch(r"\[(\w+)\]", line):
            section = header[1]
            continue
        key, sep, value = line.partition("=")
        assert sep and section, f"not a unit line: {line!r}"
        found.setdefault((section, key.strip()), []).append(value.strip())
    return found


def test_the_unit_runs_the_service_as_its_own_user_in_its_state_directory():
    unit = _unit()

    def service(key: str) -> list[str]:
        return unit.get(("Service", key), [])

    assert service("User") == ["llama-bot"] and service("Group") == ["llama-bot"]
    assert service("EnvironmentFile") == ["/etc/llama-bot/env"]
    assert service("StateDirectory") == ["llama-bot"]
    assert "LLAMA_BOT_DATA_DIR=/var/lib/llama-bot" in service("Environment")
    assert service("ReadWritePaths") == ["/var/lib/llama-bot"]
    assert service("ExecStart") == [f"{SHIPPED_PYTHON} -m bot serve"]
    assert service("ExecReload") == ["/bin/kill -HUP $MAINPID"]  # the service reads its key again on SIGHUP
    assert service("KillMode") == ["mixed"]  # SIGTERM to the service, which stops its children itself
    assert int(service("TimeoutStopSec")[0]) > 10  # the service gives its workers 10 s
    assert service("Restart") == ["on-failure"]
    hardening = {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
    }
    assert {key: service(key) for key in hardening} == {key: [value] for key, value in hardening.items()}
    assert unit[("Install", "WantedBy")] == ["multi-user.target"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze on PATH")
def test_systemd_reads_the_unit_without_a_warning(tmp_path):
    """`systemd-analyze verify` also checks that the programs exist: ExecStart's venv is pointed at this
    Python, the rest is the unit as shipped."""
    text = UNIT.read_text()
    assert SHIPPED_PYTHON in text
    unit = tmp_path / "llama-bot.service"
    unit.write_text(text.replace(SHIPPED_PYTHON, sys.executable))
    result = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=120, check=False
    )
    said = [line for line in (result.stdout + result.stderr).splitlines() if "llama-bot.service" in line]
    assert result.returncode == 0 and said == []


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined, comments left out."""
    lines = [line for line in DOCKERFILE.read_text().splitlines() if not line.lstrip().startswith("#")]
    text = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [
        (found[1].upper(), found[2].strip())
        for line in text.splitlines()
        if (found := re.match(r"\s*(\w+)\s+(.*)", line))
    ]


def _healthcheck_command() -> list[str]:
    (check,) = [args for name, args in _dockerfile() if name == "HEALTHCHECK"]
    return json.loads(check.split(" CMD ", 1)[1])


def test_the_image_runs_as_a_user_of_its_own_with_its_data_in_a_volume():
    steps = _dockerfile()

    def all_of(name: str) -> list[str]:
        return [args for step, args in steps if step == name]

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert all_of("FROM") == [f"python:{requires.removeprefix('>=')}-slim"]
    run = " ".join(all_of("RUN"))
    assert re.search(r"apt-get install -y --no-install-recommends [^&]*\bgit\b", run)
    assert "pip install ." in run
    user = all_of("USER")[-1]
    assert user not in ("root", "0") and re.search(rf"useradd [^&]* {user} ", run)
    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(all_of("ENV"))))
    assert json.loads(all_of("VOLUME")[0]) == [env["LLAMA_BOT_DATA_DIR"]]
    assert f"chown {user}:{user} {env['LLAMA_BOT_DATA_DIR']}" in run
    assert all_of("EXPOSE") == ["8080"] and env["PORT"] == "8080"
    check = all_of("HEALTHCHECK")[0]
    assert "/healthz" in check and "urllib.request" in check and not re.search(r"\b(curl|wget)\b", check)
    assert json.loads(all_of("CMD")[0]) == ["python", "-m", "bot", "serve"]
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".git", "var", "**/*.pem", "**/llama-bot-credentials*"} <= set(ignored)


async def _health(port: int) -> int:
    process = await asyncio.create_subprocess_exec(
        *_healthcheck_command(),
        env={**os.environ, "PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(process.wait(), 30)


async def test_the_images_health_check_asks_the_service(bot):
    """The HEALTHCHECK's own command, run against a service on loopback: 0; against a closed port: not 0."""
    assert await _health(bot.server.port) == 0
    await bot.close()
    assert await _health(bot.server.port) != 0


# -- docs/deploy.md: only what the code does ---------------------------------------------------------------

DEPLOY_PAGE = ROOT / "docs" / "deploy.md"


def test_every_command_on_the_deploy_page_parses():
    """Each `python -m bot ...` on the page (up to a shell operator or comment) is one the parser takes; a
    command only named needs to exist."""
    text = DEPLOY_PAGE.read_text().replace("\\\n", " ")
    commands = [m.strip() for m in re.findall(r"python -m bot ([^`\n|&#)]*)", text)]
    assert {c.split()[0] for c in commands} >= {"register", "serve", "jobs"}
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    refused = []
    for command in commands:
        if command in sub.choices:  # a command named in the text, not one to run
            continue
        try:
            parser.parse_args(shlex.split(command))
        except SystemExit:
            refused.append(command)
    assert refused == []


def test_every_variable_on_the_deploy_page_is_one_the_code_reads():
    """The settings the page names are read by the service (bot/service/settings.py and the modules it
    uses) or by `register`, which also writes the client credentials."""
    read = set()
    for source in (ROOT / "bot").rglob("*.py"):
        read |= set(re.findall(r"[\"']([A-Z][A-Z0-9_]*)[\"']", source.read_text()))
    written = set(re.findall(r"\b([A-Z][A-Z0-9_]+)=", (ROOT / "bot" / "cli" / "register.py").read_text()))
    named = set(
        re.findall(r"\b((?:GITHUB|LLAMA_BOT|DATABASE|XDG)_[A-Z0-9_]+|HOST|PORT)\b", DEPLOY_PAGE.read_text())
    )
    assert "GITHUB_WEBHOOK_SECRET_PREVIOUS" in named and "DATABASE_URL" in named
    assert sorted(named - read - written) == []


# -- the image itself, where docker can build it ------------------------------------------------------------


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)


def _docker_skip_reason() -> str | None:
    if os.environ.get("LLAMA_BOT_DOCKER_TEST") == "0":
        return "LLAMA_BOT_DOCKER_TEST=0"
    if shutil.which("docker") is None:
        return "no docker on PATH"
    try:
        info = _docker("info", timeout=30)
    except subprocess.TimeoutExpired:
        return "docker info did not answer in 30 s"
    return None if info.returncode == 0 else f"no docker daemon: {' '.join(info.stderr.split())[:200]}"


def _key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def test_the_image_builds_runs_healthy_and_stops_cleanly(tmp_path):
    """As docs/deploy.md runs it: the data in a volume, the key a file in a directory mounted read-only (what
    SIGHUP reads again), the other settings in the environment."""
    reason = _docker_skip_reason()
    if reason:
        pytest.skip(reason)
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o755)
    (keys / "app.pem").write_text(_key())
    (keys / "app.pem").chmod(0o644)  # a throwaway key the container's user (10001) reads
    tag, name = f"llama-bot-test:{uuid.uuid4().hex[:12]}", f"llama-bot-test-{uuid.uuid4().hex[:12]}"
    pulled = _docker("pull", "python:3.11-slim", timeout=300)
    if pulled.returncode != 0:
        pytest.skip(f"the base image cannot be pulled here: {' '.join(pulled.stderr.split())[:200]}")
    built = _docker("build", "--tag", tag, str(ROOT), timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    try:
        settings = {
            "GITHUB_APP_ID": "1",
            "GITHUB_PRIVATE_KEY_PATH": "/run/llama-bot/app.pem",
            "GITHUB_WEBHOOK_SECRET": "a dummy secret, long enough",
            "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing answers: /healthz says degraded, still 200
        }
        started = _docker(
            *("run", "--detach", "--name", name, "--publish", "127.0.0.1::8080", "--health-interval", "2s"),
            *("--volume", f"{keys}:/run/llama-bot:ro"),
            *(f"--env={key}={value}" for key, value in settings.items()),
            tag,
        )
        assert started.returncode == 0, started.stderr
        deadline = time.monotonic() + 120
        while (
            health := _docker("inspect", "--format", "{{.State.Health.Status}}", name).stdout.strip()
        ) != "healthy":
            assert time.monotonic() < deadline, f"{health}: {_docker('logs', name).stdout[-2000:]}"
            time.sleep(1)
        address = _docker("port", name, "8080/tcp").stdout.split()[0]
        with urllib.request.urlopen(f"http://{address}/healthz", timeout=10) as answer:
            assert answer.status == 200 and "jobs" in json.loads(answer.read())
        assert _docker("exec", name, "id", "-u").stdout.strip() not in ("", "0")
        assert _docker("exec", name, "test", "-f", "/data/jobs.sqlite3").returncode == 0
        assert _docker("kill", "--signal", "HUP", name).returncode == 0
        time.sleep(2)
        assert "private key reloaded" in _docker("logs", name).stdout
        assert _docker("stop", "--time", "30", name, timeout=60).returncode == 0
        assert _docker("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip() == "0"
        assert "service stopped" in _docker("logs", name).stdout
    finally:
        _docker("rm", "--force", name)
        _docker("rmi", "--force", tag, timeout=120)
