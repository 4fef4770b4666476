"""The wire check in a forked child beside the other detectors: what comes back is what one process gives.

Real forks, real pipes; a child that fails in any way leaves the work to the parent.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest

from bot.review import beside
from bot.review.beside import forked
from tests.fixtures import RepoBuilder
from tests.test_upstream_partial import BIG_V1, SMALL_V1, _analyse, _blob, _clone


@pytest.fixture
def two_cpus(monkeypatch):
    """Forking allowed whatever this machine and the test runner's threads are."""
    monkeypatch.setattr(beside, "_may_fork", lambda: True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_result_is_computed_in_a_child_with_the_notes_it_adds(two_cpus):
    notes = {"src/a.c": "old"}

    def compute():
        notes["src/a.c"] = "overwritten in the child"
        notes["tools/server/x.cpp"] = "abc"
        return [os.getpid(), "drafts"]

    with forked(compute, notes) as child:
        pid, drafts = child.result()

    assert pid != os.getpid() and drafts == "drafts"
    assert notes == {"src/a.c": "old", "tools/server/x.cpp": "abc"}  # a note kept is never replaced


@pytest.mark.parametrize(
    "failure",
    [
        lambda: (_ for _ in ()).throw(ValueError("only in the child")),
        lambda: os.kill(os.getpid(), signal.SIGKILL),
        lambda: lambda: None,  # an answer that cannot be pickled
        lambda: os._exit(0),  # gone without a word
    ],
    ids=["raises", "killed", "unpicklable", "silent"],
)
def test_a_child_that_fails_leaves_the_work_to_the_parent(two_cpus, failure):
    parent = os.getpid()
    notes: dict[str, str] = {}

    def compute():
        if os.getpid() != parent:
            notes["noted by the failed child"] = "x"
            return failure()
        return ["computed here"]

    with forked(compute, notes) as child:
        assert child.result() == ["computed here"]
    assert notes == {}


def test_an_error_of_the_detector_is_raised_where_one_process_raises_it(two_cpus):
    def compute():
        raise ValueError("the clone lacks tools/server/x.cpp")

    with forked(compute, {}) as child, pytest.raises(ValueError, match="lacks tools/server/x.cpp"):
        child.result()


def test_a_review_that_stops_early_kills_and_reaps_its_child(two_cpus):
    pids = []

    def compute():
        time.sleep(60)
        return []

    start = time.monotonic()
    with pytest.raises(RuntimeError), forked(compute, {}) as child:
        pids.append(child._pid)
        raise RuntimeError("another detector failed")
    assert time.monotonic() - start < 30
    assert pids[0] and not _alive(pids[0])


def test_no_fork_while_another_thread_runs():
    """A fork copies the locks other threads hold: with one running, the detector runs in this process."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with forked(os.getpid, {}) as child:
            assert child.result() == os.getpid()
    finally:
        stop.set()
        other.join()


def test_a_server_source_the_child_cannot_read_is_reported_by_the_review(tmp_path, two_cpus):
    """The wire check, in its child, finds an unchanged llama-server source missing from a partial clone
    (the remote cannot send it): the review names it as one process does."""
    src = RepoBuilder(tmp_path / "src.git")
    src.repo.config["uploadpack.allowFilter"] = True
    src.repo.config["uploadpack.allowAnySHA1InWant"] = True
    server = {
        "tools/server/server-http.cpp": 'void send(Sink & s) { s.write("data: " + body + "\\n\\n"); }\n',
        "tools/server/server-context.cpp": 'json reply() { return {{"content", text}}; }\n',
    }
    src.commit(
        "base", {"src/big.c": BIG_V1, "src/small.c": SMALL_V1, "CMakeLists.txt": "project(up)\n", **server}
    )
    src.tag("v1")
    changed = server["tools/server/server-context.cpp"].replace("text", "text + more")
    src.commit("server: say more (#13)", {"tools/server/server-context.cpp": changed})
    src.tag("v2")
    part = _clone(src, tmp_path / "part.git", "blob:none")
    lost = str(_blob(src.repo, "v2", "tools/server/server-http.cpp"))
    (src.path / "objects" / lost[:2] / lost[2:]).unlink()

    pin = _analyse(part).pins[0].to_json()

    (note,) = [f for f in pin["findings"] if f["title"].endswith("(missing from the upstream clone)")]
    assert re.findall(r"^- `([^`]+)`", note["detail"], re.MULTILINE) == ["tools/server/server-http.cpp"]
