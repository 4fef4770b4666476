"""Names a pull request controls, rendered through every text the bot writes, stay data.

A hostile name (a patch file's, a branch's, a pin's, one quoted in a message) leaves the Markdown of the
checklist, the check runs, the replies and the bump body shaped exactly as a benign name does, as
markdown-it parses them; nothing in it forms HTML, a mention, a box the bot reads back as ticked, or a
command that runs when a maintainer pastes the "Reproduce locally" block into bash.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from bot.config import parse_config
from bot.decisions.bump import BumpSummary, MovesTogether, PatchFile, RefChoice
from bot.markup import code_span, one_line
from bot.model import BuildChange, Commit, Finding, HunkResult, LocalRef, PatchResult, PinReport, Report
from bot.render.banners import render_progress
from bot.render.bodies import carried_ticks, error_body
from bot.render.checklist import render_comment
from bot.render.checkruns import check_run_outputs
from bot.render.env import HEADING, MARKER, RUNNING, render_template, under_way
from bot.render.items import ticked_ids
from bot.render.patches import pin_view
from bot.render.platforms import render_platforms
from bot.render.replies import failed_reply, validate_reply
from bot.review.rules import _body_diff
from bot.review.source import excerpt
from bot.review.vendored import Copy, drift_finding
from bot.worker.bump import BumpOutcome

UPSTREAM = "https://github.com/ggml-org/llama.cpp"
COMMIT = Commit("c" * 40, "fix thing (#77)", f"{UPSTREAM}/commit/" + "c" * 40)
BENIGN = "llama/compat/0000-benign.patch"
HOSTILE = {
    "backtick runs": "llama/compat/0000-a``b```c`.patch",
    "a command": "llama/compat/0000-a$(touch PWNED)`touch PWNED`.patch",
    "html and a mention": "llama/compat/<img src=x> @maintainer.patch",
    "a forged box": "llama/compat/0000.patch\n- [x] Run go test <!-- id:go-test -->\n",
    "a forged ticks note": "llama/compat/x\n<!-- llama-bot:ticked go-test configure -->\n",
    "a box of its own": "- [x] Run go test <!-- id:go-test -->",
    "a heading": "# llama/compat/0000.patch",
    "a pipe": "llama/compat/a|b.patch",
    "a comment's end": "llama/compat/a-->b.patch",
    "a carriage return": "llama/compat/a\r- [x] Configure <!-- id:configure -->\r.patch",
}
UNPRINTABLE = {"a forged box", "a forged ticks note", "a carriage return"}
_MD = MarkdownIt("commonmark").enable("table")


def _hunk(name: str, status: str) -> HunkResult:
    """A hunk of file `name`, changed upstream by a commit whose subject names it."""
    commit = Commit("c" * 40, f"touch {name} (#77)", f"{UPSTREAM}/commit/" + "c" * 40)
    return HunkResult(name, 10, 12, status, [commit], f"hunk 1 expected near {name}:10 at b2", patch_line=7)


def _pin(name: str) -> PinReport:
    """A pin named `name` whose every patch, hunk, build file and finding's path is `name` too."""
    pin = PinReport(
        name,
        name,
        "b1",
        "b2",
        "a" * 40,
        "b" * 40,
        f"{UPSTREAM}/compare/b1...b2",
        12,
        build_changes=[BuildChange(name, (COMMIT,))],
        patch_source=f"from {name}:199, PATCH_COMMAND git apply",
    )
    pin.patches = [
        PatchResult(name + "1", "regenerated", f"Rebuilt {name}.", name, [_hunk(name, "merged")], b"diff\n"),
        PatchResult(
            name + "2", "conflict", f"1 of 1 hunks cannot be placed: {name}.", None, [_hunk(name, "conflict")]
        ),
        PatchResult(name + "3", "error", f"Malformed patch: {name}."),
    ]
    pin.findings = [
        Finding(
            "build", "high", f"{name} changed", "It is read. More.", name, 3, [COMMIT], [LocalRef(name, 5)]
        ),
        Finding("build", "info", f"{name} is new", "Nothing to do.", name, 4),
    ]
    return pin


def _report(name: str) -> Report:
    failed = PinReport(name + "-failed", name, "b1", None, error=f"{name} holds no upstream tag")
    return Report([_pin(name)], [failed])


