"""`python -m bot check|regenerate` end to end on the demo repositories, as a user runs it."""

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from bot.repos.mirrors import mirror_path
from tests import demo
from tests.fixtures import RepoBuilder
from tests.gitutil import git_apply_stack


def bot(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, cwd=cwd, env=env, check=False
    )


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return demo.build(tmp_path_factory.mktemp("demo"))


def _check(scenario, *extra):
    return bot(
        "check", "--repo", str(scenario.ollama), "--upstream-dir", f"llama.cpp={scenario.upstream}", *extra
    )


def test_json_report_has_every_status_and_exit_1(scenario, tmp_path):
    result = _check(scenario, "--format", "json", "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    (pin,) = json.loads(result.stdout)["pins"]
    assert (pin["name"], pin["old_ref"], pin["new_ref"]) == ("llama.cpp", demo.OLD_TAG, demo.NEW_TAG)
    assert (
        pin["compare_url"] == f"https://github.com/ggml-org/llama.cpp/compare/{demo.OLD_TAG}...{demo.NEW_TAG}"
    )
    statuses = {p["path"].rsplit("/", 1)[1]: p["status"] for p in pin["patches"]}
    assert statuses == {
        "0001-ggml-version.patch": "clean",
        "0002-vocab-bos.patch": "offset",
        "0003-clip-hooks.patch": "regenerated",
        "0004-clip-embd.patch": "fuzzy",
        "0005-clip-warmup.patch": "conflict",
        "0006-sampling-min-p.patch": "upstreamed",
        "0007-laguna.patch": "conflict",
    }
    findings = {(f["severity"], f["area"], f["title"]) for f in pin["findings"]}
    assert ("high", "server", "llama-server flag --flash-attn was removed; Ollama passes it") in findings
    assert ("medium", "build", "New CMake option LLAMA_SUBPROCESS: decide its value") in findings
    laguna = pin["patches"][-1]
    assert "LLM_ARCH_LAGUNA = 54" in laguna["message"] and "LLM_ARCH_OLMO" in laguna["message"]
    written = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.patch"))
    assert written == ["llama/compat/0003-clip-hooks.patch", "llama/compat/0004-clip-embd.patch"]
    assert f"  {tmp_path}/out/llama/compat/0003-clip-hooks.patch\n" in result.stderr
    again = _check(scenario, "--format", "json", "--out", str(tmp_path / "out"))
    assert f"  {tmp_path}/out/llama/compat/0003-clip-hooks.patch (already there, unchanged)\n" in again.stderr
    # The stack as CMake would apply it, with the rebuilt patches in place, passes the real git apply.
    repo = pygit2.Repository(str(scenario.ollama))
    stack = []
    for p in pin["patches"]:
        if p["status"] in ("clean", "offset"):
            stack.append(repo.revparse_single(f"HEAD:{p['path']}").data)
        elif p["status"] in ("regenerated", "fuzzy"):
            stack.append((tmp_path / "out" / p["path"]).read_bytes())
    git_apply_stack(scenario.upstream, demo.NEW_TAG, stack, tmp_path / "work")


def test_text_is_the_checklist_for_a_terminal(scenario, monkeypatch):
    """`--format text` (the default on a terminal): no HTML, no ids, no pull-request commands; the advice
    is the command line's."""
    result = _check(scenario, "--format", "text")
    assert result.returncode == 1
    text = result.stdout
    assert f"### llama.cpp: `{demo.OLD_TAG}` → `{demo.NEW_TAG}`" in text
    assert "- [ ] Run `go test ./...`\n" in text
    assert "1 rebuilt (`llama-bot regenerate` writes it in place)" in text
    for html in ("<!--", "<details>", "<summary>", "</details>", "<sub>", "`/llama ", "regenerate-patches"):
        assert html not in text, html
    assert "Patch details:\n" in text and "  Details:\n" in text
    from bot.cli import analysis

    monkeypatch.setattr(analysis.sys.stdout, "isatty", lambda: True)
    assert analysis.checklist_format(None) == "text" and analysis.checklist_format("md") == "md"
    monkeypatch.setattr(analysis.sys.stdout, "isatty", lambda: False)
    assert analysis.checklist_format(None) == "md"  # piped: the pull request's, as scripts read it


def test_markdown_is_the_checklist(scenario):
    result = _check(scenario)
    assert result.returncode == 1
    assert f"### llama.cpp: `{demo.OLD_TAG}` → `{demo.NEW_TAG}`" in result.stdout
    assert "- [ ] Run `go test ./...` <!-- id:go-test -->" in result.stdout
    assert 'git apply --check "$OLLAMA"/llama/compat/0005-clip-warmup.patch' in result.stdout


def test_regenerate_rewrites_only_rebuilt_patches_and_is_idempotent(scenario, tmp_path):
    work = tmp_path / "ollama"
    subprocess.run(["git", "clone", "-q", "-b", "bump", str(scenario.ollama), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "branch", "-q", "main", "origin/main"], check=True)
    args = ("regenerate", "--repo", str(work), "--upstream-dir", f"llama.cpp={scenario.upstream}")
    first = bot(*args)
    assert first.returncode == 1  # conflicts remain for a human
    assert "rewrote llama/compat/0003-clip-hooks.patch" in first.stdout
    assert "left llama/compat/0002-vocab-bos.patch (offset" in first.stdout  # applies as it is: not rewritten
    status = ["git", "-C", str(work), "status", "--porcelain"]
    changed = subprocess.run(status, check=True, capture_output=True, text=True).stdout
    assert sorted(line[3:] for line in changed.splitlines()) == [
        "llama/compat/0003-clip-hooks.patch",
        "llama/compat/0004-clip-embd.patch",
    ]
    subprocess.run(["git", "-C", str(work), "commit", "-qam", "regenerated"], check=True)
    second = bot(*args)
    assert "rewrote" not in second.stdout
    assert (
        subprocess.run(
            ["git", "-C", str(work), "status", "--porcelain"], check=True, capture_output=True, text=True
        ).stdout
        == ""
    )


@pytest.mark.parametrize(
    "content, words",
    [
        ("--upload-pack=touch /tmp/x\n", "LLAMA_CPP_VERSION holds '--upload-pack=touch /tmp/x'"),
        ("b99999\n", "LLAMA_CPP_VERSION names 'b99999', which is not a tag or commit"),
        ("b1\nb2\n", "LLAMA_CPP_VERSION holds 2 lines"),
        (
            "main\n",
            "LLAMA_CPP_VERSION names 'main', which is not a tag or commit",
        ),  # a branch, not a fixed state
    ],
)
def test_bad_version_files_are_exit_2_with_one_line(tmp_path, scenario, content, words):
    repo = RepoBuilder(tmp_path / "o", bare=False)
    repo.commit("pin", {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n"})
    repo.branch("main")
    repo.commit("bump", {"LLAMA_CPP_VERSION": content})
    result = bot(
        "check",
        "--repo",
        str(tmp_path / "o"),
        "--base",
        "HEAD~1",
        "--upstream-dir",
        f"llama.cpp={scenario.upstream}",
    )
    assert result.returncode == 2 and words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_malformed_config_is_exit_2_naming_the_key(tmp_path):
    repo = RepoBuilder(tmp_path / "o", bare=False)
    repo.commit("cfg", {"LLAMA_CPP_VERSION": "b1\n", ".github/llama-bot.toml": "[[pin]]\nname = 'x'\n"})
    repo.commit("bump", {"LLAMA_CPP_VERSION": "b2\n"})
    result = bot("check", "--repo", str(tmp_path / "o"), "--base", "HEAD~1")  # the base's file counts
    assert result.returncode == 2 and "pin[0]: missing key 'version_file'" in result.stderr


def test_not_a_repository_and_unknown_revision(tmp_path, scenario):
    assert (
        bot("check", "--repo", str(tmp_path)).stderr.strip()
        == f"llama-bot: --repo {tmp_path}: not a git repository"
    )
    result = bot("check", "--repo", str(scenario.ollama), "--head", "nope")
    assert result.returncode == 2 and "--head nope: unknown revision" in result.stderr


def test_unchanged_pin_reports_nothing_and_exits_0(tmp_path):
    repo = RepoBuilder(tmp_path / "o", bare=False)
    repo.commit("pin", {"LLAMA_CPP_VERSION": "b1\n"})
    repo.branch("main")
    repo.commit("docs", {"README.md": "hi\n"})
    result = bot("check", "--repo", str(tmp_path / "o"), "--format", "json")
    head = repo.repo.revparse_single("HEAD")
    version = bot("--version").stdout.strip().removeprefix("llama-bot ")
    assert version and version != "unknown"  # the installed package's
    assert result.returncode == 0 and json.loads(result.stdout) == {
        "version": version,
        "base": str(head.id),  # the merge-base with main, which is HEAD here
        "head": str(head.id),
        "pins": [],
    }


def test_mirror_fetch_through_url_rewrite(tmp_path, scenario):
    mirrors = tmp_path / "srv" / "ggml-org"
    mirrors.mkdir(parents=True)
    (mirrors / "llama.cpp").symlink_to(scenario.upstream)
    env = {
        "PATH": "/usr/bin:/bin",
        "LLAMA_BOT_DATA_DIR": str(tmp_path / "data"),
        "LLAMA_BOT_URL_INSTEADOF": f"{tmp_path}/srv/=https://github.com/",
        "HOME": str(tmp_path),
    }
    result = bot(
        "check",
        "--repo",
        str(scenario.ollama),
        "--format",
        "json",
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.returncode == 1, result.stderr
    assert mirror_path(tmp_path / "data", "llama.cpp", f"{tmp_path}/srv/ggml-org/llama.cpp").is_dir()


def _check_twice(scenario, tmp_path, monkeypatch, capsys, between) -> tuple[str, str]:
    """The JSON report of two checks of the scenario's bump in this process, on one data dir; `between()`
    runs before the second."""
    import bot.cli
    from bot.cli import analysis

    monkeypatch.setenv("LLAMA_BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(analysis, "run_limited", lambda target, limits: target(None))  # in this process
    args = ["check", "--repo", str(scenario.ollama), "--upstream-dir", f"llama.cpp={scenario.upstream}"]
    args += ["--format", "json", "--quiet"]
    assert bot.cli.main(args) == 1
    first = capsys.readouterr().out
    between()
    assert bot.cli.main(args) == 1
    return first, capsys.readouterr().out


def test_a_second_check_of_the_same_commits_interprets_no_cmake_file(scenario, tmp_path, monkeypatch, capsys):
    """Which pins a change concerns is read from the head's CMake files, as the patch stage reads where the
    build applies patches: kept in the data dir's facts store, a second check interprets none of them."""
    from bot.repos import buildpatches

    first, second = _check_twice(
        scenario,
        tmp_path,
        monkeypatch,
        capsys,
        lambda: monkeypatch.setattr(
            buildpatches, "_Interpreter", lambda *a: pytest.fail("interpreted again")
        ),
    )
    assert second == first


def test_a_second_check_of_the_same_commits_places_no_hunk_and_runs_no_git(
    scenario, tmp_path, monkeypatch, capsys
):
    """What checking each patch found (a rebuilt one here) and git's verdict on the stack are kept by the
    patches' texts and the trees they go on: the second check of the same commits reports the same."""
    from bot.engine import patch
    from bot.patches import gitapply

    def neither_again():
        monkeypatch.setattr(patch, "_check_parsed", lambda *a: pytest.fail("placed again"))
        monkeypatch.setattr(gitapply, "_refusals", lambda *a: pytest.fail("git apply ran again"))

    first, second = _check_twice(scenario, tmp_path, monkeypatch, capsys, neither_again)
    assert second == first and '"status": "regenerated"' in first


def test_the_script_leaves_after_its_exit_handlers_with_all_its_output(tmp_path):
    """`run` ends the process without tearing the interpreter down: what is buffered is written, the exit
    handlers run, the status is main's."""
    code = (
        "import atexit, sys\n"
        "from bot import cli\n"
        "atexit.register(lambda: print('exit handler ran', file=sys.stderr))\n"
        "print('x' * 100000, end='')\n"  # still in stdout's buffer when run() leaves
        f"sys.argv = ['llama-bot', 'check', '--repo', {str(tmp_path / 'none')!r}]\n"
        "cli.run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == "x" * 100000
    assert "not a git repository" in done.stderr and done.stderr.rstrip().endswith("exit handler ran")


def test_the_script_waits_for_a_thread_still_running(tmp_path):
    """With another thread running (the service's workers), `run` exits as Python does: after the thread."""
    code = (
        "import sys, threading, time\n"
        "from bot import cli\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', file=sys.stderr))).start()\n"
        f"sys.argv = ['llama-bot', 'check', '--repo', {str(tmp_path / 'none')!r}]\n"
        "cli.run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.rstrip().endswith("thread done")
