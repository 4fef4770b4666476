"""CLI edge cases: one-line exit-2 failures, what `regenerate` may touch,
which revision's configuration counts and which changes select a pin."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from bot import cli
from tests import demo
from tests.fixtures import RepoBuilder


def bot(*args: str, stdout=subprocess.PIPE, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        cwd=cwd,
    )


def one_line(result: subprocess.CompletedProcess) -> str:
    """The single stderr line of an exit-2 failure."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return demo.build(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def work(scenario, tmp_path) -> Path:
    """A clean checkout of the demo's bump branch, with `main` for the default --base."""
    path = tmp_path / "ollama"
    subprocess.run(["git", "clone", "-q", "-b", "bump", str(scenario.ollama), str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "branch", "-q", "main", "origin/main"], check=True)
    return path


def _upstream(scenario) -> tuple[str, str]:
    return "--upstream-dir", f"llama.cpp={scenario.upstream}"


def _status(path: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "status", "--porcelain"], check=True, capture_output=True, text=True
    ).stdout


def _repo(tmp_path: Path, base: dict, head: dict) -> tuple[str, ...]:
    """--repo and --base of an Ollama-like repository: HEAD~1 = base, HEAD with `head` applied."""
    repo = RepoBuilder(tmp_path / "o", bare=False)
    repo.commit("base", base)
    repo.commit("change", head)
    return "--repo", str(tmp_path / "o"), "--base", "HEAD~1"


# 1. Unwritable destinations.


@pytest.mark.parametrize("where", ["proc", "under-a-file"])
def test_check_out_dir_that_cannot_be_written_is_one_line(scenario, tmp_path, where):
    if where == "proc":
        out = Path("/proc/llama-bot-out")
    else:
        (tmp_path / "file").write_text("a regular file\n")
        out = tmp_path / "file" / "out"
    line = one_line(bot("check", "--repo", str(scenario.ollama), *_upstream(scenario), "--out", str(out)))
    assert line.startswith(f"llama-bot: cannot write {out}/llama/compat/")


