"""The build and wire checks in a forked copy beside the other detectors: what comes back is what one
process gives.

Real forks, real pipes; a child that fails in any way leaves the work to the parent.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

from bot.child.sandbox import AskFailed, Channel
from bot.repos.snapshot import MemorySnapshot
from bot.review import beside
from bot.review.beside import forked
from tests.fixtures import review_one_commit
from tests.test_upstream_partial import _analyse, _blob, _clone, server_upstream


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


def test_a_fork_needs_a_second_cpu_and_no_other_thread(monkeypatch):
    """A fork copies the locks other threads hold: with one running, or with one CPU, the checks run in
    this process."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    alone = threading.active_count
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # whatever threads earlier tests left
    with forked(os.getpid, {}) as child:
        assert child.forked and child.result() != os.getpid()
    monkeypatch.setattr(threading, "active_count", alone)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with forked(os.getpid, {}) as child:
            assert not child.forked and child.result() == os.getpid()
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    with forked(os.getpid, {}) as child:
        assert not child.forked and child.result() == os.getpid()


def test_a_server_source_the_child_cannot_read_is_reported_by_the_review(tmp_path, two_cpus):
    """The wire check, in its child, finds an unchanged llama-server source missing from a partial clone
    (the remote cannot send it): the review names it as one process does."""
    src = server_upstream(tmp_path / "src.git")
    src.repo.config["uploadpack.allowAnySHA1InWant"] = True
    part = _clone(src, tmp_path / "part.git", "blob:none")
    lost = str(_blob(src.repo, "v2", "tools/server/server-http.cpp"))
    (src.path / "objects" / lost[:2] / lost[2:]).unlink()

    pin = _analyse(part).pins[0].to_json()

    (note,) = pin["unchecked"]
    assert note.startswith(
        "1 upstream file it needed (`tools/server/server-http.cpp` at the new ref), missing "
    )


class AskedOnlyHere(MemorySnapshot):
    """Ollama's files as the service's analysis child reads them: only that process may ask for them."""

    def __init__(self, files):
        super().__init__(files)
        self.pid = os.getpid()

    def read(self, path):
        if os.getpid() != self.pid:
            raise AskFailed(f"a forked copy of the analysis cannot ask for {path}")
        return super().read(path)


def _wire_review(tmp_path, old: str, new: str):
    """The review in a process of its own, as the service's analysis child: no inventory of an earlier one."""
    from bot.review.consumers import contracts
    from tests.test_review_wire import OLLAMA, UPSTREAM

    contracts._LAST.clear()

    path = "tools/server/server-schema.cpp"
    assert UPSTREAM[path].count(old) == 1
    ollama = {p: t.encode() for p, t in OLLAMA.items()}
    changes = {path: UPSTREAM[path].replace(old, new)}
    return review_one_commit(tmp_path, UPSTREAM, changes, ollama, AskedOnlyHere)


def test_the_forked_checks_read_only_what_the_review_read_before_the_fork(tmp_path, monkeypatch, caplog):
    """With Ollama's files readable in the review's process alone (the service's analysis child asks the
    service for each), the forked checks find what one process finds without asking for any."""
    rename = ('field_num("n_predict", params.n_predict))', 'field_num("max_tokens", params.n_predict))')
    monkeypatch.setattr(beside, "_may_fork", lambda: False)
    alone = _wire_review(tmp_path / "alone", *rename)
    monkeypatch.setattr(beside, "_may_fork", lambda: True)

    with caplog.at_level("WARNING", logger="bot.review.beside"):
        forked_review = _wire_review(tmp_path / "forked", *rename)

    assert any("`n_predict` of POST /completion" in f.title for f in alone if f.severity == "high")
    assert forked_review == alone
    assert not caplog.records


def test_checks_that_need_a_file_read_only_for_some_bumps_run_in_the_review_process(
    tmp_path, monkeypatch, caplog
):
    """A value llama-server now refuses sends the wire check to Ollama's documentation, which nothing read
    before the fork: the copy cannot ask for it, and the checks run again where it can."""
    bound = ("params.penalty_last_n))\n        ->set_hard_limits(-1, INT32_MAX)",) * 2
    bound = (bound[0], bound[0].replace("(-1, INT32_MAX)", "(0, INT32_MAX)"))
    monkeypatch.setattr(beside, "_may_fork", lambda: False)
    alone = _wire_review(tmp_path / "alone", *bound)
    monkeypatch.setattr(beside, "_may_fork", lambda: True)

    with caplog.at_level("WARNING", logger="bot.review.beside"):
        forked_review = _wire_review(tmp_path / "forked", *bound)

    (refused,) = [f for f in alone if "rejects `repeat_last_n` -1" in f.title]
    assert any(r.path == "docs/modelfile.md" for r in refused.local_refs)
    assert forked_review == alone
    assert [r.getMessage() for r in caplog.records] == [
        "the forked checks failed (wait status 256): they run in the review's process"
    ]


