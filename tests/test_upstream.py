"""Upstream mirrors: fetch over libgit2's local transport, only when a ref is missing."""

import pytest

from bot.model import AnalysisError
from bot.repos.mirrors import mirror_path, rewrite_url
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder


def test_rewrite_url_uses_the_longest_prefix():
    rules = "/srv/mirrors/=https://github.com/,/srv/ggml/=https://github.com/ggml-org/"
    assert rewrite_url("https://github.com/ggml-org/llama.cpp", rules) == "/srv/ggml/llama.cpp"
    assert rewrite_url("https://github.com/ml-explore/mlx", rules) == "/srv/mirrors/ml-explore/mlx"
    assert rewrite_url("https://example.com/x", rules) == "https://example.com/x"


def _source(tmp_path):
    src = RepoBuilder(tmp_path / "src" / "ggml-org" / "llama.cpp")
    src.commit("one", {"a": "1\n"})
    src.tag("b1")
    src.commit("two (#12)", {"a": "2\n"})
    src.tag("b2")
    return src


def test_mirror_fetches_once_then_reads_git_objects(tmp_path):
    src = _source(tmp_path)
    rules = f"{tmp_path}/src/=https://github.com/"
    data = tmp_path / "data"
    up = Upstream.mirror(data, "llama.cpp", "https://github.com/ggml-org/llama.cpp", ["b1", "b2"], rules)
    assert up.commit("b2", "V").tree["a"].data == b"2\n"
    assert up.describe(up.commit("b2", "V")).url.startswith("https://github.com/ggml-org/llama.cpp/commit/")
    src.commit("three", {"a": "3\n"})
    src.tag("b3")
    mirror = mirror_path(data, "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp")
    before = sorted(p.name for p in (mirror / "objects").rglob("*"))
    Upstream.mirror(data, "llama.cpp", "https://github.com/ggml-org/llama.cpp", ["b1", "b2"], rules)
    assert sorted(p.name for p in (mirror / "objects").rglob("*")) == before  # nothing missing, no fetch
    up = Upstream.mirror(data, "llama.cpp", "https://github.com/ggml-org/llama.cpp", ["b2", "b3"], rules)
    assert up.commit("b3", "V").tree["a"].data == b"3\n"


def test_commit_ids_are_fetched_through_branches(tmp_path):
    src = _source(tmp_path)
    sha = str(src.head)
    up = Upstream.mirror(
        tmp_path / "d",
        "x",
        "https://github.com/ggml-org/llama.cpp",
        [sha],
        f"{tmp_path}/src/=https://github.com/",
    )
    assert str(up.commit(sha, "V").id) == sha


def test_unknown_ref_is_one_clear_error(tmp_path):
    _source(tmp_path)
    up = Upstream.mirror(
        tmp_path / "d",
        "x",
        "https://github.com/ggml-org/llama.cpp",
        ["b1", "b999"],
        f"{tmp_path}/src/=https://github.com/",
    )
    with pytest.raises(AnalysisError, match="LLAMA_CPP_VERSION names 'b999', which is not a tag or commit"):
        up.commit("b999", "LLAMA_CPP_VERSION")


def test_unreachable_upstream_is_one_clear_error(tmp_path):
    (tmp_path / "empty" / "nobody" / "nothing").mkdir(parents=True)  # there, but no repository
    with pytest.raises(AnalysisError) as caught:
        Upstream.mirror(
            tmp_path / "d",
            "x",
            "https://github.com/nobody/nothing",
            ["b1"],
            f"{tmp_path}/empty/=https://github.com/",
        )
    # Public text: the pin's URL, not the rewritten one, and no path of the server's.
    assert str(caught.value) == (
        "cannot fetch b1 from https://github.com/nobody/nothing: "
        "'https://github.com/nobody/nothing' does not appear to be a git repository"
    )


def test_history_attributes_added_and_removed_lines(tmp_path):
    src = RepoBuilder(tmp_path / "h.git")
    src.commit("base", {"f.c": "alpha();\nbeta();\ngamma();\n", "g.c": "x\n"})
    src.tag("v1")
    src.commit("add delta (#7)", {"f.c": "alpha();\nbeta();\ndelta();\ngamma();\n"})
    src.commit("drop alpha (#8)", {"f.c": "beta();\ndelta();\ngamma();\n"})
    src.commit("unrelated", {"g.c": "y\n"})
    src.tag("v2")
    up = Upstream(src.repo, "https://github.com/ggml-org/llama.cpp")
    from bot.repos.history import History

    history = History(up, up.commit("v1", "V"), up.commit("v2", "V"))
    assert [c.message.strip() for c in history.touching("f.c")] == ["drop alpha (#8)", "add delta (#7)"]
    assert [c.subject for c in history.commits_for_lines("f.c", 2, 2)] == ["add delta (#7)"]
    assert [c.subject for c in history.commits_for_lines("f.c", 1, 1, [b"alpha();\n"])] == ["drop alpha (#8)"]
    assert history.commits_for_lines("g.c", 1, 1) == []  # "y" is too short to be evidence


