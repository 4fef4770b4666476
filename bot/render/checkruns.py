"""Check-run bodies: a pin's `patches` and `upstream review` runs."""

from __future__ import annotations

from bot.model import PatchResult, PinReport
from bot.render.env import render_template
from bot.render.findings import review_findings
from bot.render.patches import pin_view
from bot.render.words import plural

CHECK_TEXT_LIMIT = 65535
ANNOTATIONS_PER_REQUEST = 50
_HUNK_LEVEL = {"conflict": "failure", "relocated": "warning", "merged": "notice"}  # annotated hunks


def patches_conclusion(patches: list[PatchResult]) -> str:
    """Failure when a patch does not go on at all; action required when one must be rebuilt or dropped."""
    statuses = {p.status for p in patches}
    if statuses & {"conflict", "error"}:
        return "failure"
    if statuses & {"regenerated", "fuzzy", "upstreamed"}:
        return "action_required"
    return "success"


def _annotation(path: str, line: int, level: str, title: str, message: str) -> dict:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "annotation_level": level,
        "title": title,
        "message": message,
    }


def _patch_annotations(patch: PatchResult) -> list[dict]:
    """An unusable patch file at its first line; else its hunks that need a look, at their headers."""
    if patch.status == "error":
        return [_annotation(patch.path, 1, "failure", "error", patch.message)]
    return [
        _annotation(
            patch.path,
            max(1, hunk.patch_line),
            _HUNK_LEVEL[hunk.status],
            f"{hunk.file}: {hunk.status}",
            hunk.detail or patch.message,
        )
        for hunk in patch.hunks
        if hunk.status in _HUNK_LEVEL
    ]


def patch_annotations(pin: PinReport) -> list[dict]:
    """Check-run annotations on the patch files, at the hunks that need a look."""
    return [a for patch in pin.patches for a in _patch_annotations(patch)]


def _clip(text: str, limit: int = CHECK_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 60] + "\n\n… (truncated)\n"


def _output(title: str, text: str) -> dict:
    """A check run's output: the text up to its details as the summary, both within GitHub's limit."""
    return {"title": title, "summary": _clip(text.split("\n\n## ")[0]), "text": _clip(text)}


def _patches_title(pin: PinReport) -> str:
    counts: dict[str, int] = {}
    for p in pin.patches:
        counts[p.status] = counts.get(p.status, 0) + 1
    said = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no carried patches"
    return f"{pin.old_ref} → {pin.new_ref}: {said}"


def check_run_outputs(pin: PinReport, prefix: str = "/llama") -> list[tuple[str, str, dict]]:
    """(name, conclusion, output) for `<pin>: patches` and `<pin>: upstream review`."""
    findings = review_findings(pin)
    patches_text = render_template("check_patches.md.j2", v=pin_view(pin, prefix, None))
    review_text = render_template("check_review.md.j2", pin=pin, findings=findings)
    high = sum(1 for f in findings if f.severity == "high")
    review_title = f"{plural(len(findings), 'finding')} ({high} high)" if findings else "nothing found"
    return [
        (
            f"{pin.name}: patches",
            patches_conclusion(pin.patches),
            {**_output(_patches_title(pin), patches_text), "annotations": patch_annotations(pin)},
        ),
        (
            f"{pin.name}: upstream review",
            "neutral" if findings else "success",
            _output(review_title, review_text),
        ),
    ]
