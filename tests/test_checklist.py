"""The checklist and check-run texts are pure functions of the report."""

import collections
import os
import re
import subprocess
import sys

import pygit2
import pytest

from bot.config import parse_config
from bot.engine import analyse
from bot.model import Commit, Finding, HunkResult, LocalRef, PatchResult, PinReport, Report
from bot.render.banners import failed_banner, results_of, under_banner
from bot.render.checklist import COMMENT_LIMIT, build_checklist, render_comment, render_markdown
from bot.render.checkruns import check_run_outputs, patches_conclusion
from bot.render.env import MARKER
from bot.render.findings import finding_id
from bot.render.items import ticked_ids
from bot.render.patches import REGENERATED_DIR, reproduce_steps
from bot.repos.snapshot import GitSnapshot
from bot.repos.upstream import Upstream
from tests import demo

UPSTREAM = "https://github.com/ggml-org/llama.cpp"
HUNK_STATUS = {"conflict": "conflict", "fuzzy": "relocated", "regenerated": "merged", "offset": "offset"}


def _report(statuses=("clean", "offset"), findings=()) -> Report:
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40, f"{UPSTREAM}/compare/b1...b2", 12
    )
    for i, status in enumerate(statuses):
        hunk = HunkResult(
            "src/x.cpp",
            10,
            12,
            HUNK_STATUS.get(status, "clean"),
            [Commit("c" * 40, "fix thing (#77)", f"{UPSTREAM}/commit/" + "c" * 40)],
            f"hunk 1 expected near src/x.cpp:10 at b2; patch {i} lost its context"
            if status == "conflict"
            else "",
            patch_line=7,
        )
        path = f"llama/compat/000{i}.patch"
        pin.patches.append(
            PatchResult(
                path,
                status,
                f"{status} sentence.",
                path if status in ("regenerated", "fuzzy") else None,
                [hunk],
            )
        )
    pin.findings = list(findings)
    return Report([pin])


def _finding(
    severity="high", title="LLAMA_NEW option added", area="build", refs=("llama/server/CMakeLists.txt",)
):
    return Finding(
        area, severity, title, "detail", "CMakeLists.txt", 97, [], [LocalRef(r, 178) for r in refs]
    )


def _heading_and_verdict(text: str) -> tuple[str, str]:
    lines = [line for line in text.splitlines() if line and not line.startswith("<!--")]
    return lines[0], lines[1]


def _sentences(markdown: str) -> list[str]:
    """The clauses of six words or more outside code blocks, HTML and reference lists (`Changed by:` and
    `Used in Ollama at:` name commits and files, which two items may rightly share)."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith(("Changed by:", "Used in Ollama at:", "Where:")):
            continue
        line = re.sub(r"<!--.*?-->|</?[a-z][^>]*>", " ", line)
        for cell in line.split("|"):
            for piece in re.split(r"[.;:!?](?:\s+|$)", cell):
                if len(piece.strip(" -*`").split()) >= 6:
                    found.append(piece.strip(" -*`"))
    return found


def _repeated(markdown: str) -> list[str]:
    return [s for s, n in collections.Counter(_sentences(markdown)).items() if n > 1]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The demo's repositories and the engine's report on them: every patch status, real findings."""
    built = demo.build(tmp_path_factory.mktemp("demo"))
    repo = pygit2.Repository(str(built.ollama))
    base = repo.revparse_single("refs/heads/main").peel(pygit2.Commit)
    head = repo.revparse_single("refs/heads/bump").peel(pygit2.Commit)
    upstream = Upstream.open_dir(str(built.upstream), UPSTREAM)
    report = analyse(
        parse_config(None),
        GitSnapshot(repo, base),
        GitSnapshot(repo, head),
        lambda pin, refs: upstream,
        ["LLAMA_CPP_VERSION"],
        review=True,
    )
    return built, report


def test_conclusions_follow_the_contract():
    assert patches_conclusion(_report(("clean", "offset")).pins[0].patches) == "success"
    assert patches_conclusion(_report(("clean", "regenerated")).pins[0].patches) == "action_required"
    assert patches_conclusion(_report(("upstreamed",)).pins[0].patches) == "action_required"
    assert patches_conclusion(_report(("fuzzy", "error")).pins[0].patches) == "failure"
    names = [(n, c) for n, c, _ in check_run_outputs(_report(findings=[_finding()]).pins[0])]
    assert names == [("llama.cpp: patches", "success"), ("llama.cpp: upstream review", "neutral")]
    assert check_run_outputs(_report().pins[0])[1][1] == "success"


