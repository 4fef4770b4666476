"""Job logic against in-process fakes of the GitHub resources (tests/fakejobs.py): what each job posts,
in which order, and what it leaves in its progress for a resumed attempt."""

import asyncio
import threading

import pytest

from bot.gh.progress import JobProgress
from bot.model import PatchResult, PinReport, Report
from bot.render.env import RUNNING
from bot.stores.validationstore import ValidationStore
from bot.times import utc_now
from bot.worker import analysis, closed, commands, platforms
from bot.worker.context import Outcome
from tests.fakejobs import COMMENTED_AT, FakeGit, FakeGitHub, job, pull

PATCH = "llama/compat/0001-fix.patch"


@pytest.fixture
def store(tmp_path):
    store = ValidationStore(tmp_path / "validation.sqlite3")
    yield store
    store.close()


def bump_report(*patches: PatchResult) -> Report:
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40, "https://x/compare/b1...b2"
    )
    pin.patches = list(patches)
    return Report(pins=[pin])


async def test_a_pr_that_no_longer_touches_a_pin_retires_its_checklist(store):
    gh = FakeGitHub(job("analysis"), store)
    gh.comment.body = "<!-- llama-bot:checklist -->\n- [x] Run `go test ./...` <!-- id:go-test -->\n"
    gh.pulls.changed = ["README.md"]

    assert await analysis.analysis_job(gh.context()) is Outcome.UNTOUCHED
    assert f"As of commit `{'h' * 12}`" in gh.comment.body and "changes no pinned upstream" in gh.comment.body
    assert "llama-bot:ticked go-test" in gh.comment.body  # the tick survives for a later checklist
    assert gh.checks.progress.check_runs == {}  # no check run for an untouched PR


async def test_a_head_that_moves_during_the_analysis_cancels_its_check_runs_and_posts_nothing(store):
    gh = FakeGitHub(job("analysis", head_sha="h" * 40), store, report=bump_report())
    gh.pulls.changed = ["LLAMA_CPP_VERSION"]
    gh.pulls.heads = [
        "h" * 40,
        "n" * 40,
    ]  # the first read sees the job's head, the one after the analysis not

    assert await analysis.analysis_job(gh.context()) is Outcome.SUPERSEDED
    conclusions = {c for runs in gh.checks.completed.values() for c, _ in runs}
    assert conclusions == {"cancelled"} and len(gh.checks.completed) == 2
    assert gh.comment.bodies and all(RUNNING in b for b in gh.comment.bodies)  # only progress notes


async def test_a_pin_the_engine_could_not_check_fails_its_check_runs_with_the_reason(store):
    gh = FakeGitHub(job("analysis"), store, errors={"llama.cpp": "b2 is not a tag of the upstream"})
    gh.pulls.changed = ["LLAMA_CPP_VERSION"]

    assert await analysis.analysis_job(gh.context()) is Outcome.DONE
    assert gh.checks.failed == [("h" * 40, "b2 is not a tag of the upstream")]
    assert "b2 is not a tag of the upstream" in gh.comment.body


async def test_someone_without_write_access_is_answered_once_and_nothing_runs(store):
    gh = FakeGitHub(
        job("command", body="/llama recheck", author="visitor", comment_id=9, default_branch="main"), store
    )
    gh.pulls.role = "read"

    await commands.command_job(gh.context())
    await commands.command_job(gh.context())  # the same job tried again: its progress says it answered

    assert len(gh.comment.replies) == 1 and "visitor" in gh.comment.replies[0]
    assert gh.pulls.reactions == [] and gh.comment.body is None


def regenerate_job(gh_pull: dict, store, **fake) -> FakeGitHub:
    rebuilt = PatchResult(PATCH, "regenerated", "rebuilt", new_text=b"new patch\n")
    gh = FakeGitHub(
        job(
            "command",
            body="/llama regenerate-patches",
            author="maintainer",
            comment_id=9,
            default_branch="main",
            comment_created_at=COMMENTED_AT,
        ),
        store,
        report=bump_report(rebuilt),
        **fake,
    )
    gh.pulls.pr, gh.pulls.changed, gh.pulls.head_files = (
        gh_pull,
        ["LLAMA_CPP_VERSION"],
        {PATCH: b"old patch\n"},
    )
    return gh


async def test_regenerated_patches_are_committed_to_the_head_branch(store):
    gh = regenerate_job(pull(), store)

    await commands.command_job(gh.context())

    ((branch, paths, message),) = gh.git.commits
    assert (branch, paths) == ("bump", [PATCH]) and message.startswith(
        "Regenerate carried patches for llama.cpp b2"
    )
    assert "Committed" in gh.comment.replies[-1]
    assert gh.pulls.reactions == [(9, "eyes")]
    assert gh.progress.commands_done == 1