def test_regenerate_patch_that_cannot_be_written_is_one_line(scenario, work, monkeypatch, capsys):
    def refuse(self, data):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_bytes", refuse)  # root ignores file modes, so the refusal is simulated
    code = cli.main(["regenerate", "--repo", str(work), *_upstream(scenario)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err == f"llama-bot: cannot write {work}/llama/compat/0003-clip-hooks.patch: Permission denied\n"


# 2. Uncommitted changes under a pin stop `regenerate` before it writes anything.


@pytest.mark.parametrize(
    "path, content",
    [
        ("llama/compat/0003-clip-hooks.patch", b"my unfinished edit\n"),
        ("LLAMA_CPP_VERSION", b"b999\n"),
        ("llama/compat/0008-new.patch", b"an untracked new patch\n"),
    ],
)
def test_regenerate_refuses_uncommitted_changes_under_a_pin(scenario, work, path, content):
    (work / path).write_bytes(content)
    before = _status(work)
    line = one_line(bot("regenerate", "--repo", str(work), *_upstream(scenario)))
    assert line.startswith(f"llama-bot: uncommitted changes to {path}: commit or stash them first")
    assert (work / path).read_bytes() == content and _status(work) == before  # nothing written


@pytest.mark.parametrize("out", [".", "{work}"])
def test_check_out_at_the_working_tree_refuses_uncommitted_patch_edits(scenario, work, out):
    """`check --out .` would write the rebuilt patch over the edit: refused like regenerate, nothing written."""
    path = "llama/compat/0003-clip-hooks.patch"
    (work / path).write_bytes(b"my unfinished edit\n")
    before = _status(work)
    result = bot("check", "--repo", str(work), *_upstream(scenario), "--out", out.format(work=work), cwd=work)
    line = one_line(result)
    assert line.startswith(f"llama-bot: --out {out.format(work=work)} is the working tree, with uncommitted ")
    assert f"changes to {path}: commit or stash them first" in line
    assert (work / path).read_bytes() == b"my unfinished edit\n" and _status(work) == before


def test_regenerate_ignores_uncommitted_changes_elsewhere(scenario, work):
    (work / "README.md").write_text("notes\n")
    result = bot("regenerate", "--repo", str(work), *_upstream(scenario))
    assert result.returncode == 1 and "rewrote llama/compat/0003-clip-hooks.patch" in result.stdout


# 4. The configuration of the base revision counts, not the head's.


def test_config_is_read_from_the_base(scenario, tmp_path):
    where = _repo(
        tmp_path,
        {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n"},
        {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n", ".github/llama-bot.toml": "[[pin]]\nname = 'x'\n"},
    )
    result = bot("check", *where, "--format", "json", *_upstream(scenario))
    assert result.returncode == 0, result.stderr
    assert [p["name"] for p in json.loads(result.stdout)["pins"]] == ["llama.cpp"]


# 5. Only the version file or patch directory selects a pin in the CLI.


def test_also_watch_alone_does_not_select_a_pin(scenario, tmp_path):
    where = _repo(
        tmp_path,
        {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n", "llama/server/CMakeLists.txt": "a\n"},
        {"llama/server/CMakeLists.txt": "b\n"},
    )
    result = bot("check", *where, "--format", "json", *_upstream(scenario))
    assert result.returncode == 0 and json.loads(result.stdout)["pins"] == []


# 6. argparse errors are one line.


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "--repo", ".", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["check"], "the following arguments are required: --repo"),
        (["check", "--repo", ".", "--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_argument_errors_are_one_line(args, words):
    result = bot(*args)
    assert words in one_line(result) and result.stdout == ""


# 8. A commit id in upper case is the same commit.


def test_upper_case_commit_id_is_accepted(scenario, tmp_path):
    sha = str(pygit2.Repository(str(scenario.upstream)).revparse_single(demo.NEW_TAG).peel(pygit2.Commit).id)
    where = _repo(
        tmp_path, {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n"}, {"LLAMA_CPP_VERSION": sha.upper() + "\n"}
    )
    result = bot("check", *where, "--format", "json", *_upstream(scenario))
    assert result.returncode == 0, result.stderr
    (pin,) = json.loads(result.stdout)["pins"]
    assert pin["new_ref"] == sha and pin["new_commit"] == sha


# 9. An --upstream-dir for a pin that does not exist.


def test_upstream_dir_for_an_unknown_pin_lists_the_pins(scenario):
    line = one_line(
        bot("check", "--repo", str(scenario.ollama), "--upstream-dir", f"llama-cpp={scenario.upstream}")
    )
    assert "no pin is named 'llama-cpp'" in line and "(pins: llama.cpp, mlx, mlx-c)" in line


# 10. A reader that goes away (`| head -1`) ends the output quietly.


def _closed_pipe():
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("command", ["check", "regenerate"])
def test_closed_stdout_is_quiet(scenario, work, command):
    write = _closed_pipe()
    try:
        result = bot(command, "--repo", str(work), *_upstream(scenario), stdout=write)
    finally:
        os.close(write)
    assert result.stderr == "" and result.returncode == 1  # the command's own status: patches need a change


# 5. Ctrl-C: one line, exit 130, and no file half-written.


def test_an_interrupted_run_says_so_in_one_line_and_leaves_every_patch_whole(
    scenario, work, monkeypatch, capsys
):
    from bot.cli import analysis

    target = work / "llama/compat/0003-clip-hooks.patch"
    before = target.read_bytes()

    def interrupted(src, dst):
        assert Path(src).read_bytes() != before  # the new text was all written beside it
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis.os, "replace", interrupted)
    code = cli.main(["regenerate", "--repo", str(work), *_upstream(scenario)])
    assert (code, capsys.readouterr().err) == (130, "llama-bot: interrupted\n")
    assert target.read_bytes() == before  # the old patch, whole
    assert sorted(p.name for p in target.parent.iterdir() if "llama-bot-part" in p.name) == []
