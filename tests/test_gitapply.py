"""The real `git apply` as the last word on a patch stack."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bot.engine import placing
from bot.patches import gitapply
from tests.gitutil import make_patch, run, upstream_pair

OLD = "int f(void) {\n" + "".join(f"    {c}();\n" for c in "abcdefg") + "}\n"


def test_a_stack_git_accepts_has_no_refusals_and_a_broken_one_names_the_patch():
    first = make_patch(OLD, OLD.replace("b();", "b(1);"), "f.c")
    after_first = OLD.replace("b();", "b(1);")
    second = make_patch(after_first, after_first.replace("d();", "d(2);"), "f.c")
    stale = make_patch(OLD, OLD.replace("b();", "b(3);"), "f.c")  # written before the first patch
    assert gitapply.refusals({"f.c": OLD.encode()}, [("1", first), ("2", second)]) == {}
    refused = gitapply.refusals({"f.c": OLD.encode()}, [("1", first), ("stale", stale), ("2", second)])
    assert list(refused) == ["stale"] and "patch failed: f.c" in refused["stale"]
    assert gitapply.refusals({}, []) == {}


def test_a_rebuilt_patch_git_would_refuse_is_reported_as_a_conflict(tmp_path, monkeypatch):
    new = "// upstream comment\n" * 3 + OLD.replace("b();", "b(1);").replace("g();", "g(2);")
    up = upstream_pair(tmp_path, {"src/f.c": OLD}, {"src/f.c": new})
    patch = make_patch(OLD, OLD.replace("d();\n", "d();\n    ollama_hook();\n"), "src/f.c")
    good = run(up, {"llama/compat/0001-hook.patch": patch}).pins[0].patches[0]
    assert good.status == "regenerated" and good.new_text is not None

    def corrupted(
        pf, sections
    ):  # a rebuild that git cannot apply: its context names a line that is not there
        return b"".join(sections).replace(b" e();", b" not_upstream();")

    monkeypatch.setattr(placing, "render", corrupted)  # the verification step, not the engine, must catch it
    (result,) = run(up, {"llama/compat/0001-hook.patch": patch}).pins[0].patches
    assert (result.status, result.regenerated, result.new_text) == ("conflict", None, None)
    assert result.message.startswith(
        "llama-bot placed its hunks, but the real `git apply` refuses the rebuilt "
        "patch on v2 in stack order (error: patch failed: src/f.c:"
    )


def test_a_git_that_ran_out_of_time_is_asked_again_the_next_time(tmp_path, monkeypatch):
    """Its verdict on a stack is kept, but a run that did not end (a loaded machine) says nothing of the
    patches: the next check runs git again instead of reporting the same failure."""
    import subprocess

    from bot.cache import facts

    files, stack = {"f.c": OLD.encode()}, [("1", make_patch(OLD, OLD.replace("b();", "b(1);"), "f.c"))]

    def too_slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], gitapply.TIMEOUT)

    with facts.using(facts.FactStore(tmp_path / "facts")):
        with monkeypatch.context() as slow:
            slow.setattr(gitapply.subprocess, "run", too_slow)
            assert gitapply.refusals(files, stack)["1"].startswith("git apply could not run")
        assert gitapply.refusals(files, stack) == {}
        assert gitapply.refusals(files, stack) == {}  # now kept


def test_a_git_apply_dies_with_the_process_that_started_it(tmp_path):
    """kill -9 of the analysis while its `git apply` runs: the git goes too, not left running alone."""
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho $$ > "{tmp_path}/git.pid"\nexec sleep 30\n')  # a git apply that hangs
    fake.chmod(0o755)
    analysis = subprocess.Popen(
        [sys.executable, "-c", "from bot.patches import gitapply; gitapply.refusals({}, [('1', b'')])"],
        env={**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"},
    )
    pid_file = tmp_path / "git.pid"
    give_up = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < give_up and analysis.poll() is None, "git apply never started"
        time.sleep(0.02)
    analysis.kill()
    analysis.wait()
    git = int(pid_file.read_text())
    give_up = time.monotonic() + 5
    while _runs(git) and time.monotonic() < give_up:
        time.sleep(0.02)
    alive = _runs(git)
    if alive:
        os.kill(git, signal.SIGKILL)
    assert not alive, "the git apply of a killed analysis still runs"


def _runs(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaped yet does not)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