def test_what_could_not_be_checked_is_at_the_top_and_never_nothing_to_do():
    report = _report(("clean",))
    report.pins[0].unchecked = [
        "mlx-c, which compiles against llama.cpp's headers, against this bump: *no* host"
    ]
    text = render_comment(report, [], head_sha="d" * 40, ran_at="now", prefix="/llama")
    assert _heading_and_verdict(text)[1] == (
        "Not everything of **llama.cpp** could be checked (see below); every patch applies as it is."
    )
    assert "Nothing to do" not in text
    assert (
        "⚠️ Not checked: mlx-c, which compiles against llama.cpp's headers, against this bump: \\*no\\* host."
        in text
    )
    review = check_run_outputs(report.pins[0])[1]
    assert review[1] == "neutral" and "⚠️ Not checked: mlx-c" in review[2]["summary"]


def test_the_verdict_under_the_heading_says_what_to_do():
    report = _report(
        ("clean", "regenerated", "fuzzy", "conflict", "upstreamed", "offset", "clean"),
        [_finding(), _finding("medium", "Something else"), _finding("info", "Just so you know")],
    )
    heading, verdict = _heading_and_verdict(
        render_comment(report, [], head_sha="d" * 40, ran_at="now", prefix="!bot")
    )
    assert heading == "## 🦙 llama-bot: upstream bump checklist"
    assert verdict == (
        "4 of 7 patches need attention: 1 rebuilt (`!bot regenerate-patches` commits it), 1 fuzzy "
        "(review it), 1 conflict (rebase it by hand), 1 obsolete (drop it); 1 high and 1 medium "
        "review items to check."
    )
    two = _report(("conflict", "conflict"))
    assert (
        _heading_and_verdict(render_markdown(two, []))[1]
        == "2 of 2 patches need attention: 2 conflicts (rebase them by hand)."
    )
    assert (
        _heading_and_verdict(render_markdown(_report(findings=[_finding("info")]), []))[1]
        == "Nothing to do: every patch applies and the review found nothing that affects Ollama."
    )
    assert (
        _heading_and_verdict(render_markdown(_report(findings=[_finding()]), []))[1]
        == "Every patch applies as it is; 1 high review item to check."
    )


def test_a_pin_that_could_not_be_checked_leads_the_verdict_and_is_named_once():
    report = _report()
    report.failed.append(
        PinReport("mlx", "MLX_VERSION", None, None, error="MLX_VERSION holds 'x!', which is not a ref.")
    )
    text = render_markdown(report, ["MLX_VERSION"])
    assert (
        _heading_and_verdict(text)[1] == "Could not check **mlx** (see below); every patch applies as it is."
    )
    assert (
        "⛔ Could not check **mlx**: MLX_VERSION holds 'x!', which is not a ref. Fix this, then push again or comment `/llama recheck`."
        in text
    )
    assert "### llama.cpp: `b1` → `b2`" in text and "### mlx" not in text


def test_the_bot_ticks_only_what_it_checked():
    def steps(statuses, ticked=()):
        return {i.id: i for i in build_checklist(_report(statuses), ["LLAMA_CPP_VERSION"], ticked).steps}

    applies = steps(("clean", "offset"))["patches-apply-llama.cpp"]
    assert (
        applies.checked
        and applies.text
        == "The committed llama.cpp patches apply to `b2` in apply order (checked by llama-bot)"
    )
    # A regenerated patch: the committed one does not apply, so configure would fail; nothing says otherwise.
    rebuilt = steps(("clean", "regenerated"))
    assert not rebuilt["patches-apply-llama.cpp"].checked and not rebuilt["configure"].checked
    # The configure and build steps are the maintainer's: the bot never runs CMake, so it never ticks them.
    assert not any(steps(("clean",))[i].checked for i in ("configure", "go-test"))
    assert "`cmake -S llama/server --preset cpu`" in rebuilt["configure"].text
    assert "`python -m bot verify-source`" in rebuilt["configure"].text
    # A person's tick on the bot's item is neither shown nor read back; their own boxes keep theirs.
    person = steps(("conflict",), {"patches-apply-llama.cpp", "configure"})
    assert not person["patches-apply-llama.cpp"].checked and person["configure"].checked
    body = render_markdown(_report(("conflict",)), [], ticked={"patches-apply-llama.cpp", "configure"})
    assert ticked_ids(body.replace("- [ ] The committed", "- [x] The committed")) == {"configure"}


