"""The bump's decisions as pure functions: which ref, the version file's text, the branch, the open bump pull
request, the pins that move together, and the `release_tags`/`bump_every` configuration."""

from __future__ import annotations

import dataclasses

import pygit2
import pytest

from bot.config import parse_config
from bot.decisions import bump
from bot.decisions.bump import BumpRequest, RefChoice
from bot.decisions.releases import ChooseRefs
from bot.model import AnalysisError, BuildChange, Commit, Finding, PinReport, Report
from bot.render.env import render_template
from tests.fixtures import RepoBuilder

CONFIG = parse_config(None)
LLAMA = CONFIG.pin("llama.cpp")
MLX = CONFIG.pin("mlx")


def test_requests_name_pins_then_at_most_one_ref():
    assert bump.parse_request(["llama.cpp"], CONFIG) == BumpRequest(("llama.cpp",))
    assert bump.parse_request(["llama.cpp", "b10488"], CONFIG) == BumpRequest(("llama.cpp",), "b10488")
    assert bump.parse_request(["mlx", "mlx-c", "mlx"], CONFIG) == BumpRequest(("mlx", "mlx-c"))
    assert "is not a pin" in bump.parse_request(["llama"], CONFIG)
    assert "a ref comes last" in bump.parse_request(["b10488", "llama.cpp"], CONFIG)
    assert "moves one pin" in bump.parse_request(["mlx", "mlx-c", "v0.31.0"], CONFIG)
    assert "not an upstream tag" in bump.parse_request(["llama.cpp", "b1..b2"], CONFIG)
    sha = "ABCDEF" + "0" * 34
    assert bump.parse_request(["llama.cpp", sha], CONFIG).ref == sha.lower()


def test_the_newest_release_is_the_highest_by_the_patterns_numbers():
    tags = ["b999", "b10488", "b10434", "b10488-rc1", "v2", "b" + "9" * 200, "latest"]
    assert bump.newest_release(tags, LLAMA.release_tags) == "b10488"
    assert bump.newest_release(["v0.9.10", "v0.10.0", "v0.9.9", "v0.10.0-rc1"], MLX.release_tags) == "v0.10.0"
    assert bump.newest_release(["x", "y"], MLX.release_tags) is None
    assert bump.release_key("v1.2", r"v(\d+)\.(\d+)(?:\.(\d+))?") == (1, 2, 0)  # a group that matched nothing
    assert bump.release_key("b12", r"b(\w+)") == (12,) and bump.release_key("bxy", r"b(\w+)") is None


def test_choosing_a_ref_refuses_an_older_release_unless_named():
    assert bump.choose_ref(LLAMA, "b100", None, ["b100", "b200"], "/llama") == RefChoice(
        "llama.cpp", "b100", "b200"
    )
    assert bump.choose_ref(LLAMA, "b200", None, ["b100", "b200"], "/llama").already
    older = bump.choose_ref(LLAMA, "b300", None, ["b100", "b200"], "/llama")  # b300's tag is gone upstream
    assert older.ref is None and "older than the pinned `b300`" in older.refusal
    assert "/llama bump llama.cpp b200" in older.refusal
    named = bump.choose_ref(LLAMA, "b300", "b200", [], "/llama")
    assert (named.ref, named.explicit) == ("b200", True)  # the engine's commit counts say it goes back
    sha = "a" * 40  # a commit id is no release: the engine's commit counts judge it
    assert bump.choose_ref(LLAMA, sha, None, ["b200"], "/llama").ref == "b200"
    none = bump.choose_ref(LLAMA, "b100", None, ["v1.0.0"], "!bot")
    assert none.ref is None and "`!bot bump llama.cpp <ref>`" in none.refusal
    on_the_command_line = bump.choose_ref(LLAMA, "b300", None, ["b200"], None)
    assert "--pin llama.cpp --ref b200" in on_the_command_line.refusal
    unpatterned = dataclasses.replace(LLAMA, release_tags=None)
    assert "no `release_tags` pattern" in bump.choose_ref(unpatterned, "b1", None, ["b2"], "/llama").refusal


def test_going_back_is_told_by_ancestry_not_by_the_tags_numbers():
    """A named tag numbered lower but on a side branch (it brings commits too) is no downgrade; one whose
    commit is an ancestor of the pinned one is, whatever its number."""
    side = PinReport("mlx", "MLX_VERSION", "v0.32.0", "v0.31.9", commit_count=2, reverted_count=30)
    back = PinReport("llama.cpp", "LLAMA_CPP_VERSION", "b200", "b300", commit_count=0, reverted_count=4)
    choices = [RefChoice("mlx", "v0.32.0", "v0.31.9", True), RefChoice("llama.cpp", "b200", "b300", True)]
    summary = bump.BumpSummary([side, back], choices, "@alice asked")
    assert not summary.downgrade("mlx") and summary.downgrade("llama.cpp")
    listed = bump.choose_ref(LLAMA, "b200", None, ["b200", "b300"], "/llama")
    assert listed.ref == "b300"  # the engine's commit counts refuse it if b300 is b200's ancestor


