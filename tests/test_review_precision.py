"""The review's precision and recall on the committed real-bump findings and hand labels (no mirror needed)."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from bench import review_precision as rp
from bench.review_precision import DATA, Data, load, precision_rows, problems, recall, totals

REPORT_KEYS = {
    "area",
    "severity",
    "title",
    "upstream_path",
    "upstream_line",
    "upstream_commits",
    "local_refs",
}


@pytest.fixture(scope="module")
def data() -> Data:
    return load()


def test_every_label_names_a_committed_finding_and_every_high_one_is_labelled(data):
    assert problems(data) == []


def test_both_reviews_of_all_sixteen_bumps_and_the_long_jump_are_committed_with_the_report_keys_and_a_check(
    data,
):
    for name in rp.REVIEWS:
        assert len(data.reviews[name]) == (1 if name == "long jump" else 16)
        for case, review in data.reviews[name].items():
            assert review["error"] is None, case
            for f in review["findings"]:
                assert REPORT_KEYS <= f.keys()
                assert f["check"], f"{name} {case}: no check named for {f['title']!r}"


def test_the_rows_split_each_labelled_finding_into_exactly_one_label(data):
    for review in data.reviews.values():
        rows = precision_rows(review, data.labels)
        assert sum(r["findings"] for r in rows) == sum(len(d["findings"]) for d in review.values())
        for r in rows:
            assert r["actionable"] + r["latent"] + r["glance"] + r["noise"] == r["labelled"] <= r["findings"]
        high = totals(rows, ("high",))
        assert high["labelled"] == high["findings"]  # every high finding is labelled


def test_the_first_push_review_shows_what_the_maintainers_then_fixed(data):
    """In the merged head Ollama has already done what upstream forced; the first push still shows it."""
    merged = totals(precision_rows(data.reviews["merged"], data.labels))
    first_push = totals(precision_rows(data.reviews["bump-only"], data.labels))
    assert merged["actionable"] < first_push["actionable"]
    titles = {f["title"] for f in data.reviews["bump-only"]["b10091-b10242"]["findings"]}
    assert "New CMake option LLAMA_SUBPROCESS: decide its value" in titles
    assert "New CMake option LLAMA_SUBPROCESS: decide its value" not in {
        f["title"] for f in data.reviews["merged"]["b10091-b10242"]["findings"]
    }


def test_recall_counts_patch_changes_by_their_status_and_the_rest_by_findings():
    shown = {"title": "t", "upstream_path": "p"}
    forced = [
        {"case": "c", "what": "flag renamed", "shown_by": [shown]},
        {"case": "c", "what": "key renamed", "shown_by": []},
        {"case": "c", "what": "patch re-anchored", "patch_status": "fuzzy", "shown_by": []},
        {"case": "c", "what": "patch applied as it was", "patch_status": "offset", "shown_by": []},
        {"case": "c", "what": "runtime overflow", "diff_can_show": False, "shown_by": []},
    ]
    r = recall(forced)
    assert (r.review_shown, r.review_total) == (1, 2)
    assert (r.report_shown, r.report_total) == (2, 4)
    assert r.missed == ["c: key renamed"]


def _finding(severity: str, title: str) -> dict:
    return {"severity": severity, "title": title, "upstream_path": "a.cpp", "check": "x.y"}


def test_problems_names_a_stray_label_an_unlabelled_high_and_noise_without_a_cause():
    review = {"c": {"findings": [_finding("high", "gone"), _finding("medium", "m")]}}
    labels = [
        {"case": "c", "title": "m", "upstream_path": "a.cpp", "label": "noise", "reason": "r"},
        {"case": "c", "title": "never", "upstream_path": "a.cpp", "label": "glance", "reason": "r"},
    ]
    found = problems(Data({"merged": review, "bump-only": {}}, labels, [], []))
    assert found == [
        "label ('c', 'm', 'a.cpp'): a cause is given for noise, and only for noise",
        "label ('c', 'never', 'a.cpp') names no committed finding",
        "merged review of c: high finding 'gone' is not labelled",
    ]


def test_the_script_prints_the_table_and_recall(capsys):
    assert rp.main([]) == 0
    out = capsys.readouterr().out
    assert "| compat.declarations | high |" in out
    assert "recall over 13 forced changes" in out and "missed:" not in out


def test_the_script_refuses_a_label_for_a_finding_that_is_not_committed(tmp_path, capsys):
    shutil.copytree(DATA, tmp_path / "data")
    labels = tmp_path / "data" / "labels.toml"
    text = labels.read_text()
    first = next(label for label in tomllib.loads(text)["label"] if "\\" not in label["title"])
    labels.write_text(
        text.replace(f'title = "{first["title"]}"', 'title = "`nothing` was removed upstream"', 1)
    )
    assert rp.main(["--data", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"review_precision: label ('{first['case']}', '`nothing` was removed upstream'")
    assert len(err.splitlines()) == 1


FLOORS = tomllib.loads((DATA / "floors.toml").read_text())


@pytest.fixture(scope="module")
def live(data) -> Data:
    """The current review of each pull request's first push, run on the committed excerpts of the labelled
    bumps (no mirror, no network)."""
    from tests.real.review_excerpts import live_reviews

    return Data(live_reviews(), data.labels, data.forced, data.fully_labelled)


def test_the_current_review_runs_on_every_excerpt_without_an_error(live):
    from tests.real.review_excerpts import live_cases

    assert sorted(live.reviews) == ["bump-only"]
    assert sorted(live.reviews["bump-only"]) == sorted(live_cases())
    for case, review in live.reviews["bump-only"].items():
        assert review["error"] is None, f"{case}: {review['error']}"


def test_the_current_review_holds_the_precision_and_recall_floors(live):
    found = rp.figures(live)
    print(found)
    assert found["high_precision"] >= FLOORS["high_precision"]
    assert found["acted_share"] >= FLOORS["acted_share"]
    assert found["useful_share"] >= FLOORS["useful_share"]
    assert found["recall"] >= FLOORS["recall"], rp.shown_recall(live.forced, live.reviews["bump-only"])[2]


def test_every_high_and_medium_finding_of_the_current_review_is_labelled(live):
    lines = rp.unlabelled(live)
    assert len(lines) <= FLOORS["max_unlabelled"], "\n".join(lines)