def test_a_forked_copy_of_the_analysis_child_never_writes_to_its_channel(two_cpus):
    """The sandbox's channel carries one process's questions: a copy's question fails, its note is dropped,
    and the child's own exchange goes on in order."""
    parent_end, child_end = multiprocessing.Pipe()
    channel = Channel(child_end)

    def in_copy():
        if os.getpid() == channel._pid:
            return "ran in the child itself"
        channel.tell("facts", 1, 2)
        with pytest.raises(AskFailed, match="forked copy"):
            channel.ask("read", "head", "go.mod")
        return "asked nothing"

    with forked(in_copy, {}) as copy:
        assert copy.result() == "asked nothing"
    assert not parent_end.poll(0.1)
    parent_end.send(("answer", b"module x\n"))
    assert channel.ask("read", "head", "go.mod") == b"module x\n"
    assert parent_end.recv() == ("ask", ("read", "head", "go.mod"))


def test_the_childs_look_ups_in_the_facts_store_are_counted_here(tmp_path, two_cpus):
    from bot.cache import facts

    kind = facts.Extractor("beside-test", 1, "bot.review.beside")
    store = facts.FactStore(tmp_path / "facts")
    with facts.using(store):
        facts.remembered(kind, ("kept",), lambda: 1)
        with forked(lambda: [facts.remembered(kind, (k,), lambda: 2) for k in ("kept", "new")], {}) as child:
            assert child.result() == [1, 2]
    assert (store.hits, store.misses) == (1, 2)  # the parent's miss, the child's hit and miss


def test_a_fork_the_system_refuses_leaves_the_work_to_the_review(two_cpus, monkeypatch):
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    with forked(os.getpid, {}) as child:
        assert not child.forked
        assert child.result() == os.getpid()


def test_what_the_copy_read_of_the_inventory_serves_the_next_review(tmp_path, monkeypatch, two_cpus):
    """The copy keeps the inventory groups the wire check read in the facts store: the next review of the
    same trees reads Ollama's Go program in neither process, and says the same."""
    from bot.cache import facts
    from bot.review.consumers import contracts as inventory

    rename = ('field_num("n_predict", params.n_predict))', 'field_num("max_tokens", params.n_predict))')
    with facts.using(facts.FactStore(tmp_path / "facts")):
        first = _wire_review(tmp_path / "first", *rename)
        inventory._LAST.clear()  # nothing kept in this process: only the store can serve it
        monkeypatch.setattr(inventory, "GoProgram", lambda *a: pytest.fail("the Go program read again"))
        again = _wire_review(tmp_path / "again", *rename)
    assert again == first
    assert any("`n_predict` of POST /completion" in f.title for f in first if f.severity == "high")


def test_a_re_check_whose_wire_items_were_kept_forks_nothing(tmp_path, monkeypatch):
    """What is left beside the others once the wire check's items are found kept (the build check) would not
    pay for a process: a re-check runs it in the review's, and finds the same."""
    from bot.cache import facts

    rename = ('field_num("n_predict", params.n_predict))', 'field_num("max_tokens", params.n_predict))')
    monkeypatch.setattr(beside, "_may_fork", lambda: True)
    forks = []
    fork = os.fork
    monkeypatch.setattr(beside.os, "fork", lambda: forks.append(1) or fork())
    with facts.using(facts.FactStore(tmp_path / "facts")):
        first = _wire_review(tmp_path / "first", *rename)
        assert len(forks) == 1
        again = _wire_review(tmp_path / "again", *rename)
    assert len(forks) == 1 and again == first
    assert any("`n_predict` of POST /completion" in f.title for f in first if f.severity == "high")


def test_what_the_parent_hands_after_the_fork_reaches_the_child_and_nothing_is_handed_in_one_process(
    two_cpus,
):
    handover = beside.Handover()

    def compute():
        return [os.getpid(), handover.received()]

    with forked(compute, {}, handover=handover) as child:
        handover.hand({"launch": ("--port",)})  # read here while the child works
        pid, received = child.result()
    assert pid != os.getpid() and received == {"launch": ("--port",)}

    alone = beside.Handover()
    with forked(lambda: alone.received(), {}, worth=False, handover=alone) as here:
        alone.hand("never sent: there is no child")
        assert here.result() is None


def test_a_child_handed_nothing_leaves_the_work_to_the_parent(two_cpus):
    handover = beside.Handover()

    def compute():
        return [os.getpid(), handover.received()]

    with forked(compute, {}, handover=handover) as child:
        handover.close()  # the parent closes the pipe without a word: the child's wait fails
        pid, received = child.result()
    assert pid == os.getpid() and received is None
    # a parent that asks for the result without handing anything closes the pipe first: no deadlock
    handover = beside.Handover()
    with forked(compute, {}, handover=handover) as child:
        pid, received = child.result()
    assert pid == os.getpid() and received is None