def test_a_downgrade_by_ancestry_is_refused_unless_named():
    back = PinReport("llama.cpp", "LLAMA_CPP_VERSION", "a" * 40, "b200", commit_count=0, reverted_count=3)
    report = Report([back])
    assert bump.unnamed_downgrade(report, [RefChoice("llama.cpp", "a" * 40, "b200")]) is back
    assert bump.unnamed_downgrade(report, [RefChoice("llama.cpp", "a" * 40, "b200", explicit=True)]) is None
    forward = dataclasses.replace(back, commit_count=2, reverted_count=0)
    assert bump.unnamed_downgrade(Report([forward]), [RefChoice("llama.cpp", "x", "b200")]) is None


def test_the_version_file_keeps_its_shape():
    assert bump.version_text(b"b100\n", "b200") == b"b200\n"
    assert bump.version_text(b"b100", "b200") == b"b200"
    assert bump.version_text(b"\n  b100  \r\n", "b200") == b"\n  b200  \r\n"
    assert bump.version_text(None, "b200") == b"b200\n"
    assert bump.version_text(b"\xff\xfe", "b200") == b"b200\n"
    assert bump.version_text(b"b100\nb101\n", "b200") == b"b200\n"  # garbage: replaced whole


def test_a_long_body_keeps_its_marker():
    hidden = bump.marker(["llama.cpp"])
    body = bump.fit_body("| row |\n" * 20000, hidden)
    assert len(body) <= bump.PR_BODY_LIMIT and body.rstrip().endswith(hidden) and "cut to fit" in body
    assert bump.fit_body("short", hidden) == f"short\n{hidden}\n"


def test_branch_names_are_safe_for_git():
    choices = [RefChoice("mlx", "v0.30.0", "v0.31.0"), RefChoice("mlx-c", "v0.4.0", "v0.5.0")]
    assert bump.branch_name(choices) == "llama-bot/bump-mlx-v0.31.0-mlx-c-v0.5.0"
    assert bump.branch_name([RefChoice("llama.cpp", None, "b10488")]) == "llama-bot/bump-llama.cpp-b10488"
    odd = bump.branch_name([RefChoice("we ird~pin", None, "release/1.0.lock")])
    assert odd == "llama-bot/bump-we-ird-pin-release-1.0"


def _pull(number: int, body: str, **changes) -> dict:
    pull = {
        "number": number,
        "state": "open",
        "user": {"type": "Bot", "login": "llama-bot[bot]"},
        "head": {"ref": "llama-bot/bump-mlx-v1.0.0", "repo": {"full_name": "ollama/ollama"}},
        "body": body,
    }
    pull.update(changes)
    return pull


def test_the_open_bump_pull_request_is_the_bots_own_for_one_of_the_pins():
    mlx = _pull(12, "text\n" + bump.marker(["mlx"]))
    both = _pull(9, bump.marker(["mlx-c", "mlx"]))
    assert bump.bump_pins(both, "Ollama/Ollama") == ("mlx", "mlx-c")
    assert bump.open_bump([mlx, both], ["mlx"], "ollama/ollama") is both  # the oldest
    assert bump.open_bump([mlx], ["llama.cpp"], "ollama/ollama") is None
    by_person = _pull(3, bump.marker(["mlx"]), user={"type": "User", "login": "someone"})
    from_fork = _pull(
        4, bump.marker(["mlx"]), head={"ref": "llama-bot/bump-x", "repo": {"full_name": "evil/ollama"}}
    )
    other_branch = _pull(
        5, bump.marker(["mlx"]), head={"ref": "mlx-update", "repo": {"full_name": "ollama/ollama"}}
    )
    closed = _pull(6, bump.marker(["mlx"]), state="closed")
    garbage = _pull(7, '<!-- llama-bot:bump {"pins": 5} -->')
    assert [
        bump.bump_pins(p, "ollama/ollama") for p in (by_person, from_fork, other_branch, closed, garbage)
    ] == [()] * 5
    # a pin name cannot end the hidden comment early
    assert bump.bump_pins(_pull(8, bump.marker(["a-->b<!--"])), "ollama/ollama") == ("a-->b<!--",)


