"""docs/report.schema.json as a check the tests share: which parts of a report break the documented format."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "docs" / "report.schema.json"


@functools.cache
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def schema_violations(report: object) -> list[str]:
    """One line per violation, naming where in the report it is (`pins/0/patches/2/status: ...`)."""
    found = sorted(validator().iter_errors(report), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in found]
