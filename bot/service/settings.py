"""The service's settings, read once from its environment: one line says what is missing or wrong."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.child.sandbox import DEFAULT_LIMITS, Limits
from bot.child.sandbox import MIN_MEMORY_MB as MIN_ANALYSIS_MEMORY_MB
from bot.gh.github import signing_key
from bot.model import AnalysisError
from bot.repos.gitcli import public_url
from bot.repos.mirrors import parse_url_rewrites

MIN_SECRET = 16  # characters a webhook secret needs: a shorter one is within reach of guessing
OLD_DATA_DIR = Path("./var")  # where versions before the XDG default kept their state


def data_dir(env: Mapping[str, str]) -> Path:
    """Where the service keeps its state: LLAMA_BOT_DATA_DIR, else the XDG state directory of the user
    running it ($XDG_STATE_HOME/llama-bot, else ~/.local/state/llama-bot), never the current directory."""
    if env.get("LLAMA_BOT_DATA_DIR"):
        return Path(env["LLAMA_BOT_DATA_DIR"])
    state = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "llama-bot"


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
    data_dir: Path = OLD_DATA_DIR
    url_instead_of: str | None = None
    workers: int = 2
    database_url: str | None = None  # the shared job store; None: SQLite in data_dir
    analysis_limits: Limits = DEFAULT_LIMITS
    previous_webhook_secret: str | None = None  # still accepted while the App's secret is being rotated

    def __repr__(self) -> str:  # never print the key, the secret or the database's password
        return f"Settings(app_id={self.app_id!r}, api_url={self.api_url!r}, data_dir={str(self.data_dir)!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """The service's environment variables; the first that cannot work is a one-line SettingsError."""
        secret, app_id, key = _webhook_secret(env), _app_id(env), private_key(env)
        port, workers = _port(env), _workers(env)
        _check_url_rewrites(env)
        return cls(
            app_id=app_id,
            private_key=key,
            webhook_secret=secret,
            api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            host=env.get("HOST") or "0.0.0.0",
            port=port,
            data_dir=data_dir(env),
            url_instead_of=env.get("LLAMA_BOT_URL_INSTEADOF") or None,
            workers=workers,
            database_url=_database_url(env.get("DATABASE_URL")),
            analysis_limits=_analysis_limits(env),
            previous_webhook_secret=_previous_secret(env),
        )


def _port(env: Mapping[str, str]) -> int:
    port = _whole_number(env, "PORT", 8080)
    if not 0 <= port <= 65535:
        raise SettingsError(f"PORT must be a port number from 0 to 65535, not {port}")
    return port


def _workers(env: Mapping[str, str]) -> int:
    workers = _whole_number(env, "LLAMA_BOT_WORKERS", 2)
    if workers < 1:
        raise SettingsError("LLAMA_BOT_WORKERS must be at least 1")
    return workers


def _analysis_limits(env: Mapping[str, str]) -> Limits:
    memory = _whole_number(env, "LLAMA_BOT_ANALYSIS_MEMORY_MB", Limits.memory_mb)
    timeout = _whole_number(env, "LLAMA_BOT_ANALYSIS_TIMEOUT", int(Limits.timeout))
    if memory < MIN_ANALYSIS_MEMORY_MB:
        raise SettingsError(f"LLAMA_BOT_ANALYSIS_MEMORY_MB must be at least {MIN_ANALYSIS_MEMORY_MB}")
    if timeout < 1:
        raise SettingsError("LLAMA_BOT_ANALYSIS_TIMEOUT must be at least 1 (seconds)")
    return Limits(memory_mb=memory, timeout=float(timeout))


def _check_url_rewrites(env: Mapping[str, str]) -> None:
    """A bad LLAMA_BOT_URL_INSTEADOF is refused at start, not in the first analysis that fetches."""
    try:
        parse_url_rewrites(env.get("LLAMA_BOT_URL_INSTEADOF"))
    except AnalysisError as exc:
        raise SettingsError(str(exc)) from None


def _webhook_secret(env: Mapping[str, str]) -> str:
    secret = env.get("GITHUB_WEBHOOK_SECRET")
    if not secret:
        raise SettingsError("GITHUB_WEBHOOK_SECRET is not set: refusing to accept unsigned webhooks")
    return _long_enough("GITHUB_WEBHOOK_SECRET", secret)


def _previous_secret(env: Mapping[str, str]) -> str | None:
    """The secret the App had before a rotation, accepted beside the new one until it is unset."""
    secret = env.get("GITHUB_WEBHOOK_SECRET_PREVIOUS")
    return _long_enough("GITHUB_WEBHOOK_SECRET_PREVIOUS", secret) if secret else None


def _long_enough(name: str, secret: str) -> str:
    if len(secret) < MIN_SECRET:
        raise SettingsError(
            f"{name} is {len(secret)} characters long: use at least {MIN_SECRET} "
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


def private_key(env: Mapping[str, str]) -> str:
    """The App's key, as PEM text or from a file; one that cannot sign is refused here, not at the first call
    (and on SIGHUP, when the service reads it again: a replaced file takes over)."""
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
