"""A long jump reviewed in bounded memory: what the review holds of the changed files' texts does not grow
with the number of files the jump changes."""

import tracemalloc

import pygit2

from bot.review import upstream_changes
from tests.fixtures import RepoBuilder

LINES = 1500  # about 45 KB of C++ per file, one line in fifty changed


def _source(index: int, version: int) -> bytes:
    lines = [
        f"int f{index}_{n}(int x) {{ return x + {n * (version if n % 50 == 0 else 1)}; }}  // step {n}"
        for n in range(LINES)
    ]
    return ("\n".join(lines) + "\n").encode()


def _jump(tmp_path, files: int) -> tuple[pygit2.Repository, pygit2.Tree, pygit2.Tree]:
    up = RepoBuilder(tmp_path / f"up-{files}.git")
    old = up.commit("old", {f"src/f{i}.cpp": _source(i, 1) for i in range(files)})
    new = up.commit("new", {f"src/f{i}.cpp": _source(i, 2) for i in range(files)})
    return up.repo, up.repo[old].peel(pygit2.Commit).tree, up.repo[new].peel(pygit2.Commit).tree


def _review_peak(repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree) -> int:
    """Peak bytes allocated while the diff is walked and every change's hunks, texts and comment-free code
    are read, as the detectors read them, one pass after another."""
    tracemalloc.start()
    try:
        changes, skipped = upstream_changes(repo, old, new)
        assert not skipped
        for _ in range(2):
            for change in changes:
                assert change.significant and change.changed_raw[0]
                assert change.old_code_lines and change.new_code_lines
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_reviews_memory_does_not_grow_with_the_jump(tmp_path, monkeypatch):
    monkeypatch.setattr("bot.review.textbudget.TEXT_BUDGET_BYTES", 1 << 20)
    small = _review_peak(*_jump(tmp_path, 40))  # 1.8 MB of text a side
    large = _review_peak(*_jump(tmp_path, 160))  # 7.2 MB a side: held whole, four times the small one's
    assert large < 2 * small, (small, large)  # linear growth would be 4 times
    assert large < 32 << 20, large
