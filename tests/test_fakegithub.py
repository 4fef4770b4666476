"""Tests of the fake GitHub itself, through aiohttp and gidgethub as the bot talks to it."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pygit2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub import BadRequest, GitHubBroken, RateLimitExceeded
from gidgethub.aiohttp import GitHubAPI
from gidgethub.apps import get_jwt

from tests import fakegithub
from tests.fakegithub import commit, installation_gh, payload, sign

fake_github = fakegithub.fake_github  # the fixture under test


@pytest.fixture
def repo(fake_github, tmp_path):
    """octo/bot backed by a bare repo: main = {README, src/a.c}; feature adds b.c and edits a.c."""
    git = pygit2.init_repository(str(tmp_path / "repo.git"), bare=True)
    base = commit(git, {"README.md": "hello\n", "src/a.c": "int a;\n"}, ref="refs/heads/main")
    head = commit(
        git, {"src/a.c": "int a = 1;\n", "src/b.c": "int b;\n"}, parents=[base], ref="refs/heads/feature"
    )
    fake_github.add_repo("octo", "bot", git)
    return {"git": git, "base": base, "head": head}


async def test_jwt_auth(fake_github, session):
    gh = GitHubAPI(session, "test", base_url=fake_github.url)
    good = get_jwt(app_id=str(fake_github.app_id), private_key=fake_github.private_key_pem)
    assert (await gh.getitem("/app", jwt=good))["id"] == fake_github.app_id

    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    now = int(time.time())
    numeric_iss = jwt.api_jws.encode(
        json.dumps({"iat": now - 60, "exp": now + 540, "iss": int(fake_github.app_id)}).encode(),
        fake_github.private_key_pem,
        algorithm="RS256",
    )
    assert (await gh.getitem("/app", jwt=numeric_iss))["slug"] == "llama-bot"
    bad = [
        get_jwt(app_id=str(fake_github.app_id), private_key=pem),  # wrong key
        get_jwt(app_id="999", private_key=fake_github.private_key_pem),  # wrong issuer
        get_jwt(app_id=str(fake_github.app_id), private_key=fake_github.private_key_pem, expiration=3600),
        jwt.encode(
            {"iat": now - 700, "exp": now - 100, "iss": str(fake_github.app_id)},
            fake_github.private_key_pem,
            algorithm="RS256",
        ),  # expired
    ]
    for token in bad:
        async with session.get(
            f"{fake_github.url}/app", headers={"Authorization": f"Bearer {token}"}
        ) as resp:
            assert resp.status == 401
    installation = await installation_gh(fake_github, session)
    async with session.get(
        f"{fake_github.url}/app", headers={"Authorization": f"token {installation.oauth_token}"}
    ) as resp:
        assert resp.status == 401  # installation tokens cannot call /app


async def test_token_issuance_and_expiry(fake_github, session, repo):
    gh = await installation_gh(fake_github, session)
    assert fake_github.tokens_issued == 1
    assert gh.oauth_token.startswith("ghs_")
    token_request = fake_github.requests[-1]
    assert token_request["status"] == 201
    ref = await gh.getitem("/repos/octo/bot/git/ref/heads/main")
    assert ref["object"]["sha"] == repo["base"]

    fake_github.expire_all_tokens()
    async with session.get(
        f"{fake_github.url}/repos/octo/bot/git/ref/heads/main",
        headers={"Authorization": f"token {gh.oauth_token}"},
    ) as resp:
        assert resp.status == 401
        assert (await resp.json())["message"] == "Bad credentials"
        assert "x-ratelimit-remaining" in resp.headers
    async with session.get(f"{fake_github.url}/rate_limit") as resp:
        assert resp.status == 401  # no credentials at all


async def test_invalid_body_is_a_violation(fake_github, session, repo):
    gh = await installation_gh(fake_github, session)
    with pytest.raises(BadRequest) as caught:
        await gh.post(
            "/repos/octo/bot/check-runs", data={"name": "x", "head_sha": repo["head"], "status": "completed"}
        )  # no conclusion
    assert caught.value.status_code == 422
    annotations = [
        {"path": "a", "start_line": 1, "end_line": 1, "annotation_level": "notice", "message": "m"}
    ] * 51
    with pytest.raises(BadRequest):
        await gh.post(
            "/repos/octo/bot/check-runs",
            data={
                "name": "x",
                "head_sha": repo["head"],
                "output": {"title": "t", "summary": "s", "annotations": annotations},
            },
        )
    with pytest.raises(BadRequest):
        await gh.getitem("/repos/octo/bot/pulls/abc")
    with pytest.raises(BadRequest):
        await gh.getitem("/repos/octo/bot/nothing-here")
    assert len(fake_github.violations) >= 4
    assert fake_github.violations[0].startswith("POST /repos/octo/bot/check-runs: body")
    assert any("is too long" in v for v in fake_github.violations)
    assert any("pull_number" in v for v in fake_github.violations)
    assert (
        fake_github.violations[-1]
        == "GET /repos/octo/bot/nothing-here: no such operation in github-subset.json"
    )
    assert fake_github.check_runs == {}
    fake_github.violations.clear()


async def test_check_runs_append_annotations(fake_github, session, repo):
    gh = await installation_gh(fake_github, session)
    note = {"path": "src/a.c", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": "m"}
    run = await gh.post(
        "/repos/octo/bot/check-runs",
        data={
            "name": "llama-bot",
            "head_sha": repo["head"],
            "status": "in_progress",
            "output": {"title": "t", "summary": "s", "annotations": [note] * 50},
        },
    )
    done = await gh.patch(
        f"/repos/octo/bot/check-runs/{run['id']}",
        data={"conclusion": "failure", "output": {"summary": "s2", "annotations": [note] * 3}},
    )
    assert done["status"] == "completed" and done["output"]["annotations_count"] == 53
    listed = await gh.getitem("/repos/octo/bot/commits/feature/check-runs")
    assert [r["id"] for r in listed["check_runs"]] == [run["id"]]
    assert [r["method"] for r in fake_github.check_run_requests] == ["POST", "PATCH"]


async def test_pagination_walked_by_getiter(fake_github, session, repo):
    for i in range(75):
        fake_github.add_comment("octo", "bot", 7, f"comment {i}")
    gh = await installation_gh(fake_github, session)
    bodies = [c["body"] async for c in gh.getiter("/repos/octo/bot/issues/7/comments?per_page=20")]
    assert bodies == [f"comment {i}" for i in range(75)]
    pages = [r for r in fake_github.requests if r["path"].endswith("/issues/7/comments")]
    assert [r["query"].get("page", "1") for r in pages] == ["1", "2", "3", "4"]
    async with session.get(
        f"{fake_github.url}/repos/octo/bot/issues/7/comments?per_page=20&page=2",
        headers={"Authorization": f"token {gh.oauth_token}"},
    ) as resp:
        link = resp.headers["Link"]
    assert 'page=3>; rel="next"' in link and 'page=4>; rel="last"' in link and 'rel="prev"' in link


async def test_pull_files_trees_blobs_contents(fake_github, session, repo):
    pr = fake_github.add_pull("octo", "bot", 5, head_sha=repo["head"], head_ref="feature")
    assert pr["base"]["sha"] == repo["base"] and pr["head"]["repo"]["full_name"] == "octo/bot"
    gh = await installation_gh(fake_github, session)
    got = await gh.getitem("/repos/octo/bot/pulls/5")
    assert got["head"]["sha"] == repo["head"] and got["changed_files"] == 2
    files = {f["filename"]: f async for f in gh.getiter("/repos/octo/bot/pulls/5/files")}
    assert files["src/b.c"]["status"] == "added" and files["src/a.c"]["status"] == "modified"
    assert files["src/a.c"]["additions"] == 1 and files["src/a.c"]["deletions"] == 1
    assert files["src/a.c"]["patch"].startswith("@@")

    tree = await gh.getitem("/repos/octo/bot/git/trees/feature?recursive=1")
    paths = {e["path"]: e for e in tree["tree"]}
    assert set(paths) == {"README.md", "src", "src/a.c", "src/b.c"} and paths["src"]["type"] == "tree"
    blob = await gh.getitem(f"/repos/octo/bot/git/blobs/{paths['src/b.c']['sha']}")
    assert base64.b64decode(blob["content"]) == b"int b;\n"
    top = await gh.getitem(f"/repos/octo/bot/git/trees/{repo['head']}")
    assert {e["path"] for e in top["tree"]} == {"README.md", "src"}

    content = await gh.getitem("/repos/octo/bot/contents/src/a.c{?ref}", {"ref": repo["base"]})
    assert base64.b64decode(content["content"]) == b"int a;\n"
    listing = await gh.getitem("/repos/octo/bot/contents/src{?ref}", {"ref": "feature"})
    assert sorted(e["name"] for e in listing) == ["a.c", "b.c"]
    compare = await gh.getitem(f"/repos/octo/bot/compare/main...{repo['head']}")
    assert compare["status"] == "ahead" and compare["ahead_by"] == 1 and len(compare["files"]) == 2
    with pytest.raises(BadRequest) as caught:
        await gh.getitem("/repos/octo/bot/contents/missing.txt")
    assert caught.value.status_code == 404


async def test_git_data_writes_and_fast_forward(fake_github, session, repo):
    fake_github.add_pull("octo", "bot", 5, head_sha=repo["head"], head_ref="feature")
    gh = await installation_gh(fake_github, session)
    blob = await gh.post(
        "/repos/octo/bot/git/blobs",
        data={"content": base64.b64encode(b"new\n").decode(), "encoding": "base64"},
    )
    head_commit = await gh.getitem(f"/repos/octo/bot/git/commits/{repo['head']}")
    tree = await gh.post(
        "/repos/octo/bot/git/trees",
        data={
            "base_tree": head_commit["tree"]["sha"],
            "tree": [
                {"path": "src/c.c", "mode": "100644", "type": "blob", "sha": blob["sha"]},
                {"path": "docs/x.md", "mode": "100644", "type": "blob", "content": "doc\n"},
                {"path": "README.md", "mode": "100644", "type": "blob", "sha": None},
            ],
        },
    )
    new = await gh.post(
        "/repos/octo/bot/git/commits",
        data={"message": "regenerate patches", "tree": tree["sha"], "parents": [repo["head"]]},
    )
    assert new["author"]["name"] == "llama-bot[bot]"
    written = repo["git"][new["sha"]]
    assert sorted(e.name for e in written.tree) == ["docs", "src"]
    assert written.tree["src/c.c"].data == b"new\n"

    ref = await gh.patch("/repos/octo/bot/git/refs/heads/feature", data={"sha": new["sha"]})
    assert ref["object"]["sha"] == new["sha"]
    assert str(repo["git"].references["refs/heads/feature"].target) == new["sha"]
    assert fake_github.pulls[("octo/bot", 5)]["head"]["sha"] == new["sha"]  # the push moved the PR

    with pytest.raises(BadRequest) as caught:
        await gh.patch("/repos/octo/bot/git/refs/heads/feature", data={"sha": repo["base"]})
    assert caught.value.status_code == 422 and "not a fast forward" in str(caught.value)
    await gh.patch("/repos/octo/bot/git/refs/heads/feature", data={"sha": repo["base"], "force": True})

    created = await gh.post("/repos/octo/bot/git/refs", data={"ref": "refs/heads/tmp", "sha": new["sha"]})
    assert created["ref"] == "refs/heads/tmp"
    assert [r["ref"] async for r in gh.getiter("/repos/octo/bot/git/matching-refs/heads/t")] == [
        "refs/heads/tmp"
    ]
    await gh.delete("/repos/octo/bot/git/refs/heads/tmp")
    assert "refs/heads/tmp" not in repo["git"].references


async def test_dispatch_204_then_200_with_details(fake_github, session, repo):
    fake_github.add_workflow("octo", "bot", "regen.yml")
    fake_github.add_workflow("octo", "bot", "push-only.yml", dispatchable=False)
    gh = await installation_gh(fake_github, session)
    url = "/repos/octo/bot/actions/workflows/{workflow_id}/dispatches"
    plain = await gh.post(
        url, {"workflow_id": "regen.yml"}, data={"ref": "main", "inputs": {"request_id": "req-1"}}
    )
    assert plain is None and fake_github.requests[-1]["status"] == 204
    details = await gh.post(
        url,
        {"workflow_id": "regen.yml"},
        data={"ref": "feature", "inputs": {"request_id": "req-2"}, "return_run_details": True},
    )
    run = fake_github.workflow_runs[details["workflow_run_id"]]
    assert "req-2" in run["display_title"] and run["head_sha"] == repo["head"]
    assert [d["inputs"]["request_id"] for d in fake_github.dispatches] == ["req-1", "req-2"]

    runs = await gh.getitem(
        "/repos/octo/bot/actions/workflows/regen.yml/runs?event=workflow_dispatch&branch=main"
    )
    assert [r["display_title"] for r in runs["workflow_runs"]] == ["regen req-1"]
    with pytest.raises(BadRequest) as caught:
        await gh.post(url, {"workflow_id": "push-only.yml"}, data={"ref": "main"})
    assert "workflow_dispatch" in str(caught.value)
    with pytest.raises(BadRequest) as caught:
        await gh.post(url, {"workflow_id": "missing.yml"}, data={"ref": "main"})
    assert caught.value.status_code == 404

    event = fake_github.workflow_run_payload(run["id"], "completed", "completed", "success")
    assert event["workflow_run"]["conclusion"] == "success" and event["workflow"]["path"].endswith(
        "regen.yml"
    )
    assert event["installation"]["id"] == fake_github.installation_id
    with pytest.raises(BadRequest) as caught:  # completed runs cannot be cancelled
        await gh.post(f"/repos/octo/bot/actions/runs/{run['id']}/cancel", data=b"")
    assert caught.value.status_code == 409


async def test_injected_failures_then_success(fake_github, session, repo):
    gh = await installation_gh(fake_github, session)
    fake_github.fail("GET", r"/git/ref/", status=502)
    with pytest.raises(GitHubBroken):
        await gh.getitem("/repos/octo/bot/git/ref/heads/main")
    assert (await gh.getitem("/repos/octo/bot/git/ref/heads/main"))["object"]["sha"] == repo["base"]

    reset = int(time.time()) + 30
    fake_github.fail(
        "*", r"/issues/", status=403, headers={"x-ratelimit-remaining": 0, "x-ratelimit-reset": reset}
    )
    with pytest.raises(RateLimitExceeded):
        await gh.post("/repos/octo/bot/issues/1/comments", data={"body": "hi"})
    fake_github.fail(
        "POST",
        r"/issues/",
        status=403,
        headers={"retry-after": "1"},
        body={"message": "You have exceeded a secondary rate limit"},
    )
    async with session.post(
        f"{fake_github.url}/repos/octo/bot/issues/1/comments",
        json={"body": "hi"},
        headers={"Authorization": f"token {gh.oauth_token}"},
    ) as resp:
        assert resp.status == 403 and resp.headers["retry-after"] == "1"
    comment = await gh.post("/repos/octo/bot/issues/1/comments", data={"body": "hi"})
    assert comment["user"] == {**comment["user"], "login": "llama-bot[bot]", "type": "Bot"}
    assert [r["status"] for r in fake_github.requests if r["method"] == "POST"][-3:] == [403, 403, 201]


async def test_comments_and_reactions(fake_github, session, repo):
    gh = await installation_gh(fake_github, session)
    mine = await gh.post("/repos/octo/bot/issues/3/comments", data={"body": "first"})
    edited = await gh.patch(f"/repos/octo/bot/issues/comments/{mine['id']}", data={"body": "second"})
    assert edited["body"] == "second" and fake_github.comments[mine["id"]]["body"] == "second"

    url = f"{fake_github.url}/repos/octo/bot/issues/comments/{mine['id']}/reactions"
    auth = {"Authorization": f"token {gh.oauth_token}"}
    statuses = []
    for _ in range(2):
        async with session.post(url, json={"content": "eyes"}, headers=auth) as resp:
            statuses.append(resp.status)
    assert statuses == [201, 200]

    with pytest.raises(BadRequest) as caught:
        await gh.post("/repos/octo/bot/issues/3/comments", data={"body": "x" * 65537})
    assert "Body is too long" in str(caught.value.errors) and len(fake_github.violations) == 1
    fake_github.violations.clear()
    await gh.delete(f"/repos/octo/bot/issues/comments/{mine['id']}")
    assert mine["id"] not in fake_github.comments


async def test_permissions_and_rate_limit(fake_github, session, repo):
    fake_github.permissions[("octo/bot", "maint")] = "maintain"
    gh = await installation_gh(fake_github, session)
    maint = await gh.getitem("/repos/octo/bot/collaborators/maint/permission")
    assert (maint["permission"], maint["role_name"]) == ("write", "maintain")
    anyone = await gh.getitem("/repos/octo/bot/collaborators/someone/permission")
    assert anyone["permission"] == "read"
    limits = await gh.getitem("/rate_limit")  # does not count itself
    assert limits["rate"]["used"] == fake_github.rate_used == 3  # token + two permission look-ups
    assert gh.rate_limit.remaining == 5000 - 3


def test_sign_and_payload():
    assert sign(b"Hello, World!", "It's a Secret to Everybody") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )
    event = payload("pull_request.opened", action="synchronize")
    assert event["action"] == "synchronize" and payload("pull_request.opened")["action"] == "opened"


async def test_fork_pull_and_delay(fake_github, session, repo):
    fork = fake_github.add_pull(
        "octo",
        "bot",
        9,
        head_sha=repo["head"],
        head_ref="patch-1",
        head_repo_full_name="someone/bot",
        maintainer_can_modify=True,
    )
    assert fork["head"]["repo"]["fork"] and fork["head"]["label"] == "someone:patch-1"
    assert str(repo["git"].references["refs/pull/9/head"].target) == repo["head"]
    gh = await installation_gh(fake_github, session)
    run = await gh.post("/repos/octo/bot/check-runs", data={"name": "llama-bot", "head_sha": repo["head"]})
    assert run["pull_requests"] == []  # as on GitHub: fork PRs are not linked to check runs
    with pytest.raises(BadRequest) as caught:  # the fork itself is not registered
        await gh.getitem("/repos/someone/bot/git/ref/heads/patch-1")
    assert caught.value.status_code == 404

    fake_github.delay(r"/rate_limit$", 0.3)
    started = time.monotonic()
    await gh.getitem("/rate_limit")
    assert time.monotonic() - started >= 0.3