def test_ticked_boxes_survive_a_re_render():
    report = _report(findings=[_finding()])
    body = render_comment(report, [], head_sha="d" * 40, ran_at="2026-12-02 10:00 UTC", prefix="!bot")
    assert "Commands: `!bot help`" in body  # the repository's prefix, not the default
    assert body.startswith(MARKER) and "- [ ] Run `go test ./...` <!-- id:go-test -->" in body
    ticked = body.replace("- [ ] Run `go test", "- [x] Run `go test").replace(
        f"- [ ] **high** LLAMA_NEW option added: detail (Ollama: `llama/server/CMakeLists.txt:178`) <!-- id:{finding_id(_finding())} -->",
        f"- [x] **high** LLAMA_NEW option added: detail (Ollama: `llama/server/CMakeLists.txt:178`) <!-- id:{finding_id(_finding())} -->",
    )
    assert ticked_ids(ticked) == {"go-test", finding_id(_finding())}
    again = render_comment(
        report, [], head_sha="e" * 40, ran_at="later", ticked=ticked_ids(ticked), prefix="/llama"
    )
    assert "- [x] Run `go test ./...`" in again and "- [x] **high** LLAMA_NEW" in again


def test_markdown_shows_refs_patches_commits_and_pr_links():
    text = render_markdown(_report(("clean", "conflict")), [], head_sha="f" * 40)
    assert "`b1` → `b2`" in text and "12 upstream commits" in text
    assert "| `llama/compat/0001.patch` | ❌ conflict | 1 of 1 hunks conflict: rebase it by hand |" in text
    assert "([#77](https://github.com/ggml-org/llama.cpp/pull/77))" in text


def test_a_folded_checklist_still_fits_under_a_failure_banner():
    findings = [_finding("medium", f"medium {i} " + "y" * 400) for i in range(300)]
    body = render_comment(_report(findings=findings), [], head_sha="d" * 40, ran_at="now", prefix="/llama")
    sha, checklist = results_of(body)
    assert sha == "d" * 40 and "more findings folded" in checklist
    banner = failed_banner(
        "e" * 40, "now", "The run failed: " + "z" * 300 + ".", "Comment `/llama recheck`.", sha
    )
    kept = under_banner(checklist, banner, running=False)
    assert len(kept) <= COMMENT_LIMIT and kept.startswith(MARKER) and banner in kept
    assert results_of(kept)[1].rstrip() == checklist.rstrip()  # what a second banner would keep


def test_a_downgrade_says_how_many_commits_it_reverts():
    report = _report()
    pin = report.pins[0]
    pin.commit_count, pin.reverted_count = 0, 3
    assert "· downgrade: 3 upstream commits reverted" in render_markdown(report, [])
    pin.commit_count = 2
    assert "2 upstream commits added and 3 reverted" in render_markdown(report, [])


def test_no_carried_patches_names_the_directory_it_looked_in():
    report = _report(statuses=())
    text = render_markdown(report, [], patch_dirs={"llama.cpp": "llama/compat"})
    assert "No carried patches: no `*.patch` file below `llama/compat/`." in text
    assert not any(i.id.startswith("patches-apply") for i in build_checklist(report, []).steps)


def test_changed_near_hunk_items_only_for_patches_the_table_calls_fine():
    near = [
        _finding(
            "medium",
            f"Upstream changed src/x.cpp near hunk 1 of 000{i}.patch",
            "patch-context",
            [f"llama/compat/000{i}.patch"],
        )
        for i in range(3)
    ]
    text = render_markdown(_report(("offset", "upstreamed", "conflict"), near), [])
    assert "near hunk 1 of 0000.patch" in text
    assert "near hunk 1 of 0001.patch" not in text and "near hunk 1 of 0002.patch" not in text
    assert _heading_and_verdict(text)[1].endswith("; 1 medium review item to check.")
    review = check_run_outputs(_report(("offset", "upstreamed", "conflict"), near).pins[0])[1][2]
    assert review["title"] == "1 finding (0 high)"


def test_one_reproduce_block_per_pin_names_every_conflict_and_never_clones():
    report = _report(("clean", "regenerated", "conflict", "upstreamed", "conflict", "offset"))
    text = render_markdown(report, [])
    assert text.count("```sh") == 1 and text.count("Reproduce locally") == 1
    (block,) = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    assert 'git apply --check "$OLLAMA"/llama/compat/0002.patch' in block
    assert 'git apply --check "$OLLAMA"/llama/compat/0004.patch' in block
    assert f"git apply --index {REGENERATED_DIR}/llama/compat/0001.patch" in block
    assert (
        f"git remote add upstream {UPSTREAM}\ngit fetch -q --filter=blob:none upstream tag b1 tag b2" in block
    )
    assert "clone" not in block and "--depth" not in block  # a shallow clone would be refused
    assert "0005.patch" not in block  # after the last conflict: nothing left to reproduce
    assert reproduce_steps(_report(("clean", "regenerated")).pins[0]) == []


