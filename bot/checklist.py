"""The PR checklist and check-run texts: pure functions of the report, rendered from templates/.

Every checkbox carries a stable id in an HTML comment, so a box a person
ticked stays ticked when the comment is rendered again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

import jinja2

from bot.model import SEVERITY_ORDER, Finding, PatchResult, PinReport, Report

MARKER = "<!-- llama-bot:checklist -->"
RUNNING = "<!-- llama-bot:running -->"  # in the comment while a run is under way
COMMENT_LIMIT = 65536
CHECK_TEXT_LIMIT = 65535
ANNOTATIONS_PER_REQUEST = 50
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
BUILD_TRIGGERS = ("llama/compat/**.c", "llama/compat/**.cc", "llama/compat/**.cpp", "llama/compat/**.h",
                  "llama/compat/**.hpp", "*/models/*.patch", "llama/server/CMakeLists.txt", "cmake/local.cmake")
PLATFORM_LABELS = {
    "metal": "Metal on macOS arm64",
    "cuda": "CUDA on Linux and Windows",
    "rocm": "ROCm on Linux and Windows",
    "vulkan": "Vulkan on Linux and Windows",
    "windows": "Windows (CPU and GPU runners)",
}
STATUS_ICON = {"clean": "✅", "offset": "✅", "regenerated": "🔁", "fuzzy": "⚠️", "conflict": "❌",
               "upstreamed": "🗑️", "error": "⛔"}
_TICKED = re.compile(r"^\s*[-*] \[[xX]\] .*?<!-- id:([\w.:-]+) -->", re.MULTILINE)

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False,
                          trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
_env.globals.update(icon=STATUS_ICON)


@dataclass
class Item:
    id: str
    text: str
    done: bool = False  # ticked by the bot from the report (rendered with `auto`, not read back)
    ticked: bool = False  # ticked by a person in an earlier version of the comment


@dataclass
class Checklist:
    pins: list[PinReport]
    steps: list[Item]
    review: list[tuple[str, list[tuple[Item, Finding]]]]  # (area, items) high first
    info: list[Finding]
    platforms: list[Item]
    platform_rows: list[dict] = field(default_factory=list)
    folded: int = 0


def finding_id(finding: Finding) -> str:
    return "finding-" + hashlib.sha1(repr(finding.key).encode()).hexdigest()[:10]


def _touches_build(changed: Iterable[str], report: Report) -> bool:
    if any(p.status in ("regenerated", "fuzzy") for pin in report.pins for p in pin.patches):
        return True
    return any(fnmatchcase(path, pattern) for path in changed for pattern in BUILD_TRIGGERS)


def build_checklist(report: Report, changed_paths: Iterable[str], ticked: Iterable[str] = (),
                    platforms: list[dict] | None = None, max_findings: int | None = None) -> Checklist:
    """Which items the PR needs, and which are already done (by the bot or by a person)."""
    ticked = set(ticked)
    patches = [p for pin in report.pins for p in pin.patches]
    verified = all(p.status in ("clean", "offset", "regenerated") for p in patches)
    steps = [Item("configure", "Confirm the configure step (`cmake -S llama/server --preset cpu`) resolves "
                               "the new ref and applies the patches", bool(patches) and verified)]
    if _touches_build(changed_paths, report):
        steps.append(Item("build-cpu", "Build the CPU target "
                                       "(`cmake --build build/llama-server-cpu --target llama-server`)"))
    steps.append(Item("go-test", "Run `go test ./...`"))
    findings = sorted((f for pin in report.pins for f in pin.findings), key=lambda f: SEVERITY_ORDER[f.severity])
    actionable = [f for f in findings if f.severity != "info"]
    folded = 0
    if max_findings is not None and len(actionable) > max_findings:
        folded = len(actionable) - max_findings
        actionable = actionable[:max_findings]
    areas: dict[str, list[tuple[Item, Finding]]] = {}
    for f in actionable:
        areas.setdefault(f.area, []).append((Item(finding_id(f), f"**{f.severity}** {f.title}"), f))
    info = [f for f in findings if f.severity == "info"] if max_findings is None or not folded else []
    rows = platforms or []
    platform_items = [Item(f"platform-{row['name']}", row.get("label") or PLATFORM_LABELS.get(row["name"], row["name"]),
                           row.get("conclusion") == "success" and not row.get("stale")) for row in rows]
    if not rows:
        platform_items = [Item(f"platform-{name}", label) for name, label in PLATFORM_LABELS.items()]
    platform_items.append(Item("integration-tests", "Integration tests"))
    checklist = Checklist(report.pins, steps, list(areas.items()), info, platform_items, rows, folded)
    for item in [*steps, *[i for _, items in checklist.review for i, _ in items], *platform_items]:
        item.ticked = item.id in ticked
    return checklist


def ticked_ids(body: str) -> set[str]:
    """Ids of the boxes ticked in an existing comment."""
    return set(_TICKED.findall(body or ""))


def render_markdown(report: Report, changed_paths: Iterable[str], *, head_sha: str | None = None,
                    ran_at: str | None = None, ticked: Iterable[str] = (), platforms: list[dict] | None = None,
                    marker: bool = False, limit: int = COMMENT_LIMIT, details_url: str | None = None,
                    prefix: str = "/llama", errors: dict[str, str] | None = None) -> str:
    """The checklist; past `limit` characters the least important findings fold into one line."""
    changed = list(changed_paths)
    total = sum(1 for pin in report.pins for f in pin.findings if f.severity != "info")
    for keep in [None, *range(total, -1, -1)]:
        checklist = build_checklist(report, changed, ticked, platforms, keep)
        text = _env.get_template("checklist.md.j2").render(
            c=checklist, head_sha=head_sha, ran_at=ran_at, marker=MARKER if marker else "",
            details_url=details_url, prefix=prefix, errors=errors or {})
        if len(text) <= limit:
            return text
    return text[: limit - 200] + "\n\n… (truncated: see the check runs for the full report)\n"


def render_comment(report: Report, changed_paths: Iterable[str], *, head_sha: str, ran_at: str, prefix: str,
                   ticked: Iterable[str] = (), platforms: list[dict] | None = None,
                   details_url: str | None = None, errors: dict[str, str] | None = None) -> str:
    return render_markdown(report, changed_paths, head_sha=head_sha, ran_at=ran_at, ticked=ticked,
                           platforms=platforms, marker=True, details_url=details_url, prefix=prefix, errors=errors)


def render_progress(head_sha: str, since: str) -> str:
    return _env.get_template("progress.md.j2").render(marker=MARKER, running=RUNNING, head_sha=head_sha, since=since)


def patches_conclusion(patches: list[PatchResult]) -> str:
    statuses = {p.status for p in patches}
    if statuses & {"conflict", "error"}:
        return "failure"
    if statuses & {"regenerated", "fuzzy", "upstreamed"}:
        return "action_required"
    return "success"


def patch_annotations(pin: PinReport) -> list[dict]:
    """Check-run annotations on the patch files, at the hunks that need a look."""
    level = {"conflict": "failure", "relocated": "warning", "merged": "notice"}
    out = []
    for patch in pin.patches:
        if patch.status == "error":
            out.append({"path": patch.path, "start_line": 1, "end_line": 1, "annotation_level": "failure",
                        "title": "error", "message": patch.message})
            continue
        for hunk in patch.hunks:
            if hunk.status in level:
                line = max(1, hunk.patch_line)
                out.append({"path": patch.path, "start_line": line, "end_line": line,
                            "annotation_level": level[hunk.status], "title": f"{hunk.file}: {hunk.status}",
                            "message": hunk.detail or patch.message})
    return out


def _clip(text: str, limit: int = CHECK_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 60] + "\n\n… (truncated)\n"


def check_run_outputs(pin: PinReport) -> list[tuple[str, str, dict]]:
    """(name, conclusion, output) for `<pin>: patches` and `<pin>: upstream review`."""
    counts: dict[str, int] = {}
    for p in pin.patches:
        counts[p.status] = counts.get(p.status, 0) + 1
    title = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no carried patches"
    patches_text = _env.get_template("check_patches.md.j2").render(pin=pin)
    review_text = _env.get_template("check_review.md.j2").render(pin=pin)
    high = sum(1 for f in pin.findings if f.severity == "high")
    review_title = f"{len(pin.findings)} findings ({high} high)" if pin.findings else "nothing found"
    return [
        (f"{pin.name}: patches", patches_conclusion(pin.patches),
         {"title": f"{pin.old_ref} → {pin.new_ref}: {title}", "summary": _clip(patches_text.split("\n\n## ")[0]),
          "text": _clip(patches_text), "annotations": patch_annotations(pin)}),
        (f"{pin.name}: upstream review", "neutral" if pin.findings else "success",
         {"title": review_title, "summary": _clip(review_text.split("\n\n## ")[0]), "text": _clip(review_text)}),
    ]
