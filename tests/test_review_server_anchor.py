"""llama-server's sources found by what they hold: the review profile's path is a hint. When the server's
sources are elsewhere (moved before the bump, or by it), the wire check reads them there; when no source
registers an HTTP route any more, it says so in one item instead of saying nothing."""

from __future__ import annotations

from tests.fixtures import RepoBuilder
from tests.test_review_e2e import _review as review_bump
from tests.test_review_wire import OLLAMA, UPSTREAM

SCHEMA = "tools/server/server-schema.cpp"
READ = 'field_num("n_predict", params.n_predict))\n        ->set_hard_limits(-1, INT32_MAX)\n        ->add_alias("max_tokens")'
RENAMED = 'field_num("max_tokens", params.n_predict))\n        ->set_hard_limits(-1, INT32_MAX)'
UNREAD = "llama-server no longer reads request field `n_predict` of POST /completion, which Ollama sends"


def _moved(files: dict[str, str], to: str) -> dict[str, str]:
    return {path.replace("tools/server/", f"{to}/"): text for path, text in files.items()}


def _review(tmp_path, old: dict[str, str], new: dict[str, str]):
    b = RepoBuilder(tmp_path / "u.git")
    b.commit("base", {"CMakeLists.txt": "project(llama.cpp C CXX)\n", **old})
    b.tag("b1")
    b.commit("server: move", {**{path: None for path in old if path not in new}, **new})
    b.tag("b2")
    findings, _ = review_bump(b, {path: text.encode() for path, text in OLLAMA.items()}, patches=())
    return findings


def test_a_server_that_lives_elsewhere_is_read_where_its_routes_are(tmp_path):
    old = _moved(UPSTREAM, "server")
    new = {**old, "server/server-schema.cpp": old["server/server-schema.cpp"].replace(READ, RENAMED)}
    (item,) = [f for f in _review(tmp_path, old, new) if f.check == "server.wire"]
    assert (item.severity, item.title, item.upstream_path) == ("high", UNREAD, "server/server-schema.cpp")


def test_a_bump_that_moves_the_server_and_changes_it_is_read_at_both_places(tmp_path):
    new = _moved({**UPSTREAM, SCHEMA: UPSTREAM[SCHEMA].replace(READ, RENAMED)}, "apps/llama-server")
    (item,) = [f for f in _review(tmp_path, UPSTREAM, new) if f.check == "server.wire"]
    assert (item.severity, item.title) == ("high", UNREAD)


def test_a_server_gone_from_the_tree_says_the_wire_was_not_checked(tmp_path):
    """Said once, folded into the item of the same commit that tells the routes Ollama calls are gone."""
    moved_out = {"docs/server.md": "moved to its own repository\n"}
    (routes,) = [f for f in _review(tmp_path, UPSTREAM, moved_out) if f.severity != "info"]
    assert routes.check == "server.routes"
    assert "- llama-server's requests, answers and stream frames not checked: its sources were not found" in (
        routes.detail
    )
