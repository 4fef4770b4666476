"""The patch engine on Ollama's real llama.cpp bumps, set beside what the maintainers committed.

    python -m bench.real_cases

For every patch of every fixture under tests/data/real/: what the maintainers did, the engine's status,
whether the engine's files equal theirs ignoring whitespace, and for each "no" the reason the engine gives.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

from tests.gitutil import git_apply_stack
from tests.realcases import (
    Measured,
    all_cases,
    build_upstream,
    fixture_upstream,
    measure,
    rebuilt_stack,
    run_engine,
)

REASON_WIDTH = 400


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= REASON_WIDTH else text[: REASON_WIDTH - 1] + "…"


def _row(m: Measured) -> str:
    change = m.change.phrase or m.change.change
    status = m.result.status if m.result else "(not in the engine's input: the maintainers added it)"
    equal = {True: "yes", False: "no", None: "-"}[m.equal]
    return f"| {m.case.id} | {m.patch} | {_cell(change)} | {status} | {equal} | {_cell(m.why) if m.equal is False else ''} |"


def table(root: Path) -> tuple[list[str], dict[str, int]]:
    """The table's lines, and the totals under it."""
    lines = [
        "| case | patch | maintainers' change | engine status | equal to theirs | the engine's reason |",
        "|---|---|---|---|---|---|",
    ]
    totals = dict.fromkeys(
        (
            "patches",
            "verdict_right",
            "changed",
            "changed_equal",
            "rebuilt",
            "rebuilt_apply",
            "regenerated_wrong",
        ),
        0,
    )
    for case in all_cases():
        up = build_upstream(case, root / f"{case.id}.git")
        pin = run_engine(case, fixture_upstream(up, case))
        for m in measure(case, pin):
            lines.append(_row(m))
            if m.result is None:
                continue
            totals["patches"] += 1
            totals["verdict_right"] += (m.result.status in ("clean", "offset")) == m.applies
            if m.change.change != "unchanged":
                totals["changed"] += 1
                totals["changed_equal"] += bool(m.equal)
            totals["regenerated_wrong"] += m.result.status == "regenerated" and not m.equal
        stack = rebuilt_stack(pin)
        rebuilt = [p for p in pin.patches if p.status in ("regenerated", "fuzzy")]
        totals["rebuilt"] += len(rebuilt)
        if rebuilt:
            try:
                git_apply_stack(up.path, case.new_ref, [data for _, data in stack], root / f"{case.id}-work")
                totals["rebuilt_apply"] += len(rebuilt)
            except subprocess.CalledProcessError:  # a failing git apply is a figure here, not a crash
                pass
    return lines, totals


def real_cases_stage() -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="llama-bot-real-") as tmp:
        lines, t = table(Path(tmp))
    print(f"real llama.cpp bumps of Ollama (tests/data/real/, {time.perf_counter() - started:.1f} s):")
    print("\n".join(lines))
    print(f"  apply/does-not-apply verdict right: {t['verdict_right']} of {t['patches']} patches")
    print(
        f"  patches the maintainers changed or dropped, the engine's result equal to theirs: "
        f"{t['changed_equal']} of {t['changed']}"
    )
    print(
        f"  rebuilt patches (regenerated, fuzzy) passing git apply --check in stack order: "
        f"{t['rebuilt_apply']} of {t['rebuilt']}"
    )
    print(f"  results called regenerated that differ from the maintainers': {t['regenerated_wrong']}")


if __name__ == "__main__":
    real_cases_stage()
