"""An analysis child runs with its caller's environment as it is when the child starts, less its secrets."""

from __future__ import annotations

import os
import uuid

from bot.child.environment import SECRET_SETTINGS
from bot.child.sandbox import Limits, run_limited
from bot.repos.gitcli import git_env

NAME = "LLAMA_BOT_TEST_CHILD_ENVIRONMENT"


def _read_name(channel) -> str | None:
    return os.environ.get(NAME)


def test_a_forkserver_child_sees_the_environment_set_after_the_forkserver_started(monkeypatch):
    """The forkserver keeps the environment it started with; a child must not: the git configuration and
    settings in force when the analysis starts are the ones it uses."""
    monkeypatch.delenv(NAME, raising=False)
    assert run_limited(_read_name, Limits(timeout=60), start_method="forkserver") is None  # the server runs
    value = uuid.uuid4().hex
    monkeypatch.setenv(NAME, value)
    assert run_limited(_read_name, Limits(timeout=60), start_method="forkserver") == value
    monkeypatch.delenv(NAME)
    assert run_limited(_read_name, Limits(timeout=60), start_method="forkserver") is None


def _secret_settings(channel) -> dict[str, str]:
    return {name: os.environ[name] for name in SECRET_SETTINGS if name in os.environ}


def test_a_child_holds_none_of_the_secret_settings_its_caller_still_holds(monkeypatch):
    """The CLI does not read the service's secrets, so they stay in its environment: its child and the git
    runs under it get none of them, like the service's."""
    for name in SECRET_SETTINGS:
        monkeypatch.setenv(name, f"secret-{name}")
    for start_method in ("fork", "forkserver"):
        assert run_limited(_secret_settings, Limits(timeout=60), start_method=start_method) == {}
    assert "GIT_TERMINAL_PROMPT" in git_env(None) and not set(SECRET_SETTINGS) & set(git_env(None))
