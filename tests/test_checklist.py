"""The checklist and check-run texts are pure functions of the report."""

from bot.checklist import (
    MARKER,
    build_checklist,
    check_run_outputs,
    finding_id,
    patches_conclusion,
    render_comment,
    render_markdown,
    ticked_ids,
)
from bot.model import Commit, Finding, HunkResult, LocalRef, PatchResult, PinReport, Report


def _report(statuses=("clean", "offset"), findings=()) -> Report:
    pin = PinReport("llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40,
                    "https://github.com/ggml-org/llama.cpp/compare/b1...b2", 12)
    for i, status in enumerate(statuses):
        hunk = HunkResult("src/x.cpp", 10, None if status == "conflict" else 12,
                          {"conflict": "conflict", "fuzzy": "relocated", "regenerated": "merged"}.get(status, "clean"),
                          [Commit("c" * 40, "fix thing (#77)", "https://github.com/ggml-org/llama.cpp/commit/" + "c" * 40)],
                          "expected near src/x.cpp:10" if status == "conflict" else "", patch_line=7)
        pin.patches.append(PatchResult(f"llama/compat/000{i}.patch", status, f"{status} sentence", None, [hunk]))
    pin.findings = list(findings)
    return Report([pin])


def _finding(severity="high", title="LLAMA_NEW option added") -> Finding:
    return Finding("build", severity, title, "detail", "CMakeLists.txt", 97, [], [LocalRef("llama/server/CMakeLists.txt", 178)])


def test_conclusions_follow_the_contract():
    assert patches_conclusion(_report(("clean", "offset")).pins[0].patches) == "success"
    assert patches_conclusion(_report(("clean", "regenerated")).pins[0].patches) == "action_required"
    assert patches_conclusion(_report(("upstreamed",)).pins[0].patches) == "action_required"
    assert patches_conclusion(_report(("fuzzy", "error")).pins[0].patches) == "failure"
    names = [(n, c) for n, c, _ in check_run_outputs(_report(findings=[_finding()]).pins[0])]
    assert names == [("llama.cpp: patches", "success"), ("llama.cpp: upstream review", "neutral")]
    assert check_run_outputs(_report().pins[0])[1][1] == "success"


def test_configure_box_is_pre_ticked_only_when_every_patch_is_verified():
    assert build_checklist(_report(("clean", "regenerated")), []).steps[0].done
    assert not build_checklist(_report(("clean", "fuzzy")), []).steps[0].done


def test_build_item_appears_for_compat_sources_or_regenerated_patches():
    ids = lambda c: [i.id for i in c.steps]
    assert "build-cpu" not in ids(build_checklist(_report(), ["LLAMA_CPP_VERSION"]))
    assert "build-cpu" in ids(build_checklist(_report(), ["llama/compat/llama-ollama.cpp"]))
    assert "build-cpu" in ids(build_checklist(_report(("regenerated",)), ["LLAMA_CPP_VERSION"]))


def test_ticked_boxes_survive_a_re_render():
    report = _report(findings=[_finding()])
    body = render_comment(report, [], head_sha="d" * 40, ran_at="2026-12-02 10:00 UTC", prefix="!bot")
    assert "Commands: `!bot help`" in body  # the repository's prefix, not the default
    assert body.startswith(MARKER) and "- [ ] Run `go test ./...` <!-- id:go-test -->" in body
    ticked = body.replace("- [ ] Run `go test", "- [x] Run `go test").replace(
        f"- [ ] **high** LLAMA_NEW option added <!-- id:{finding_id(_finding())} -->",
        f"- [x] **high** LLAMA_NEW option added <!-- id:{finding_id(_finding())} -->")
    assert ticked_ids(ticked) == {"go-test", finding_id(_finding())}
    again = render_comment(report, [], head_sha="e" * 40, ran_at="later", ticked=ticked_ids(ticked), prefix="/llama")
    assert "- [x] Run `go test ./...`" in again and "- [x] **high** LLAMA_NEW" in again


def test_markdown_shows_refs_patches_commits_and_pr_links():
    text = render_markdown(_report(("clean", "conflict")), [], head_sha="f" * 40)
    assert "`b1` → `b2`" in text and "12 upstream commits" in text
    assert "| `llama/compat/0001.patch` | ❌ conflict |" in text
    assert "([#77](https://github.com/ggml-org/llama.cpp/pull/77))" in text


def test_long_reports_fold_the_least_important_findings():
    findings = [_finding("high", f"high {i} " + "x" * 400) for i in range(40)] + \
               [_finding("medium", f"medium {i} " + "y" * 400) for i in range(200)]
    text = render_markdown(_report(findings=findings), [], limit=65536)
    assert len(text) <= 65536 and "more findings folded" in text
    assert "high 39" in text and "medium 199" not in text


def test_annotations_point_at_the_failing_hunks_in_the_patch_file():
    (_, _, output), _ = check_run_outputs(_report(("clean", "conflict")).pins[0])
    (annotation,) = output["annotations"]
    assert annotation["path"] == "llama/compat/0001.patch" and annotation["start_line"] == 7
    assert annotation["annotation_level"] == "failure"
