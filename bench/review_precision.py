"""The upstream review's precision and recall on Ollama's real llama.cpp bumps, from committed data.

    python -m bench.review_precision                 # both reviews: as merged, and the first push
    python -m bench.review_precision --review bump-only

Reads tests/data/real-review/findings/*.json (written by tests/real/review_bumps.py) and the hand labels
and recall list of tests/data/real-review/labels.toml; needs no mirror. Prints, per check and severity,
how many findings there are and how the labelled ones split into actionable, latent, glance and noise; the noise
per cause; recall over the forced changes; items per bump; the review's time. Exit 2 with one line when
the data is inconsistent (a label naming no finding, a labelled case with an unlabelled finding).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "real-review"
# review name -> findings file suffix
REVIEWS = {"merged": "", "bump-only": ".bump-only", "long jump": ".long-jump"}
HEADS = {
    "merged": "the bump commit",
    "bump-only": "the parent with only LLAMA_CPP_VERSION bumped",
    "long jump": "an Ollama commit with only LLAMA_CPP_VERSION moved many releases on",
}
LABELS = ("actionable", "latent", "glance", "noise")
LABELLED_SEVERITIES = ("high", "medium")


class DataError(Exception):
    """The committed findings and labels do not fit together: one line for the user."""


@dataclass(frozen=True)
class Data:
    reviews: dict[str, dict[str, dict]]  # review name -> case -> the findings file's JSON
    labels: list[dict]
    forced: list[dict]
    fully_labelled: list[str]  # cases whose medium findings are labelled too (every high one always is)


def load(root: Path = DATA) -> Data:
    reviews: dict[str, dict[str, dict]] = {name: {} for name in REVIEWS}
    for path in sorted((root / "findings").glob("*.json")):
        stem = path.name.removesuffix(".json")
        name = next((n for n, suffix in REVIEWS.items() if suffix and stem.endswith(suffix)), "merged")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not JSON ({exc})") from None
        reviews[name][data["case"]] = data
    try:
        labels = tomllib.loads((root / "labels.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DataError(f"{root / 'labels.toml'}: {exc}") from None
    return Data(reviews, labels.get("label", []), labels.get("forced", []), labels.get("fully_labelled", []))


def key(case: str, item: dict) -> tuple[str, str, str]:
    return case, item["title"], item["upstream_path"]


def check_of(finding: dict) -> str:
    return finding["check"] or "(unknown)"


def problems(data: Data) -> list[str]:
    """Everything that makes the labels disagree with the committed findings, one line each."""
    found = {
        key(case, f) for review in data.reviews.values() for case, d in review.items() for f in d["findings"]
    }
    out = []
    seen: Counter = Counter()
    for label in data.labels:
        k = key(label["case"], label)
        seen[k] += 1
        if k not in found:
            out.append(f"label {k} names no committed finding")
        if label.get("label") not in LABELS:
            out.append(f"label {k}: {label.get('label')!r} is not one of {', '.join(LABELS)}")
        if not label.get("reason"):
            out.append(f"label {k} gives no reason")
        if (label.get("label") == "noise") != bool(label.get("cause")):
            out.append(f"label {k}: a cause is given for noise, and only for noise")
    out += [f"label {k} is given {n} times" for k, n in seen.items() if n > 1]
    out += [
        f"fully_labelled names {case}, which has no findings file"
        for case in data.fully_labelled
        if not any(case in review for review in data.reviews.values())
    ]
    for name, review in data.reviews.items():
        for case, d in sorted(review.items()):
            wanted = LABELLED_SEVERITIES if case in data.fully_labelled else ("high",)
            for f in d["findings"]:
                if f["severity"] in wanted and key(case, f) not in seen:
                    out.append(
                        f"{name} review of {case}: {f['severity']} finding {f['title']!r} is not labelled"
                    )
    bump_only = data.reviews["bump-only"]
    for item in data.forced:
        if item["case"] not in bump_only:
            out.append(f"forced change {item['what']!r}: no bump-only review of {item['case']}")
            continue
        shown = {key(item["case"], f) for f in bump_only[item["case"]]["findings"]}
        out += [
            f"forced change {item['what']!r}: {key(item['case'], s)} is not in the bump-only review"
            for s in item.get("shown_by", [])
            if key(item["case"], s) not in shown
        ]
    return out


def label_index(labels: list[dict]) -> dict[tuple[str, str, str], dict]:
    return {key(label["case"], label): label for label in labels}


def precision_rows(review: dict[str, dict], labels: list[dict]) -> list[dict]:
    """Per (check, severity): findings on every bump, and the labelled ones by label."""
    index = label_index(labels)
    rows: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for case, data in review.items():
        for f in data["findings"]:
            row = rows[(check_of(f), f["severity"])]
            row["findings"] += 1
            label = index.get(key(case, f))
            if label is not None:
                row["labelled"] += 1
                row[label["label"]] += 1
    order = {"high": 0, "medium": 1, "info": 2}
    return [
        {"check": d, "severity": s, **{k: c[k] for k in ("findings", "labelled", *LABELS)}}
        for (d, s), c in sorted(rows.items(), key=lambda item: (order[item[0][1]], item[0][0]))
    ]


def totals(rows: list[dict], severities=LABELLED_SEVERITIES) -> dict[str, int]:
    return {
        k: sum(r[k] for r in rows if r["severity"] in severities) for k in ("findings", "labelled", *LABELS)
    }


def noise_causes(review: dict[str, dict], labels: list[dict]) -> list[tuple[str, int, list[str]]]:
    """(cause, how many noise findings of this review it explains, their checks), most first."""
    index = label_index(labels)
    count: Counter = Counter()
    checks: dict[str, set[str]] = defaultdict(set)
    for case, data in review.items():
        for f in data["findings"]:
            label = index.get(key(case, f))
            if label is not None and label["label"] == "noise":
                count[label["cause"]] += 1
                checks[label["cause"]].add(check_of(f))
    return [(cause, n, sorted(checks[cause])) for cause, n in count.most_common()]


@dataclass(frozen=True)
class Recall:
    review_shown: int  # forced changes outside the patches that a finding shows
    review_total: int
    report_shown: int  # any forced change the diff can show, shown by a finding or by the patch's status
    report_total: int
    missed: list[str]


def recall(forced: list[dict]) -> Recall:
    """Over the forced changes a diff between the refs can show. A change to a carried patch is the patch
    section's to show (its status); every other change needs a finding."""
    showable = [f for f in forced if f.get("diff_can_show", True)]
    review = [f for f in showable if not f.get("patch_status")]
    return Recall(
        sum(bool(f.get("shown_by")) for f in review),
        len(review),
        sum(
            bool(f.get("shown_by")) or f.get("patch_status", "") not in ("", "clean", "offset")
            for f in showable
        ),
        len(showable),
        [f"{f['case']}: {f['what']}" for f in review if not f.get("shown_by")],
    )


