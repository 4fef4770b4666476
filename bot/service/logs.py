"""The service's logs: one JSON object a line, with credentials masked."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import sys
import time
from collections.abc import Mapping

from bot.service.settings import Settings

REDACTED = "[redacted]"
# Values that are credentials by their shape, wherever they occur in a line.
_SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"  # PEM keys
    # GitHub tokens: installation, OAuth, user, refresh, classic and fine-grained personal access tokens
    r"|(?<![A-Za-z0-9])(?:gh[opsuir]_|github_pat_)[A-Za-z0-9_]{16,}"
    r"|(?<![A-Za-z0-9])v1\.[0-9a-f]{40}(?![0-9a-z])"  # installation tokens of the older shape
    r"|(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",  # JWTs (the App's)
    re.DOTALL | re.IGNORECASE,
)
# An Authorization header's value where the header is named (`Authorization: Bearer x`, `'authorization':
# 'token x'`, `authorization=...`): the scheme stays, the credential after it goes, whatever its length.
_AUTHORIZATION_HEADER = re.compile(
    r"""(authorization["']?\s*[:=]\s*["']?(?:[a-z][a-z0-9_-]*\s+)?+)[^\s"',;()\[\]{}]+""", re.IGNORECASE
)
# A credential after its scheme where the header is not named: `token` or `bearer` and a value of 20 or
# more token characters (a word after them is left alone), `basic` and base64 that decodes to user:password.
_SCHEME_CREDENTIALS = re.compile(r"\b(token|bearer)(\s+)[A-Za-z0-9._~+/-]{20,}=*", re.IGNORECASE)
_BASIC_CREDENTIALS = re.compile(r"\b(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])", re.IGNORECASE)
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
        """`text` with every credential masked; a header's value first, so its scheme stays readable."""
        text = _AUTHORIZATION_HEADER.sub(rf"\1{REDACTED}", text)
        text = _SCHEME_CREDENTIALS.sub(rf"\1\2{REDACTED}", text)
        text = _BASIC_CREDENTIALS.sub(_basic_redacted, text)
        text = _SECRET_SHAPES.sub(REDACTED, text)
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
        if not args:
            return text
        try:
            return text % args
        except (TypeError, ValueError, KeyError):  # else logging would print the arguments to stderr unmasked
            return f"{text} {args!r}"

    def format(self, record: logging.LogRecord) -> str:
        entry: dict = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": self.redact(self._message(record)),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS:
                entry[key] = self._field(key, value)
        if record.exc_info:
            entry["exception"] = self.redact(self.formatException(record.exc_info))
        return json.dumps(entry)

    def _field(self, key: str, value: object) -> object:
        """An `extra` field: masked when it is named like a secret, as it is when a number, a boolean or None,
        else as text with credentials masked."""
        if _SECRET_FIELDS.search(key):
            return REDACTED
        if isinstance(value, (int, float, bool)) or value is None:
            return value
        return self.redact(str(self._value(value)))


def _basic_redacted(found: re.Match[str]) -> str:
    """`Basic <base64>` with the base64 masked when it is user:password, as Basic credentials always are."""
    try:
        credentials = base64.b64decode(found[2] + "=" * (-len(found[2]) % 4), validate=True)
    except binascii.Error:
        return found[0]
    return found[1] + REDACTED if b":" in credentials else found[0]


def add_secret(secret: str) -> None:
    """Mask `secret` too (a private key read again on SIGHUP) in every line the service logs."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler.formatter, JsonFormatter) and secret.strip():
            handler.formatter.secrets = handler.formatter.secrets | {secret.strip()}


def configure_logging(settings: Settings, stream=None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stdout)
    secrets = (settings.webhook_secret, settings.previous_webhook_secret or "", settings.private_key)
    handler.setFormatter(JsonFormatter(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    # What the JSON lines never show is not collected either (the logging HOWTO's "Optimization").
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    logging._srcfile = None  # type: ignore[attr-defined]
    return handler