def test_only_the_bots_own_marker_line_names_the_pins():
    """A ref or title quoted in the body's text that spells a marker names nothing: only a marker on a line
    of its own, as the bot writes it last, does."""
    quoted = f"Bumps to `{bump.marker(['llama.cpp'])}`.\n"
    assert bump.bump_pins(_pull(10, bump.fit_body(quoted, bump.marker(["mlx"]))), "ollama/ollama") == ("mlx",)
    assert bump.bump_pins(_pull(11, quoted), "ollama/ollama") == ()
    edited = bump.fit_body("text", bump.marker(["mlx"])).replace("\n", "\r\n")  # saved by GitHub's editor
    assert bump.bump_pins(_pull(12, edited), "ollama/ollama") == ("mlx",)


def test_a_consumer_that_no_longer_compiles_moves_with_its_pin():
    title = "mlx changed the signature of `mlx::core::f`, which mlx-c still uses the old way"
    broken = PinReport("mlx", "MLX_VERSION", "v1", "v2")
    broken.findings = [Finding("build", "high", title, "", "mlx/f.h", 1)]
    report = Report([broken])
    (together,) = bump.moves_together(report, CONFIG, ["mlx"], "/llama")
    assert together.consumers == ("mlx-c",) and together.command == "/llama bump mlx mlx-c"
    assert bump.moves_together(report, CONFIG, ["mlx", "mlx-c"], "/llama") == []  # already together
    broken.findings = []
    broken.unchecked = ["mlx-c, which compiles against mlx's headers, against this bump: no such commit"]
    assert bump.moves_together(report, CONFIG, ["mlx"], "/llama") == []


def test_release_tags_and_bump_every_are_checked_in_the_configuration():
    pin = '[[pin]]\nname = "x"\nversion_file = "X"\npatches = "p"\nupstream = "https://example.com/x"\n'
    config = parse_config(pin + "release_tags = 'r(\\d+)'\nbump_every = \"7d\"\n")
    assert (config.pins[0].release_tags, config.pins[0].bump_every) == (r"r(\d+)", 7 * 86400)
    assert parse_config(pin).pins[0].release_tags is None
    for line, words in (
        ("release_tags = 'r\\d+'", "has no group"),
        ("release_tags = 'r(\\d+'", "is not a regular expression"),
        ("release_tags = 5", "expected str"),
        ('bump_every = "weekly"', "is not a duration"),
        ('bump_every = "10m"', "shorter than an hour"),
        ('bump_every = "31d"', "longer than 30 days"),
    ):
        with pytest.raises(AnalysisError, match=words):
            parse_config(pin + line + "\n")


def test_refs_are_chosen_from_the_upstreams_tags(tmp_path):
    up = RepoBuilder(tmp_path / "up.git")
    up.commit("one", {"f": "1"})
    up.tag("b100")
    up.commit("two", {"f": "2"})
    up.tag("b200")
    up.tag("nightly")
    local = {"llama.cpp": str(up.path)}
    versions = {"LLAMA_CPP_VERSION": b"b100\n"}
    (choice,) = ChooseRefs(CONFIG, BumpRequest(("llama.cpp",)), versions, None, local)()
    assert (choice.current, choice.ref) == ("b100", "b200")
    (missing,) = ChooseRefs(CONFIG, BumpRequest(("llama.cpp",)), {"LLAMA_CPP_VERSION": None}, None, local)()
    assert "does not exist" in missing.refusal
    gone = {"llama.cpp": str(tmp_path / "nowhere")}
    (unlisted,) = ChooseRefs(CONFIG, BumpRequest(("llama.cpp",)), versions, None, gone)()
    assert unlisted.ref is None and "cannot list the tags and branches" in unlisted.refusal
    garbage = {"LLAMA_CPP_VERSION": b"not a ref at all\n"}  # the bump repairs it
    (repaired,) = ChooseRefs(CONFIG, BumpRequest(("llama.cpp",)), garbage, None, local)()
    assert (repaired.current, repaired.ref) == (None, "b200")


