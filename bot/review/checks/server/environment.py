"""The code that reads an environment variable Ollama sets for an upstream program (`GGML_BACKEND_PATH`,
`GGML_CUDA_INIT`), changed: the lines that read it and the blocks its value governs (`if (backend_path) {
... }`), compared at both refs. Lines elsewhere in the same function (a backend added to a list of searches)
are not that code."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.producers import SourceFile

if TYPE_CHECKING:
    from bot.review.changes import FileChange
    from bot.review.run import Run

MAX_REGION_LINES = 200  # lines a block its value governs is read to
MAX_SHOWN = 3  # changed lines quoted per side
_GETENV = r"\b(?:std::)?(?:getenv|secure_getenv|_wgetenv|GetEnvironmentVariable\w*)\s*\(\s*"


@check("server.environment", area="discovery", inputs=("diff", "inventory", "ollama-build"))
def environment(run: Run) -> list[Draft]:
    settings = {s.name: s for s in run.contracts.launch if s.kind == "env"}
    return [
        d for change in (run.built_c_changes() if settings else ()) for d in _file_drafts(change, settings)
    ]


def _file_drafts(change: FileChange, settings: dict[str, LaunchSetting]) -> Iterator[Draft]:
    """One draft per variable whose reading code the change changes in this file."""
    raw = change.changed_raw[0]
    for name in _named(change, settings):
        before, after = _region(change.old_code, name), _region(change.new_code, name)
        if before and after and _code(before) != _code(after) and _touched(raw, before, after):
            yield _draft(change, settings[name], before, after)


def _named(change: FileChange, settings: dict[str, LaunchSetting]) -> list[str]:
    """The variables the file reads through the environment at both refs: a search of the texts as written
    first, so that the comment-free code is made for the few files left."""
    if "getenv" not in change.new_text:
        return []
    quoted = [n for n in settings if f'"{n}"' in change.old_text and f'"{n}"' in change.new_text]
    return [n for n in quoted if _read(n, change)]


def _read(name: str, change: FileChange) -> bool:
    """Whether both refs of the file read the variable through the environment."""
    pattern = re.compile(_GETENV + rf'\w*\(?\s*"{re.escape(name)}"')
    return bool(pattern.search(change.old_code) and pattern.search(change.new_code))


def _region(code: str, name: str) -> list[tuple[int, str]]:
    """(line, text) of the lines that read the variable, name what it was read into, and of the blocks
    those lines open."""
    lines = code.split("\n")
    read = re.compile(_GETENV + rf'\w*\(?\s*"{re.escape(name)}"')
    holders = {m[1] for line in lines if read.search(line) for m in [re.search(r"(\w+)\s*=[^=]", line)] if m}
    mentions = re.compile(rf'"{re.escape(name)}"' + "".join(rf"|\b{re.escape(h)}\b" for h in holders))
    kept: dict[int, str] = {}
    for n, line in enumerate(lines):
        if mentions.search(line):
            kept.update(_block(lines, n))
    return sorted(kept.items())


def _block(lines: list[str], start: int) -> Iterator[tuple[int, str]]:
    """The line at `start` and, when it opens a block, the lines to its end (0-based in, 1-based out)."""
    depth = 0
    for n in range(start, min(len(lines), start + MAX_REGION_LINES)):
        yield n + 1, lines[n]
        depth += lines[n].count("{") - lines[n].count("}")
        if depth <= 0:
            return


def _code(region: list[tuple[int, str]]) -> list[str]:
    return [" ".join(text.split()) for _, text in region if text.strip()]


def _touched(raw: str, before: list[tuple[int, str]], after: list[tuple[int, str]]) -> bool:
    """Whether a changed line of the file is one of the region's (at either ref)."""
    changed = {" ".join(line.split()) for line in raw.split("\n")}
    return any(" ".join(text.split()) in changed for _, text in [*before, *after] if text.strip())


def _draft(
    change: FileChange, setting: LaunchSetting, before: list[tuple[int, str]], after: list[tuple[int, str]]
) -> Draft:
    old, new = _code(before), _code(after)
    added = [line for line in new if line not in old][:MAX_SHOWN]
    removed = [line for line in old if line not in new][:MAX_SHOWN]
    function = SourceFile(change.new_code, change.path).function_at(after[0][0]) or change.path
    detail = (
        f"Ollama starts {setting.program} with {code_span(setting.name)} set ({_given(setting)}). The code of "
        f"{code_span(function)} that reads it, and what its value decides, changed{_quoted(added, removed)}. "
        "Check that the value Ollama gives still does what Ollama sets it for."
    )
    line = next((n for n, text in after if " ".join(text.split()) in added), after[0][0])
    return Draft(
        "discovery",
        "medium",
        f"What {code_span(setting.name)}, which Ollama sets, does changed in {code_span(function)}",
        detail,
        change.path,
        line,
        local_refs=setting.refs,
        cause=f"environment:{setting.name}",
    )


def _given(setting: LaunchSetting) -> str:
    where = ", ".join(f"{r.path}:{r.line}" for r in setting.refs[:3])
    return f"{', '.join(setting.values) or 'a value'}; {where}"


def _quoted(added: list[str], removed: list[str]) -> str:
    now = f": now {', '.join(code_span(a) for a in added)}" if added else ""
    before = f"; before {', '.join(code_span(r) for r in removed)}" if removed else ""
    return now + before