def shown_recall(forced: list[dict], bump_only: dict[str, dict]) -> tuple[int, int, list[str]]:
    """(shown, total, missed) over the forced changes outside the patches a diff can show, counting one as
    shown when a finding its shown_by names is in this bump-only review (a live run, not the hand list)."""
    wanted = [f for f in forced if f.get("diff_can_show", True) and not f.get("patch_status")]
    shown, missed = 0, []
    for item in wanted:
        found = {key(item["case"], f) for f in bump_only.get(item["case"], {}).get("findings", [])}
        if any(key(item["case"], s) in found for s in item.get("shown_by", [])):
            shown += 1
        else:
            missed.append(f"{item['case']}: {item['what']}")
    return shown, len(wanted), missed


def unlabelled(data: Data) -> list[str]:
    """Every high and medium finding no label names, one line each."""
    index = label_index(data.labels)
    return [
        f"{name} review of {case}: {f['severity']} finding {f['title']!r} ({f['upstream_path']}) is not labelled"
        for name, review in data.reviews.items()
        for case, d in sorted(review.items(), key=lambda item: _order(item[0]))
        for f in d["findings"]
        if f["severity"] in LABELLED_SEVERITIES and key(case, f) not in index
    ]


def figures(data: Data) -> dict[str, float]:
    """The floors' figures over both reviews: high precision, the high+medium shares that are actionable or
    latent and that are not noise, recall over the forced changes, and how many high and medium findings
    are unlabelled."""
    rows = [r for review in data.reviews.values() for r in precision_rows(review, data.labels)]
    high, both = totals(rows, ("high",)), totals(rows)
    shown, total, _ = shown_recall(data.forced, data.reviews["bump-only"])
    return {
        "high_precision": (high["actionable"] + high["latent"]) / high["labelled"]
        if high["labelled"]
        else 1.0,
        "acted_share": (both["actionable"] + both["latent"]) / both["labelled"] if both["labelled"] else 1.0,
        "useful_share": (both["labelled"] - both["noise"]) / both["labelled"] if both["labelled"] else 1.0,
        "recall": shown / total if total else 1.0,
        "unlabelled": len(unlabelled(data)),
    }


