"""Mirrors keyed by URL, LLAMA_BOT_URL_INSTEADOF mistakes, where an unknown ref was looked for, credentials."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from aiohttp import web

from bot import cli
from bot.config import parse_config
from bot.engine import analyse
from bot.model import AnalysisError
from bot.render.checklist import render_markdown
from bot.repos.gitcli import public_url
from bot.repos.mirrors import URL_KEY, mirror_path, parse_url_rewrites, rewrite_url
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder

UPSTREAM = "https://github.com/ggml-org/llama.cpp"
FORK = "https://github.com/someone/llama.cpp"


def _source(root, owner: str, text: str) -> RepoBuilder:
    """A llama.cpp under root/<owner>/ with one tag b1, whose README says `text`."""
    src = RepoBuilder(root / owner / "llama.cpp")
    src.commit(f"{owner}'s state", {"README.md": text})
    src.tag("b1")
    return src


def _readme(upstream: Upstream) -> bytes:
    return upstream.commit("b1", "V").tree["README.md"].data


def test_a_pin_moved_to_a_fork_analyses_the_forks_tags(tmp_path):
    _source(tmp_path / "src", "ggml-org", "upstream\n")
    fork = _source(tmp_path / "src", "someone", "fork\n")
    rules = f"{tmp_path}/src/=https://github.com/"
    data = tmp_path / "data"
    assert _readme(Upstream.mirror(data, "llama.cpp", UPSTREAM, ["b1"], rules)) == b"upstream\n"

    moved = Upstream.mirror(data, "llama.cpp", FORK, ["b1"], rules)  # the same pin, the same tag name

    assert _readme(moved) == b"fork\n"
    base = MemorySnapshot({"LLAMA_CPP_VERSION": b"b1\n"})
    head = MemorySnapshot({"LLAMA_CPP_VERSION": b"b1\n", "llama/compat/0001-x.patch": b""})
    config = parse_config(
        f'[[pin]]\nname = "llama.cpp"\nversion_file = "LLAMA_CPP_VERSION"\n'
        f'patches = "llama/compat"\nupstream = "{FORK}"\n'
    )
    (pin,) = analyse(
        config,
        base,
        head,
        lambda p, refs: Upstream.mirror(data, p.name, p.upstream, refs, rules),
        ["LLAMA_CPP_VERSION"],
    ).pins
    assert (pin.new_commit, pin.compare_url) == (str(fork.head), f"{FORK}/compare/b1...b1")
    assert sorted(p.name for p in (data / "mirrors").iterdir()) == sorted(
        mirror_path(data, "llama.cpp", rewrite_url(u, rules)).name for u in (UPSTREAM, FORK)
    )


def test_a_mirror_that_records_another_url_is_not_trusted(tmp_path):
    _source(tmp_path / "src", "ggml-org", "upstream\n")
    rules = f"{tmp_path}/src/=https://github.com/"
    data = tmp_path / "data"
    up = Upstream.mirror(data, "llama.cpp", UPSTREAM, ["b1"], rules)
    up.repo.config[URL_KEY] = "https://example.com/other.git"  # say, copied over from another installation
    with pytest.raises(AnalysisError) as caught:
        Upstream.mirror(data, "llama.cpp", UPSTREAM, ["b1"], rules)
    path = mirror_path(data, "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp")
    assert str(caught.value) == (  # public text: no server path, no rewritten URL
        f"the mirror of {UPSTREAM} (LLAMA_BOT_DATA_DIR/mirrors/{path.name}) holds another upstream: "
        "remove it to fetch afresh"
    )


def test_url_rewrite_items_that_are_not_new_equals_old_are_named():
    assert parse_url_rewrites(" /srv/a/=https://github.com/ , ") == [("https://github.com/", "/srv/a/")]
    assert parse_url_rewrites(None) == []
    for value, item in (
        ("nonsense", "nonsense"),
        ("/srv/=https://github.com/,oops", "oops"),
        ("=https://github.com/", "=https://github.com/"),
        ("/srv/=", "/srv/="),
    ):
        with pytest.raises(AnalysisError) as caught:
            parse_url_rewrites(value)
        assert str(caught.value) == f"LLAMA_BOT_URL_INSTEADOF item {item!r}: expected NEW=OLD"


def _ollama(path, ref: str = "b1"):
    ollama = RepoBuilder(path)
    ollama.commit("pin", {"LLAMA_CPP_VERSION": "b0\n"})
    ollama.commit("bump", {"LLAMA_CPP_VERSION": f"{ref}\n"})
    return path


def _check(capsys, monkeypatch, tmp_path, instead_of: str, *extra: str) -> tuple[int, str, str]:
    monkeypatch.setenv("LLAMA_BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LLAMA_BOT_URL_INSTEADOF", instead_of)
    code = cli.main(
        ["check", "--repo", str(tmp_path / "ollama.git"), "--base", "HEAD~1", "--format", "json", *extra]
    )
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_names_a_malformed_rewrite_and_a_rewrite_to_nowhere(tmp_path, capsys, monkeypatch):
    _ollama(tmp_path / "ollama.git")
    code, _, err = _check(capsys, monkeypatch, tmp_path, "nonsense")
    assert (code, err.count("\n")) == (2, 1)  # one line on stderr, ending with what is wrong
    assert err.startswith("llama-bot: ") and err.endswith(
        "LLAMA_BOT_URL_INSTEADOF item 'nonsense': expected NEW=OLD\n"
    )
    code, _, err = _check(capsys, monkeypatch, tmp_path, f"{tmp_path}/nowhere/=https://github.com/")
    assert (code, err.count("\n")) == (2, 1)
    assert err.endswith(f"LLAMA_BOT_URL_INSTEADOF rewrites {UPSTREAM} to a path that does not exist\n")


def test_an_unknown_ref_names_where_it_was_looked_for(tmp_path, capsys, monkeypatch):
    src = _source(tmp_path / "src", "ggml-org", "upstream\n")
    src.tag("b0")
    _ollama(tmp_path / "ollama.git", ref="b999")
    rules = f"{tmp_path}/src/=https://github.com/"
    code, _, err = _check(capsys, monkeypatch, tmp_path, rules)
    mirror = mirror_path(tmp_path / "data", "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp")
    assert code == 2
    assert (
        f"LLAMA_CPP_VERSION names 'b999', which is not a tag or commit of {UPSTREAM} (looked in the mirror "
        f"of {UPSTREAM} (LLAMA_BOT_DATA_DIR/mirrors/{mirror.name}))"
    ) in err
    assert str(tmp_path) not in err  # neither the mirror's path nor the rewritten URL
    code, _, err = _check(capsys, monkeypatch, tmp_path, rules, "--upstream-dir", f"llama.cpp={src.path}")
    assert code == 2
    assert (
        f"LLAMA_CPP_VERSION names 'b999', which is not a tag or commit of {UPSTREAM} (looked in --upstream-dir {src.path})"
        in err
    )


SECRET_URL = "https://builder:s3cret@github.com/ggml-org/llama.cpp"


def test_public_url_drops_user_and_password_everywhere_in_a_text():
    assert public_url(SECRET_URL) == UPSTREAM
    assert public_url(f"cannot reach {SECRET_URL}.git, nor ssh://git:pw@host:22/x") == (
        f"cannot reach {UPSTREAM}.git, nor ssh://host:22/x"
    )
    assert public_url("git@github.com:ggml-org/llama.cpp.git") == "git@github.com:ggml-org/llama.cpp.git"
    assert (
        public_url("https://github.com/a@b/c") == "https://github.com/a@b/c"
    )  # an @ in the path is no userinfo


def test_credentials_in_the_upstream_url_appear_in_no_link_report_or_error(tmp_path):
    src = _source(tmp_path / "src", "ggml-org", "upstream\n")
    src.commit("two (#5)", {"README.md": "two\n"})
    src.tag("b2")
    rules = f"{tmp_path}/src/=https://builder:s3cret@github.com/"
    data = tmp_path / "data"
    config = parse_config(
        f'[[pin]]\nname = "llama.cpp"\nversion_file = "LLAMA_CPP_VERSION"\n'
        f'patches = "llama/compat"\nupstream = "{SECRET_URL}"\n'
    )
    base = MemorySnapshot({"LLAMA_CPP_VERSION": b"b1\n"})
    conflict = b"--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-gone\n+ollama\n"
    head = MemorySnapshot({"LLAMA_CPP_VERSION": b"b2\n", "llama/compat/0001-readme.patch": conflict})

    def open_upstream(pin, refs):
        return Upstream.mirror(data, pin.name, pin.upstream, refs, rules)

    report = analyse(config, base, head, open_upstream, ["LLAMA_CPP_VERSION"])
    (pin,) = report.pins
    assert pin.compare_url == f"{UPSTREAM}/compare/b1...b2"
    assert pin.patches[0].status == "conflict"
    shown = json.dumps(report.to_json()) + render_markdown(report, ["LLAMA_CPP_VERSION"], head_sha="a" * 40)
    assert f"git remote add upstream {UPSTREAM}" in shown  # the reproduce steps name the upstream, bare
    assert "s3cret" not in shown and "builder" not in shown
    upstream = open_upstream(config.pins[0], ["b2"])
    assert upstream.describe(upstream.commit("b2", "V")).url.startswith(f"{UPSTREAM}/commit/")
    with pytest.raises(AnalysisError) as caught:
        upstream.commit("b3", "V")
    assert "s3cret" not in str(caught.value) and str(tmp_path) not in str(caught.value)
    assert not any("s3cret" in p.read_text(errors="replace") for p in data.rglob("config"))


async def test_a_fetch_sends_the_urls_credentials_and_its_error_shows_none(tmp_path):
    """libgit2 answers the server's 401 with the user and password of the URL; the error names the URL without."""
    seen = []

    async def git_http(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        if "Authorization" not in request.headers:
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="git"'})
        return web.Response(status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", git_http)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    url = f"http://builder:s3cret@127.0.0.1:{port}/ggml-org/llama.cpp"
    try:
        with pytest.raises(AnalysisError) as caught:
            await asyncio.get_running_loop().run_in_executor(
                None, Upstream.mirror, tmp_path / "data", "llama.cpp", url, ["b1"], None
            )
    finally:
        await runner.cleanup()
    assert base64.b64decode(seen[-1].split()[1]) == b"builder:s3cret"
    assert str(caught.value).startswith(f"cannot fetch b1 from http://127.0.0.1:{port}/ggml-org/llama.cpp: ")
    assert "s3cret" not in str(caught.value)
