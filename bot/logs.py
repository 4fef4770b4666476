"""The service's logs: one JSON object a line, with credentials masked."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Mapping

from bot.settings import Settings

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