def items_per_bump(review: dict[str, dict], severities=("high", "medium", "info")) -> tuple[float, int]:
    counts = [sum(f["severity"] in severities for f in d["findings"]) for d in review.values()]
    return (statistics.median(counts), max(counts)) if counts else (0, 0)


def review_seconds(review: dict[str, dict]) -> dict[str, float]:
    return {case: d["review_seconds"] for case, d in sorted(review.items(), key=lambda item: _order(item[0]))}


def _order(case: str) -> int:
    return int(case.split("-")[0].lstrip("b"))


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def report(data: Data, name: str) -> list[str]:
    review = data.reviews[name]
    rows = precision_rows(review, data.labels)
    lines = [
        f"## {name}: {len(review)} {'bump' if len(review) == 1 else 'bumps'} (head: {HEADS[name]})",
        "",
        "| check | severity | findings | labelled | actionable | latent | glance | noise |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['check']} | {r['severity']} | {r['findings']} | {r['labelled']} | {r['actionable']} | "
        f"{r['latent']} | {r['glance']} | {r['noise']} |"
        for r in rows
    ]
    for severities in (("high",), ("medium",), LABELLED_SEVERITIES):
        t = totals(rows, severities)
        useful = t["labelled"] - t["noise"]
        lines.append(
            f"{'+'.join(severities)}: {t['findings']} findings, {t['labelled']} labelled: {t['actionable']} actionable "
            f"({_percent(t['actionable'], t['labelled'])}), {t['latent']} latent, {t['glance']} glance, {t['noise']} noise; "
            f"actionable or latent {_percent(t['actionable'] + t['latent'], t['labelled'])}, "
            f"actionable, latent or glance {_percent(useful, t['labelled'])}"
        )
    info = totals(rows, ("info",))
    lines.append(
        f"info: {info['findings']} findings, {info['labelled']} labelled: {info['noise']} noise "
        f"({_percent(info['noise'], info['labelled'])}), {info['glance']} glance"
    )
    lines += ["", "noise by cause (findings of this review):"]
    lines += [f"  {n:3d}  {cause}  ({', '.join(d)})" for cause, n, d in noise_causes(review, data.labels)]
    median, most = items_per_bump(review)
    median_hm, most_hm = items_per_bump(review, LABELLED_SEVERITIES)
    seconds = review_seconds(review)
    lines += [
        "",
        f"items per bump: median {median:g}, max {most} (high and medium: median {median_hm:g}, max {most_hm})",
        "review time per bump (s): " + ", ".join(f"{c} {s:.2f}" for c, s in seconds.items()),
        f"review time: median {statistics.median(seconds.values()):.2f} s, max {max(seconds.values()):.2f} s"
        if seconds
        else "review time: -",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.review_precision", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--review", choices=sorted(REVIEWS), action="append", help="only this review (repeatable)"
    )
    parser.add_argument("--data", type=Path, default=DATA, help=f"the data directory (default {DATA})")
    parser.add_argument(
        "--live",
        action="store_true",
        help="run the review on the committed excerpts instead of reading findings",
    )
    args = parser.parse_args(argv)
    try:
        data = load(args.data)
    except DataError as exc:
        print(f"review_precision: {exc}", file=sys.stderr)
        return 2
    if args.live:
        from tests.real.review_excerpts import live_reviews

        data = Data(live_reviews(root=args.data / "excerpts"), data.labels, data.forced, data.fully_labelled)
        for line in unlabelled(data):
            print(f"review_precision: {line}", file=sys.stderr)
        f = figures(data)
        print(
            f"live: high precision {f['high_precision']:.0%}, high+medium not noise "
            f"{f['useful_share']:.0%}, recall {f['recall']:.0%}, {f['unlabelled']} unlabelled\n"
        )
    wrong = [] if args.live else problems(data)
    if wrong:
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        print(f"review_precision: {wrong[0]}{more}", file=sys.stderr)
        return 2
    cases = sorted(data.fully_labelled, key=_order)
    print(f"labelled: every high finding, and every medium one of {', '.join(cases)}\n")
    for name in args.review or [n for n in REVIEWS if data.reviews.get(n)]:
        print("\n".join(report(data, name)), end="\n\n")
    r = recall(data.forced)
    print(
        f"recall over {len(data.forced)} forced changes: findings show {r.review_shown} of the {r.review_total} "
        f"outside the patches ({_percent(r.review_shown, r.review_total)}); with the patch statuses, the report "
        f"shows {r.report_shown} of the {r.report_total} a diff can show ({_percent(r.report_shown, r.report_total)})"
    )
    for line in r.missed:
        print(f"  missed: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
