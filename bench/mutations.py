"""The review's recall on the mutation suite: per area, the breaking upstream edits it catches and the
harmless ones it raises an alarm on (tests/mutations/, run on the committed excerpts).

    python -m bench.mutations
"""

from __future__ import annotations

from tests.mutations import suite
from tests.mutations.table import AREAS

HEADER = ("area", "breaking", "caught", "missed", "recall", "harmless", "false alarms")


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _row(name: str, verdicts: list[suite.Verdict]) -> tuple[str, ...]:
    breaking = [v for v in verdicts if v.mutation.breaking]
    harmless = [v for v in verdicts if not v.mutation.breaking]
    caught = sum(v.caught for v in breaking)
    return (
        name,
        str(len(breaking)),
        str(caught),
        str(len(breaking) - caught),
        _percent(caught, len(breaking)),
        str(len(harmless)),
        str(sum(v.false_alarm for v in harmless)),
    )


def recall_table(result: suite.SuiteResult) -> list[str]:
    """The table's lines: one per area, then all areas, then each miss and false alarm with what the
    review said instead."""
    verdicts = list(result.verdicts.values())
    rows = [HEADER, *(_row(a, [v for v in verdicts if v.mutation.area == a]) for a in AREAS)]
    lines = _aligned([*rows, _row("all", verdicts)])
    wrong = [v for v in verdicts if v.false_alarm or (v.mutation.breaking and not v.caught)]
    if wrong:
        lines.append("  missed, and false alarms (what the review said instead):")
        lines += [f"    {v.mutation.id}: {v.why}" for v in wrong]
    return lines


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    """The rows as lines: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join([r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:]))])
        for r in rows
    ]


def mutations_stage() -> None:
    result = suite.run_suite()
    breaking = sum(v.mutation.breaking for v in result.verdicts.values())
    print(
        f"mutation suite (tests/mutations/): {breaking} breaking and {len(result.verdicts) - breaking} harmless "
        f"edits of llama.cpp {suite.OLD_TAG}, reviewed in {result.seconds:.1f} s "
        f"({suite.default_workers()} worker processes)"
    )
    print("\n".join(recall_table(result)))


if __name__ == "__main__":
    mutations_stage()