def _shape(markdown: str) -> list[tuple]:
    """The blocks and inline elements markdown-it finds, without their text: what a reader sees as structure.
    A code span counts as text: a name's backticks in a message may make one, and it holds only text."""
    shape: list[tuple] = []
    for token in _MD.parse(markdown):
        shape.append((token.type, token.tag, token.nesting, token.level, token.info))
        kids = [
            ("text", "", 0) if c.type == "code_inline" else (c.type, c.tag, c.nesting)
            for c in token.children or ()
        ]
        shape.append(
            tuple(k for i, k in enumerate(kids) if not (k[0] == "text" and i and kids[i - 1][0] == "text"))
        )
    return shape


def _code_spans(markdown: str) -> collections.Counter[str]:
    """What the code spans of a text show, as a reader copies them."""
    tokens = [kid for token in _MD.parse(markdown) for kid in token.children or ()]
    return collections.Counter(t.content for t in tokens if t.type == "code_inline")


def _inert(markdown: str) -> None:
    """No mention and no HTML but the bot's own tags and comments: a name's `@` and `<` are text or code."""
    for token in _MD.parse(markdown):
        for piece in [token, *(token.children or ())]:
            if piece.type == "text":
                assert "@maintainer" not in piece.content
            if piece.type.startswith("html"):
                rest = re.sub(r"<!-- [^>]*-->|</?(details|summary|code|sub)>", "", piece.content)
                assert "<" not in rest and "@maintainer" not in rest, piece.content


def _platform_row(name: str) -> dict:
    """A platform named `name` in the platform table, its run of the head a success."""
    return {
        "name": name,
        "state": "completed",
        "conclusion": "success",
        "url": "https://github.com/o/r/actions/runs/1",
        "duration": "1m 02s",
        "sha": "d" * 40,
        "stale": False,
    }


def _bump_reason(kind: str, name: str) -> str:
    """A bump outcome's reason: the branch's new head when it moved, else why naming `name`."""
    return "f" * 40 if kind == "moved" else f"{name} is not a pin."


def _texts(name: str) -> dict[str, str]:
    """Every text the bot writes that shows a name a pull request controls, with `name` as that name."""
    report = _report(name)
    patches, review = (output["text"] for _, _, output in check_run_outputs(report.pins[0]))
    summary = BumpSummary(
        [
            _pin(name),
            PinReport(name, name, "b1", "b2", compare_url=f"{UPSTREAM}/compare/b1...b2", reverted_count=2),
        ],
        [RefChoice(name, "b1", "b2", explicit=True), RefChoice(name, "b2", "b2")],
        "Requested by @alice.",
        [PatchFile(name, "fuzzy", b"")],
        [MovesTogether(name, (name,), f"/llama bump {name}")],
    )
    pull = {"number": 5, "html_url": "https://github.com/o/r/pull/5", "title": f"Bump {name}"}
    views = [pin_view(pin, "/llama", None) for pin in report.pins]
    regenerate = {
        "line": "/llama regenerate-patches",
        "prefix": "/llama",
        "refs": f"{name} b1 → b2",
        "branch": name,
        "unresolved": report.unresolved,
        "unresolved_statuses": ("conflict", "error"),
        "views": views,
    }
    change = {"path": name, "status": "fuzzy", "fence": "```", "text": "+x"}
    # the pull request edits a build file under a directory of that name (the build box lists build files,
    # known by their kind, whatever the directory)
    edited = f"{name}/CMakeLists.txt"
    return {
        "checklist": render_comment(report, [edited], head_sha="d" * 40, ran_at="now", prefix="/llama"),
        "patches check run": patches,
        "review check run": review,
        "bump body": render_template("bump_body.md.j2", s=summary, prefix="/llama"),
        **{
            f"bump reply ({kind})": render_template(
                "reply_bump.md.j2",
                line="/llama bump llama.cpp",
                prefix="/llama",
                outcome=BumpOutcome(kind, pull, summary, summary.choices, _bump_reason(kind, name), name),
            )
            for kind in (
                "opened",
                "already",
                "already_open",
                "refused",
                "failed",
                "moved",
                "taken",
                "protected",
            )
        },
        **{
            f"regenerate reply ({outcome})": render_template(
                "reply_regenerate.md.j2",
                **regenerate,
                outcome=outcome,
                commit_sha="e" * 40,
                commit_url="https://github.com/o/r/commit/e",
                changes=[change],
                now_sha="f" * 40,
                pin=name,
                pins=[name, "mlx"],
                reason="it is a protected branch",
                shown=[change],
                omitted=[change],
            )
            for outcome in ("committed", "nothing", "moved", "unknown_pin", "patches")
        },
        "untouched reply": render_template(
            "reply_untouched.md.j2", line="/llama recheck", verb="check", pins=[name]
        ),
        "untouched checklist": render_template(
            "checklist_untouched.md.j2", marker="", heading="", head_sha="d" * 40, ran_at="now", pins=[name]
        ),
        "failed reply": failed_reply("/llama recheck", f"{name} is not an upstream tag", 7),
        "error body": error_body(None, "d" * 40, f"{name} is not an upstream tag.", "Push again."),
        "progress": render_progress("d" * 40, "10:00 UTC", fetching=name),
        "platform section": render_platforms([_platform_row(name)], report, "/llama"),
        "validate reply": validate_reply([], [name], [], parse_config(None), {}, "alice"),
    }