def test_a_pin_holding_a_commit_follows_its_branch_and_one_holding_a_tag_its_releases(tmp_path):
    """Ollama pins MLX at commits of main, ahead of its newest tag: a bump moves it to main's head, never
    back to the tag; a pin holding a release tag moves to the newest release."""
    up = RepoBuilder(tmp_path / "mlx.git")
    pinned = str(up.commit("one", {"f": "1"}))
    up.commit("two", {"f": "2"})
    up.tag("v0.31.0")
    head = str(up.commit("three", {"f": "3"}))
    up.branch("feature", up.commit("side", {"f": "side"}))
    up.branch("main", pygit2.Oid(hex=head))
    local = {"mlx": str(up.path)}

    def chosen(version: bytes, ref: str | None = None, prefix: str | None = None) -> RefChoice:
        request = BumpRequest(("mlx",), ref)
        (choice,) = ChooseRefs(CONFIG, request, {"MLX_VERSION": version}, None, local, prefix=prefix)()
        return choice

    assert (chosen(f"{pinned}\n".encode()).ref, chosen(f"{pinned}\n".encode()).explicit) == (head, False)
    assert chosen(f"{head}\n".encode()).already  # at the head already: nothing to do
    assert chosen(b"v0.30.0\n").ref == "v0.31.0"  # a tag: the newest release
    named = chosen(f"{pinned}\n".encode(), "feature")  # a branch named: its head commit, as named
    assert (named.ref, named.explicit) == (str(up.repo.references["refs/heads/feature"].target), True)
    assert chosen(f"{pinned}\n".encode(), "v0.31.0").ref == "v0.31.0"
    refused = chosen(f"{pinned}\n".encode(), "mian", prefix="/llama")
    assert refused.ref is None and refused.refusal == (
        "`mian` is not a tag or branch of https://github.com/ml-explore/mlx (give a tag, a branch or a 40-hex "
        "commit id); `main` or `v0.31.0`, perhaps."
    )
    untracked = dataclasses.replace(CONFIG.pin("mlx"), track="stable")
    config = dataclasses.replace(CONFIG, pins=(untracked,))
    (gone,) = ChooseRefs(
        config, BumpRequest(("mlx",)), {"MLX_VERSION": f"{pinned}\n".encode()}, None, local
    )()
    assert gone.ref is None and "has no branch `stable` (`mlx`'s `track`)" in gone.refusal
    assert bump.branch_name([chosen(f"{pinned}\n".encode())]) == f"llama-bot/bump-mlx-{head[:12]}"


def test_track_must_be_a_branch_name():
    pin = '[[pin]]\nname = "x"\nversion_file = "X"\npatches = "p"\nupstream = "https://example.com/x"\n'
    assert parse_config(pin + 'track = "main"\n').pins[0].track == "main"
    for bad in ("../up", "-x", "a..b", "main.lock", "two words"):
        with pytest.raises(AnalysisError, match="is not a branch name"):
            parse_config(pin + f"track = {bad!r}\n".replace("'", '"'))


def _commits(n: int) -> list[Commit]:
    url = "https://github.com/ggml-org/llama.cpp/commit/"
    return [Commit(f"{i:040x}", f"change {i} (#{9000 + i})", url + f"{i:040x}") for i in range(n, 0, -1)]


def test_the_bump_names_the_upstream_commits_those_touching_ollama_first():
    """The commits between the refs, newest first: those the review credits with an item or with a build
    file of Ollama's first, each saying what; the others folded and bounded; the version commit's
    message lists them as plain lines."""
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "b100", "b350", compare_url="https://x/compare/b100...b350"
    )
    pin.commit_count = 250
    pin.brought = _commits(250)
    flag = Finding(
        "server", "high", "llama-server flag --flash-attn was removed; Ollama passes it", "", "a", 1
    )
    flag.upstream_commits = [pin.brought[200]]
    build = BuildChange("CMakeLists.txt", (pin.brought[3],))
    pin.findings, pin.build_changes = [flag], [build]
    summary = bump.BumpSummary([pin], [RefChoice("llama.cpp", "b100", "b350")], "@alice asked")

    body = render_template("bump_body.md.j2", s=summary, prefix="/llama")

    credited = body.index("these touch what Ollama builds or reads:")
    flash = body.index(f"[`{pin.brought[200].sha[:12]}`]({pin.brought[200].url}) change 50")
    cmake = body.index(f"[`{pin.brought[3].sha[:12]}`]")
    folded = body.index("<details><summary>The other 248 commits</summary>")
    assert credited < cmake < flash < folded  # newest first among the credited, before the rest
    assert "  - high: llama-server flag --flash-attn was removed; Ollama passes it" in body
    assert "  - changes CMakeLists.txt, which Ollama's build reads" in body
    assert "[#9050](https://github.com/ggml-org/llama.cpp/pull/9050)" in body  # the PR linked
    assert body.count("- [`") == 2 + bump.BODY_COMMITS and "- … and 148 more (see the compare link)" in body

    message = bump.version_message([pin], "Asked by @alice.")
    lines = message.splitlines()
    start = lines.index("llama.cpp brings 250 upstream commits:")
    assert lines[start + 1] == f"- {pin.brought[3].sha[:12]} change 247 (#9247)"  # credited first
    assert lines[start + 2] == f"- {pin.brought[200].sha[:12]} change 50 (#9050)"
    assert lines[start + 1 + bump.MESSAGE_COMMITS] == f"- ... and {250 - bump.MESSAGE_COMMITS} more"
