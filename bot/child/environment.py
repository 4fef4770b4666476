"""The environment of every process the bot starts (the analysis child, git): what Python and git need to
run and fetch, never a secret.

The service reads its secrets once (`bot.service.settings`) and takes them out of its own environment
(`forget_secrets`), so neither the forkserver it starts later nor anything forked or run from there
inherits them. Whatever else the operator's environment holds is left out too unless it is named here:
a process that holds no secret cannot leak one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# Settings the service reads once and keeps in memory; no process it starts needs them.
SECRET_SETTINGS = (
    "GITHUB_WEBHOOK_SECRET",
    "GITHUB_WEBHOOK_SECRET_PREVIOUS",
    "GITHUB_PRIVATE_KEY",
    "DATABASE_URL",
)
# What git needs to run and reach an upstream (a proxy, a CA bundle, an ssh agent), and where Python and git
# keep temporary files, in the locale the operator chose.
KEPT_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "TMPDIR",
        "TZ",
        "LANG",
        "LANGUAGE",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "CURL_CA_BUNDLE",
        "SSH_AUTH_SOCK",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
    }
)
# The locale's parts, the XDG directories the CLI's cache follows, git's own settings (an operator's
# GIT_SSH_COMMAND or GIT_CONFIG_*), and the bot's own settings, none of which is a secret.
KEPT_PREFIXES = ("LC_", "XDG_", "GIT_", "LLAMA_BOT_")


def working_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The part of `environ` (default: this process's) that a started process gets."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if (name in KEPT_NAMES or name.startswith(KEPT_PREFIXES)) and name not in SECRET_SETTINGS
    }


def forget_secrets() -> None:
    """Take the secret settings out of this process's environment, once they are read."""
    for name in SECRET_SETTINGS:
        os.environ.pop(name, None)