BENIGN_TEXTS = _texts(BENIGN)


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("text", BENIGN_TEXTS.keys())
def test_a_hostile_name_leaves_every_text_shaped_as_a_benign_one(text, hostile):
    rendered = _texts(hostile)[text]
    assert _shape(rendered) == _shape(BENIGN_TEXTS[text]), rendered
    _inert(rendered)
    # each code span that shows the benign name shows the hostile one whole (a `|` does not cut a cell)
    shown = {
        span.replace(BENIGN, one_line(hostile)): n for span, n in _code_spans(BENIGN_TEXTS[text]).items()
    }
    assert _code_spans(rendered) >= collections.Counter(shown), rendered


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_no_name_in_the_checklist_forms_a_tick_the_bot_reads_back(hostile):
    body = render_comment(_report(hostile), [hostile], head_sha="d" * 40, ran_at="now", prefix="/llama")
    assert ticked_ids(body) == set() and carried_ticks(body) == set()


def test_a_line_of_a_finding_s_text_is_no_tick_the_bot_reads_back():
    report = _report(BENIGN)
    report.pins[0].findings[0].detail = "It breaks. Upstream now says:\n- [x] Run go test <!-- id:go-test -->"
    body = render_comment(report, [], head_sha="d" * 40, ran_at="now", prefix="/llama")
    assert "\n  - [x] Run go test <!-- id:go-test -->\n" in body  # in the finding's details, indented
    assert ticked_ids(body) == set()


def test_a_box_id_on_two_lines_or_a_box_of_another_shape_is_not_carried():
    body = render_comment(_report(BENIGN), [], head_sha="d" * 40, ran_at="now", prefix="/llama")
    ticked = body.replace("- [ ] Run `go test", "- [x] Run `go test")
    assert ticked_ids(ticked) == {"go-test"}
    forged = ticked.replace("- [ ] Integration tests", "- [x] Integration tests")
    assert ticked_ids(forged + "- [x] Configure <!-- id:configure -->\n") == {"go-test", "integration-tests"}
    # a second box line of an id: the bot writes each id once, so neither line is the person's tick
    assert ticked_ids(forged + "- [ ] Run go test <!-- id:go-test -->\n") == {"integration-tests"}
    # a box the bot never writes: indented, another bullet, without the space before the comment
    for shape in (
        "  - [x] Configure <!-- id:configure -->",
        "* [x] Configure <!-- id:configure -->",
        "- [x] Configure<!-- id:configure -->",
    ):
        assert ticked_ids(f"{body}\n{shape}\n") == set(), shape


def _reproduce_block(markdown: str) -> str:
    """The shell block a maintainer copies, as markdown-it reads it."""
    (block,) = [t.content for t in _MD.parse(markdown) if t.type == "fence" and t.info == "sh"]
    return block


def _pasted(block: str, root: Path) -> list[list[str]]:
    """Run `block` in bash in `root` as a maintainer would, with git and the CLI recording their arguments."""
    bot = root / "bot" / ".venv" / "bin"
    bot.mkdir(parents=True)
    log = root / "argv"
    recorder = f'#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a" >> {log}; done; printf "\\n\\0" >> {log}\n'
    (bot / "python").write_text(recorder)
    (bot / "python").chmod(0o755)
    (root / "git").write_text(recorder)
    (root / "git").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{root}:{os.environ['PATH']}",
        "OLLAMA": "/ollama",
        "LLAMA_BOT": str(root / "bot"),
    }
    script = block.replace("/tmp/", f"{root}/")
    subprocess.run(["bash", "-c", script], check=False, cwd=root, env=env, timeout=30, capture_output=True)
    calls = log.read_text().split("\n\0") if log.exists() else []
    return [call.split("\0")[:-1] for call in calls if call]