async def test_a_fork_without_maintainer_edits_gets_the_patches_in_the_reply(store):
    gh = regenerate_job(pull(fork=True), store)

    await commands.command_job(gh.context())

    assert gh.git.commits == []
    assert (
        "new patch" in gh.comment.replies[-1]
        and "does not allow edits by maintainers" in gh.comment.replies[-1]
    )


async def test_a_branch_that_moved_on_is_not_committed_to(store):
    gh = regenerate_job(pull(), store, git=FakeGit(moved_to="m" * 40))

    await commands.command_job(gh.context())

    assert gh.git.commits == [] and "m" * 12 in gh.comment.replies[-1]


async def test_a_resumed_dispatch_that_github_refused_is_not_dispatched_again(store):
    gh = FakeGitHub(job("command", attempts=2), store)
    gh.progress.validation = {"command-0": {"metal": {"request_id": "r1", "error": "GitHub answered 404"}}}
    chosen = [p for p in gh.pulls.config_.platforms if p.name == "metal"]

    dispatched, errors = await platforms.dispatch_platforms(
        gh.context(), pull(), "h" * 40, chosen, "command-0"
    )

    assert (dispatched, errors) == ([], ["GitHub answered 404"])
    assert gh.actions.dispatched == [] and gh.checks.created == []


async def test_a_dispatch_makes_its_check_run_and_records_it_before_the_call(store):
    gh = FakeGitHub(job("command"), store)
    chosen = [p for p in gh.pulls.config_.platforms if p.name == "metal"]

    (d,), errors = await platforms.dispatch_platforms(gh.context(), pull(), "h" * 40, chosen, "command-0")

    assert errors == [] and [w for w, _ in gh.actions.dispatched] == ["test-llamacpp-update.yaml"]
    assert gh.checks.created[0]["external_id"] == d.request_id
    assert store.get(d.request_id).check_run_id == gh.checks.created[0]["id"]
    # saved once while pending (before the check run), then with the outcome
    assert gh.saved[0]["validation"]["command-0"]["metal"]["pending"] is True
    assert gh.progress.validation["command-0"]["metal"] == {"request_id": d.request_id, "error": None}


async def test_a_closed_fork_pr_deletes_the_branch_made_for_it(store):
    gh = FakeGitHub(job("closed", fork=True), store)

    assert await closed.closed_job(gh.context()) is Outcome.DONE
    assert gh.git.deleted == ["llama-bot/pr-7"]


@pytest.mark.parametrize(("head", "deleted"), [("c0ffee", ["llama-bot/bump-llama.cpp-b200"]), ("beef", [])])
async def test_a_closed_bump_pr_deletes_its_branch_only_where_the_bot_left_it(store, head, deleted):
    """The branch goes when its head is the commit the bot last set it to; one a person moved since stays."""
    branch = "llama-bot/bump-llama.cpp-b200"
    store.made_branch("ollama/ollama", branch, "c0ffee")
    gh = FakeGitHub(job("closed", fork=False, head_ref=branch, head_sha=head), store)

    assert await closed.closed_job(gh.context()) is Outcome.DONE
    assert gh.git.deleted == deleted
    assert store.branch_made("ollama/ollama", branch) == (None if deleted else "c0ffee")


def test_progress_keeps_the_keys_a_stored_job_has():
    saved = {
        "comment_id": 7,
        "checks_sha": "a" * 40,
        "check_runs": {"x": 1},
        "commands_done": 2,
        "other": 1,
    }
    progress = JobProgress.from_dict(saved)
    assert (progress.checks_sha, progress.check_runs, progress.commands_done) == ("a" * 40, {"x": 1}, 2)
    assert progress.to_dict() == {k: v for k, v in saved.items() if k != "other"}
    assert JobProgress().to_dict() == {}


async def test_the_analysis_threads_fetch_notes_are_posted_in_order_without_it_waiting(store):
    gh = FakeGitHub(job("analysis"), store)
    banner = analysis.FetchBanner(gh.context(), None, "h" * 40, utc_now())
    thread = threading.Thread(target=lambda: [banner.fetching("mlx", True), banner.fetching("mlx", False)])
    thread.start()
    thread.join(5)  # the notes are left, not posted, while this loop is blocked: the thread is done
    assert not thread.is_alive() and gh.comment.bodies == []
    await asyncio.sleep(0.05)
    await banner.close()
    assert ["fetching upstream mlx" in b for b in gh.comment.bodies] == [True, False]


def test_a_fetch_note_once_the_services_loop_closed_is_dropped(store):
    """An analysis thread outliving a stopped service still reports its fetches: nobody hears, nothing fails."""
    gh = FakeGitHub(job("analysis"), store)
    loop = asyncio.new_event_loop()

    async def started() -> analysis.FetchBanner:
        return analysis.FetchBanner(gh.context(), None, "h" * 40, utc_now())

    banner = loop.run_until_complete(started())
    loop.run_until_complete(banner.close())
    loop.close()
    banner.fetching("llama.cpp", True)
    assert gh.comment.bodies == []