def test_history_credits_a_line_to_the_commit_that_wrote_it_not_one_adding_its_text_elsewhere(tmp_path):
    src = RepoBuilder(tmp_path / "h.git")
    block = 'add_opt(\n    {{"{flag}"}},\n    [](common_params & params, bool value) {{\n    }}\n);\n'
    src.commit("base", {"arg.cpp": block.format(flag="--mmap")})
    src.tag("v1")
    src.commit("deprecate mmap (#1)", {"arg.cpp": block.format(flag="--no-mmap")})
    tools = "tools(\n    [](common_params & params, bool value) {\n        run();\n    }\n);\n"
    src.commit("add a tool hook (#2)", {"arg.cpp": block.format(flag="--no-mmap") + tools})
    src.tag("v2")
    up = Upstream(src.repo, "https://github.com/ggml-org/llama.cpp")
    from bot.repos.history import History

    history = History(up, up.commit("v1", "V"), up.commit("v2", "V"))
    # #2 wrote lines 6-10 only, though its lambda line reads like line 3 of the --no-mmap block.
    assert [c.subject for c in history.commits_for_lines("arg.cpp", 1, 5)] == ["deprecate mmap (#1)"]
    assert [c.subject for c in history.commits_for_lines("arg.cpp", 6, 10)] == ["add a tool hook (#2)"]


def test_branch_names_do_not_resolve_tags_and_commit_ids_do(tmp_path):
    src = _source(tmp_path)  # its branch is `main`
    up = Upstream.open_dir(str(src.path), "https://github.com/ggml-org/llama.cpp")
    with pytest.raises(AnalysisError, match="V names 'main', which is not a tag or commit"):
        up.commit("main", "V")
    assert up.commit("b2", "V").id == src.head
    assert up.commit(str(src.head), "V").id == src.head


def test_what_each_commit_between_the_refs_changes_is_diffed_once_per_facts_store(tmp_path, monkeypatch):
    from bot.cache import facts
    from bot.repos import history as history_module
    from bot.repos.history import History

    src = _source(tmp_path)
    src.tag("v1")
    src.commit("add (#3)", {"f.c": "alpha();\n", "g.c": "y\n"})
    src.commit("remove (#4)", {"g.c": None})
    src.tag("v2")
    up = Upstream(src.repo, "https://github.com/ggml-org/llama.cpp")
    store = facts.FactStore(tmp_path / "facts")
    with facts.using(store):
        diffed = History(up, up.commit("v1", "V"), up.commit("v2", "V")).file_changes
        monkeypatch.setattr(history_module, "_first_parent_diff", lambda commit: pytest.fail("diffed again"))
        again = History(up, up.commit("v1", "V"), up.commit("v2", "V"))
        assert again.file_changes == diffed
        assert [c.message.strip() for c in again.touching("g.c")] == ["remove (#4)", "add (#3)"]
    assert sorted(p for sides in diffed for p, _, _ in sides) == ["f.c", "f.c", "g.c", "g.c", "g.c", "g.c"]


def test_a_shallow_clone_of_the_same_refs_does_not_take_the_full_historys_commit_changes(tmp_path):
    import subprocess

    import pygit2

    from bot.cache import facts
    from bot.repos.history import History

    src = _source(tmp_path)
    src.tag("v1")
    src.commit("add (#3)", {"f.c": "alpha();\n"})
    src.commit("more (#4)", {"g.c": "y\n"})
    src.tag("v2")
    shallow = tmp_path / "shallow.git"
    git = ["git", "-c", "protocol.file.allow=always"]
    subprocess.run([*git, "init", "-q", "--bare", str(shallow)], check=True)
    fetch = [*git, "-C", str(shallow), "fetch", "-q", "--depth", "1", f"file://{src.path}"]
    subprocess.run([*fetch, "refs/tags/v1:refs/tags/v1", "refs/tags/v2:refs/tags/v2"], check=True)

    def changes(repo: pygit2.Repository) -> list:
        up = Upstream(repo, "https://github.com/ggml-org/llama.cpp")
        return History(up, up.commit("v1", "V"), up.commit("v2", "V")).file_changes

    uncached = changes(pygit2.Repository(str(shallow))), changes(src.repo)
    assert len(uncached[0]) == 1 and len(uncached[1]) == 2  # the cut-off commit alone, against nothing
    with facts.using(facts.FactStore(tmp_path / "facts")):
        assert (changes(pygit2.Repository(str(shallow))), changes(src.repo)) == uncached
