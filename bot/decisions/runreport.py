"""A platform run's report: the JSON `python -m bot probe --format json` wrote, uploaded by the workflow as an
artifact (a zip archive), read back into findings the checklist shows beside the review's.

The archive comes from a workflow that built and ran code a pull request chose, so it is hostile input: its
size, the member's size as stored and as read, the number of findings and every string are bounded, and a
report that does not have the probe's shape is an error to show, never a traceback.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from dataclasses import dataclass, field

from bot.model import Finding, LocalRef

ARCHIVE_BYTES = 8 << 20  # the artifact's archive the service downloads
REPORT_BYTES = 4 << 20  # the report inside it, as read
MAX_FINDINGS = 50  # per pin
MAX_REFS = 8  # Ollama lines per finding
_TEXT = {"title": 300, "detail": 4000, "path": 300, "ref": 100, "name": 100}
_SEVERITIES = ("high", "medium", "info")
_AREAS = ("build", "discovery", "server", "streaming", "models")
_CHECK = re.compile(r"probe\.[a-z][a-z-]{0,40}")


class ReportError(Exception):
    """The report could not be read: one line for the check run and the checklist."""


@dataclass(frozen=True)
class PinProbe:
    """What the run found for one pin: the refs it compared and its findings."""

    name: str
    old_ref: str
    new_ref: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)


def read_archive(archive: bytes, member_suffix: str = ".json") -> list[PinProbe]:
    """The report in an artifact's zip archive: its one JSON member, read within the bounds."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            members = [m for m in zipped.infolist() if m.filename.endswith(member_suffix) and not m.is_dir()]
            if len(members) != 1:
                raise ReportError(f"the artifact holds {len(members)} JSON files, not one report")
            if members[0].file_size > REPORT_BYTES:
                raise ReportError(f"the report is larger than {REPORT_BYTES >> 20} MiB")
            with zipped.open(members[0]) as member:
                text = member.read(REPORT_BYTES + 1)  # a member that lies about its size stops here
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        OSError,
        EOFError,
        zlib.error,
    ) as exc:
        raise ReportError(f"the artifact is not a readable zip archive ({type(exc).__name__})") from None
    except RuntimeError:  # a member marked encrypted
        raise ReportError("the artifact's report is encrypted") from None
    if len(text) > REPORT_BYTES:
        raise ReportError(f"the report is larger than {REPORT_BYTES >> 20} MiB")
    return read_report(text)


def read_report(text: bytes) -> list[PinProbe]:
    """The pins of a probe report's JSON, each with its findings; ReportError when it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ReportError("the report is not JSON") from None
    pins = data.get("pins") if isinstance(data, dict) else None
    if not isinstance(pins, list):
        raise ReportError("the report has no list of pins")
    return [_pin(p) for p in pins[:10]]


def _pin(data: object) -> PinProbe:
    if not isinstance(data, dict):
        raise ReportError("a pin of the report is not an object")
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise ReportError("a pin of the report has no list of findings")
    return PinProbe(
        _text(data.get("name"), "name"),
        _text(data.get("old_ref"), "ref"),
        _text(data.get("new_ref"), "ref"),
        tuple(_finding(f) for f in findings[:MAX_FINDINGS]),
    )


def _finding(data: object) -> Finding:
    if not isinstance(data, dict):
        raise ReportError("a finding of the report is not an object")
    severity, check = data.get("severity"), data.get("check")
    if severity not in _SEVERITIES:
        raise ReportError("a finding of the report has no known severity")
    if not isinstance(check, str) or not _CHECK.fullmatch(check):
        raise ReportError("a finding of the report names no probe check")
    listed = data.get("local_refs")
    refs = listed if isinstance(listed, list) else []
    area = data.get("area")
    return Finding(
        area if area in _AREAS else "server",
        str(severity),
        _text(data.get("title"), "title"),
        _text(data.get("detail"), "detail"),
        "",
        None,
        local_refs=[r for r in (_ref(r) for r in refs[:MAX_REFS]) if r is not None],
        check=check,
    )


def _ref(data: object) -> LocalRef | None:
    if not isinstance(data, dict) or not isinstance(data.get("line"), int) or isinstance(data["line"], bool):
        return None
    path = _text(data.get("path"), "path")
    return LocalRef(path, data["line"]) if path and 0 < data["line"] < 10**7 else None


def _text(value: object, kind: str) -> str:
    """A string of the report, cut to its kind's length; anything else is empty."""
    if not isinstance(value, str):
        return ""
    limit = _TEXT[kind]
    return value if len(value) <= limit else value[: limit - 1] + "…"


def to_stored(pins: list[PinProbe] | None, error: str | None = None) -> str:
    """What the store keeps of a run's report: its pins and findings, or why it could not be read."""
    return json.dumps(
        {
            "error": error,
            "pins": [
                {
                    "name": p.name,
                    "old_ref": p.old_ref,
                    "new_ref": p.new_ref,
                    "findings": [f.to_json() for f in p.findings],
                }
                for p in pins or []
            ],
        }
    )


def from_stored(text: str | None) -> tuple[list[PinProbe], str | None]:
    """The stored report read back (it was bounded when stored): its pins, and its error."""
    if not text:
        return [], None
    data = json.loads(text)
    return read_report(json.dumps({"pins": data["pins"]}).encode()), data.get("error")
