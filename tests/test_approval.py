"""Which commit a command may act on, and who may re-run a validation: `bot.decisions.approval`'s pure decisions."""

import pytest

from bot.decisions.approval import (
    Approval,
    CommentTime,
    HeadSeen,
    approve,
    epoch,
    head_when,
    rerun_refusal,
    stints,
)

A, B, C = "a" * 40, "b" * 40, "c" * 40
T = epoch("2026-03-01T12:00:00Z")
assert T is not None


def at(seconds: float) -> float:
    return T + seconds


def written(created: float | None, received: float | None = None) -> CommentTime:
    """A comment written at `created` (GitHub's clock) whose delivery was queued at `received` (the bot's),
    a second later unless said."""
    return CommentTime(created, received if received is not None else (created or T) + 1)


def test_a_head_seen_before_the_comment_and_still_the_head_is_approved():
    seen = [HeadSeen(A, at(0)), HeadSeen(A, at(50))]
    assert approve(A, seen, written(at(10)), pushed_at=at(60)) == Approval(A, True)


def test_a_head_first_seen_after_the_comment_is_refused_naming_the_one_seen_before():
    seen = [HeadSeen(A, at(0)), HeadSeen(B, at(20))]
    assert approve(B, seen, written(at(10)), pushed_at=at(19)) == Approval(B, False, A)


def test_a_head_never_seen_is_approved_when_github_says_nothing_was_pushed_since():
    assert approve(B, [], written(at(10)), pushed_at=at(5)).approved
    assert approve(B, [HeadSeen(A, at(0))], written(at(10)), pushed_at=at(9)).approved


def test_a_push_in_the_comment_s_second_proves_nothing():
    """GitHub writes whole seconds: a push stamped with the comment's second may have come after it."""
    assert approve(B, [], written(at(10)), pushed_at=at(10)) == Approval(B, False)
    assert approve(B, [], written(at(10)), pushed_at=None) == Approval(B, False)


def test_a_head_pushed_away_and_back_is_approved_only_from_its_return():
    seen = [HeadSeen(A, at(0)), HeadSeen(B, at(5)), HeadSeen(A, at(20))]
    assert approve(A, seen, written(at(10)), pushed_at=at(19)) == Approval(A, False, B)
    assert approve(A, seen, written(at(30)), pushed_at=at(19)).approved


def test_a_head_the_bot_has_seen_since_another_is_not_the_last_one_seen():
    """The last sighting is B: A is the head again, but when it came back is unknown."""
    seen = [HeadSeen(A, at(0)), HeadSeen(B, at(5))]
    assert approve(A, seen, written(at(10)), pushed_at=at(8)).approved  # GitHub's clock proves it
    assert approve(A, seen, written(at(10)), pushed_at=at(12)) == Approval(A, False, B)


def test_a_bot_clock_behind_github_s_does_not_approve_a_later_push():
    """B was seen at 8 by the bot's clock, but the comment's delivery was queued at 7 by the same clock:
    the push came after the comment, whatever GitHub's clock says."""
    seen = [HeadSeen(A, at(0)), HeadSeen(B, at(8))]
    assert approve(B, seen, written(at(10), received=at(7)), pushed_at=at(11)) == Approval(B, False, A)


def test_a_comment_without_a_time_approves_nothing():
    assert approve(A, [HeadSeen(A, at(0))], written(None), pushed_at=at(-5)) == Approval(A, False)


@pytest.mark.parametrize(
    "stamp, expected",
    [
        ("2026-03-01T12:00:00Z", T),
        ("2026-03-01T12:00:00", T),
        ("2026-03-01T13:00:00+01:00", T),
        ("yesterday", None),
        ("9" * 100, None),
        (1772366400, None),
        (None, None),
        ({"$date": 1}, None),
    ],
)
def test_times_are_read_only_as_github_writes_them(stamp, expected):
    assert epoch(stamp) == expected


def test_stints_merge_repeats_and_keep_returns():
    seen = [HeadSeen(A, 1), HeadSeen(A, 2), HeadSeen(B, 3), HeadSeen(A, 4), HeadSeen(C, 5)]
    assert stints(seen) == [HeadSeen(A, 1), HeadSeen(B, 3), HeadSeen(A, 4), HeadSeen(C, 5)]
    assert head_when(seen, 3.5) == B and head_when(seen, 0.5) is None and head_when(seen, 9) == C


def test_a_validation_is_re_run_only_for_a_writer_and_only_on_its_own_head():
    assert rerun_refusal(A, A, may=True) is None
    assert rerun_refusal(B, A, may=True) == "moved"
    assert rerun_refusal(A, A, may=False) == "permission"
    assert rerun_refusal(B, A, may=False) == "permission"