def test_labels_say_what_they_are_and_the_review_names_the_platform_command(sample):
    _, report = sample
    text = render_comment(report, ["LLAMA_CPP_VERSION"], head_sha="a" * 40, ran_at="now", prefix="/llama")
    assert "Upstream:" not in text and "Upstream commits there" not in text
    for block in re.findall(r"<details><summary>Details</summary>(.*?)</details>", text, re.DOTALL):
        assert block.count("Where: [") == 1 and block.count("Changed by: [") == 1
    assert "Comment `/llama validate all`" in text.split("### Platform validation")[1]


def test_the_demo_comment_says_each_thing_once(sample):
    _, report = sample
    text = render_comment(
        report,
        ["LLAMA_CPP_VERSION"],
        head_sha="a" * 40,
        ran_at="now",
        prefix="/llama",
        patch_dirs={"llama.cpp": "llama/compat"},
    )
    assert _repeated(text) == []
    assert text.count("```sh") == 1
    table = {m[0]: m[1] for m in re.findall(r"^\| `([^`]+)` \| [^|]+ \| ([^|]+) \|$", text, re.MULTILINE)}
    assert re.fullmatch(  # the commit that made the change itself is named
        r"its change is already in b350 \(by [0-9a-f]{12} sampling : add min_p accessor \(#9190\)\): drop this patch",
        table["llama/compat/0006-sampling-min-p.patch"],
    )
    assert "near hunk 1 of 0006-sampling-min-p.patch" not in text  # the table already says: drop it
    assert "near hunk 1 of 0002-vocab-bos.patch" in text  # it applies with an offset: worth a look
    # upstream added a CMake option to the CMakeLists.txt Ollama's build reads: the build box names its commit
    assert re.search(
        r"Build the CPU target .*: worth running, as upstream changed `CMakeLists.txt` \(\[`[0-9a-f]{10}`\]",
        text,
    )
    # The same holds for the check run's text.
    patches = check_run_outputs(report.pins[0])[0][2]["text"]
    assert _repeated(patches) == [] and patches.count("```sh") == 1


