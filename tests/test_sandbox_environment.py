"""An analysis child runs with its caller's environment as it is when the child starts."""

from __future__ import annotations

import os
import uuid

from bot.child.sandbox import Limits, run_limited

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
