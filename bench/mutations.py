"""The review's recall on the mutation suite: per area, the breaking upstream edits it catches and the
harmless ones it raises an alarm on (tests/mutations/, run on the committed excerpts); with --relocated,
the same on Ollama's tree with directories moved (tests/mutations/relocate.py), side by side.

    python -m bench.mutations [--relocated]
"""

from __future__ import annotations

import argparse

from tests.mutations import suite
from tests.mutations.relocate import LAYOUTS
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


def relocated_table(results: dict[str, suite.SuiteResult]) -> list[str]:
    """Per area (rows) and tree (columns, the original first): caught of breaking, and false alarms of
    harmless; then, per tree, the edits it loses or gains against the original, misses anyway, or raises a
    false alarm on, with what the review said."""
    original = next(iter(results))
    header = ("area", *(f"{name} {column}" for name in results for column in ("caught", "alarms")))
    rows = [header]
    for area in (*AREAS, "all"):
        row = [area]
        for result in results.values():
            verdicts = [v for v in result.verdicts.values() if area in ("all", v.mutation.area)]
            breaking = [v for v in verdicts if v.mutation.breaking]
            harmless = [v for v in verdicts if not v.mutation.breaking]
            row += [
                f"{sum(v.caught for v in breaking)}/{len(breaking)}",
                f"{sum(v.false_alarm for v in harmless)}/{len(harmless)}",
            ]
        rows.append(tuple(row))
    lines = _aligned(rows)
    before = results[original].verdicts
    for name, result in results.items():
        changes = [(_change(before[ident], v), v) for ident, v in result.verdicts.items()]
        listed = [f"    {word} {v.mutation.id}: {v.why}" for word, v in changes if word]
        lines += [f"  {name}: {len(listed)} misses, changes and false alarms", *listed]
    return lines


def _change(before: suite.Verdict, after: suite.Verdict) -> str:
    """What to say of a mutation's verdict on a tree, given its verdict on the original tree: lost or
    gained against it, missed on both, a false alarm, or nothing ('')."""
    if before.caught != after.caught:
        return "gained" if after.caught else "lost"
    if after.mutation.breaking and not after.caught:
        return "missed"
    return "false alarm" if after.false_alarm else ""


def relocated_stage() -> None:
    results = {"original": suite.run_suite()}
    results |= {f"layout {layout.name}": suite.run_suite(layout=layout) for layout in LAYOUTS}
    seconds = ", ".join(f"{name} {r.seconds:.1f} s" for name, r in results.items())
    print(
        f"mutation suite (tests/mutations/) on relocated Ollama trees, reviewed in {seconds} "
        f"({suite.default_workers()} worker processes)"
    )
    print("\n".join(f"  layout {layout.name}: {layout}" for layout in LAYOUTS))
    print("\n".join(relocated_table(results)))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mutations", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--relocated", action="store_true", help="also on Ollama trees with directories moved, side by side"
    )
    if parser.parse_args().relocated:
        relocated_stage()
    else:
        mutations_stage()


if __name__ == "__main__":
    main()