def test_the_reproduce_steps_reproduce_the_conflicts(sample, tmp_path):
    """Run the demo's block as a maintainer would: the fetch goes to the sample upstream through git's
    insteadOf, LLAMA_BOT is a checkout whose .venv is this interpreter's, /tmp is this test's directory."""
    built, report = sample
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / ".venv").symlink_to(sys.prefix)
    steps = [line.replace("/tmp/", f"{tmp_path}/") for line in reproduce_steps(report.pins[0])]
    env = {
        **os.environ,
        "OLLAMA": str(built.ollama),
        "LLAMA_BOT": str(tmp_path / "bot"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.file://{built.upstream}.insteadOf",
        "GIT_CONFIG_VALUE_0": UPSTREAM,
    }
    shell = subprocess.Popen(
        ["bash"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    script = "".join(
        f'{line}\necho "== $? {i}"\n' for i, line in enumerate(steps) if not line.startswith("#")
    )
    out, _ = shell.communicate(script, timeout=120)
    results = {int(i): int(code) for code, i in re.findall(r"^== (\d+) (\d+)$", out, re.MULTILINE)}
    # `check` exits 1 when some patch needs a change, as here; every other step succeeds but the conflicts.
    failed = [
        steps[i] for i, code in results.items() if code and not (" -m bot check " in steps[i] and code == 1)
    ]
    assert failed == [
        f'git apply --check "$OLLAMA"/{p}  # conflict (see above); --3way leaves markers'
        for p in ("llama/compat/0005-clip-warmup.patch", "llama/compat/models/0007-laguna.patch")
    ], out
    assert "error: patch failed: tools/mtmd/clip.cpp:11" in out


def test_a_question_on_a_patch_that_applies_is_shown_once_and_counted_in_the_verdict():
    report = _report(("offset",))
    question = "the hooked code now also appears at line 88: does it need the hook too?"
    report.pins[0].patches[0].hunks[0].detail = question
    body = render_markdown(report, ["LLAMA_CPP_VERSION"])
    assert body.count(question) == 1
    first = body.split("\n\n")[1]
    assert first == (
        "Every patch applies as it is; 1 question about where a patch hooks (see the patch details)."
    ), first


def test_review_items_come_high_first_whatever_their_area_each_with_its_consequence_and_ollama_line():
    medium = Finding(
        "build",
        "medium",
        "New CMake option LLAMA_X: decide its value",
        "Upstream added `LLAMA_X` (default `ON`). Ollama does not set it.",
        "CMakeLists.txt",
        3,
        [],
        [LocalRef("llama/server/CMakeLists.txt", 12)],
    )
    high = Finding(
        "server",
        "high",
        "llama-server flag --foo was removed; Ollama passes it",
        "`--foo` is gone from upstream's option table. llama-server rejects unknown flags.",
        "common/arg.cpp",
        9,
        [],
        [LocalRef("llm/llama_server.go", 370), LocalRef("llm/llama_server.go", 390)],
    )
    info = Finding(
        "models", "info", "New architecture `x`", "Upstream added `LLM_ARCH_X`.", "src/llama-arch.cpp", 5
    )
    text = render_markdown(_report(findings=[medium, info, high]), [])
    review = text[text.index("### Upstream review") : text.index("### Platform validation")]
    assert (
        review.index("**High: Ollama breaks")
        < review.index("--foo")
        < review.index("**Medium: Ollama must decide")
        < review.index("LLAMA_X")
    )
    assert (
        "**high** llama-server flag --foo was removed; Ollama passes it: `--foo` is gone from upstream's option table."
        " (Ollama: `llm/llama_server.go:370`, +1 more)"
    ) in review
    assert review.count("`--foo` is gone from upstream's option table.") == 1  # not repeated in the details
    assert (
        "<details><summary>1 informational finding</summary>" in review and "New architecture `x`" in review
    )


def test_a_bump_with_nothing_actionable_says_so_in_one_line():
    info = Finding(
        "models", "info", "New architecture `x`", "Upstream added `LLM_ARCH_X`.", "src/llama-arch.cpp", 5
    )
    text = render_markdown(_report(findings=[info]), [])
    assert "review found nothing that affects Ollama" in text
    assert "**High:" not in text and "**Medium:" not in text


def test_the_platform_section_is_a_tagged_partial_a_workflow_run_replaces_in_one_substitution():
    from bot.render.platforms import render_platforms, splice_platforms

    report = Report([PinReport("llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40, "u")])
    row = {
        "name": "metal",
        "label": "Metal on macOS arm64",
        "state": "completed",
        "conclusion": "success",
        "url": "https://github.com/o/r/actions/runs/9",
        "duration": "3m",
        "sha": "c" * 40,
        "stale": False,
    }
    before = render_markdown(report, ["LLAMA_CPP_VERSION"], head_sha="c" * 40, ticked=["go-test"])
    after = render_markdown(
        report, ["LLAMA_CPP_VERSION"], head_sha="c" * 40, ticked=["go-test"], platforms=[row]
    )
    section = render_platforms([row], report, "/llama")
    assert section.startswith("<!-- llama-bot:platforms -->\n") and section in after
    assert splice_platforms(before, section) == after  # the rest of the comment as the analysis wrote it
    legacy = before.replace("<!-- llama-bot:platforms -->\n", "").replace(
        "<!-- /llama-bot:platforms -->\n", ""
    )
    assert "[run](https://github.com/o/r/actions/runs/9)" in splice_platforms(
        legacy, section
    )  # an older comment
    assert splice_platforms("⏳ Checking commit `c`…", section) is None


@pytest.mark.parametrize("pin", ["llama.cpp", "mlx"])
@pytest.mark.parametrize("dispatched", [False, True])
def test_the_platform_section_rendered_alone_is_the_one_the_whole_checklist_holds(pin, dispatched):
    from bot.render.platforms import CLOSE_TAG, OPEN_TAG, render_platforms

    report = Report([PinReport(pin, "VERSION", "b1", "b2", "a" * 40, "b" * 40, "u")])
    rows = [
        {"name": "cuda", "label": None, "state": "completed", "conclusion": "success", "url": None}
        | {"duration": "1m", "sha": "c" * 40, "stale": False}
    ]
    ticked = {"integration-tests", "platform-metal", "platform-mlx-metal", "go-test"}
    whole = render_markdown(
        report,
        ["VERSION"],
        head_sha="c" * 40,
        ticked=ticked,
        platforms=rows if dispatched else None,
        prefix="/bot",
    )
    section = render_platforms(rows if dispatched else [], report, "/bot", ticked)
    assert section.startswith(OPEN_TAG) and section.endswith(CLOSE_TAG)
    assert whole.count(section) == 1