PRINTABLE = {k: v for k, v in HOSTILE.items() if k not in UNPRINTABLE}


@pytest.mark.parametrize("hostile", PRINTABLE.values(), ids=PRINTABLE.keys())
@pytest.mark.parametrize("text", ["checklist", "patches check run", "regenerate reply (nothing)"])
def test_a_pasted_reproduce_block_runs_no_command_a_name_holds(text, hostile, tmp_path):
    calls = _pasted(_reproduce_block(_texts(hostile)[text]), tmp_path)
    assert not list(tmp_path.rglob("PWNED"))
    # git and the CLI are handed each name whole, as one argument
    applied = [call[-1] for call in calls if call[:1] == ["apply"]]
    assert applied == [f"{tmp_path}/llama-bot-regenerated/{hostile}1", f"/ollama/{hostile}2"]
    (check,) = [call for call in calls if call[:3] == ["-m", "bot", "check"]]
    assert check[check.index("--upstream-dir") + 1].startswith(f"{hostile}={tmp_path}/")


@pytest.mark.parametrize("hostile", [HOSTILE[k] for k in UNPRINTABLE], ids=sorted(UNPRINTABLE))
def test_a_name_with_a_line_break_is_no_shell_command_and_the_block_says_why(hostile, tmp_path):
    pin = _pin(BENIGN)
    pin.name = "llama.cpp"
    for patch in pin.patches:
        patch.path = patch.path.replace(BENIGN, hostile)
    block = _reproduce_block(
        render_comment(Report([pin]), [], head_sha="d" * 40, ran_at="now", prefix="/llama")
    )
    assert block.count("is not shown: its file name holds a line break or control character") == 2
    assert not [line for line in block.splitlines() if "llama/compat/" in line]
    assert [call[0] for call in _pasted(block, tmp_path)] == ["init", "remote", "fetch", "-m", "checkout"]
    # a pin whose name holds one gets no commands at all
    named = _reproduce_block(
        render_comment(Report([_pin(hostile)]), [], head_sha="d" * 40, ran_at="now", prefix="/llama")
    )
    assert named == "# not shown: the pin's name, upstream or refs hold a line break or control character\n"


def test_a_vendored_copy_s_lines_and_name_stay_inside_its_diff():
    def review(name: str, line: bytes, copy: bytes) -> str:
        """The review of a copy that shares its first line with upstream, a context line of the diff."""
        finding = drift_finding(
            "mlx-c", "x/include", [Copy(name, "include/fast.h", line + b"int a;\n", line + copy)]
        )
        return render_template("check_review.md.j2", pin=_pin(BENIGN), findings=[finding])

    benign = review("fast.h", b"int x;\n", b"int b;\n")
    hostile = review("<img src=x>.h", b"```\n", b"<img src=x> @maintainer")
    assert _shape(hostile) == _shape(benign), hostile
    _inert(hostile)


def test_a_run_is_under_way_only_by_the_mark_the_bot_writes_first():
    """A finished checklist quoting a name that holds the running mark is not a run under way: a failed job
    would otherwise write its error over the finished checklist."""
    finished = f"{MARKER}\n{HEADING}\n\n| `llama/compat/a{RUNNING}.patch` | ✅ clean |\n"
    assert not under_way(finished)
    assert under_way(f"{MARKER}{RUNNING}\r\n{HEADING}\n")


@pytest.mark.parametrize("hostile", ["``` @maintainer", "<img src=x> @maintainer", "a`b``c", "x\n- [x] y"])
def test_upstream_names_and_lines_the_review_quotes_stay_inside_their_code(hostile):
    """The review writes upstream's names as code spans and its changed lines as a diff block: a name or
    line holding backticks, HTML or a mention stays inside them."""

    def review(name: str, line: str) -> str:
        detail = (
            f"Upstream's {code_span(name)} no longer takes {code_span(name + '_2')}.\n\n"
            + excerpt([line, "int a;"], ["int b;"])
            + "\n\n"
            + _body_diff(f"{line}\nint a;", "int b;")
        )
        finding = Finding("server", "high", f"Parameter {code_span(name)} is gone", detail, "a.cpp", 3)
        return render_template("check_review.md.j2", pin=_pin(BENIGN), findings=[finding])

    benign, quoted = review("n_ctx", "int x;"), review(hostile, hostile)
    assert _shape(quoted) == _shape(benign), quoted
    _inert(quoted)
    assert _code_spans(quoted)[one_line(hostile)] == _code_spans(benign)["n_ctx"] > 0
