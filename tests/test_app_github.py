"""App authentication and retries: pure backoff decisions, then against the fake GitHub."""

import time

import pygit2
import pytest
from gidgethub import GitHubBroken, RateLimitExceeded

from bot.gh.github import GitHubApp
from bot.gh.retries import RetryPolicy, retry_delay
from tests import fakegithub
from tests.fakegithub import commit

fake_github = fakegithub.fake_github

POLICY = RetryPolicy(attempts=4, base_delay=1.0, max_delay=8.0, secondary_wait=60.0, max_wait=120.0)
FAST = RetryPolicy(
    attempts=3, base_delay=0.01, max_delay=0.05, secondary_wait=0.05, max_wait=5.0, timeout=0.5
)


def delay(attempt=1, status=502, headers=None, body=b"", now=1000.0, jitter=0.0):
    return retry_delay(POLICY, attempt, status, headers or {}, body, now=now, jitter=jitter)


def test_server_errors_and_timeouts_back_off_exponentially_with_jitter():
    assert [delay(a) for a in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert [delay(a, jitter=0.999999) for a in (1, 2, 3)] == pytest.approx([1.0, 2.0, 4.0])
    assert delay(1, status=None) == 0.5
    assert delay(4) is None  # the last attempt
    assert retry_delay(POLICY, 3, 500, {}, now=0, jitter=0.999999) == pytest.approx(4.0)


def test_backoff_is_capped():
    policy = RetryPolicy(attempts=10, base_delay=1.0, max_delay=8.0)
    assert retry_delay(policy, 8, 503, {}, now=0, jitter=0.999999) == pytest.approx(8.0)


def test_client_errors_are_not_retried():
    for status in (400, 401, 404, 422):
        assert delay(status=status) is None
    assert delay(status=403, body=b'{"message": "Resource not accessible by integration"}') is None


def test_retry_after_is_honoured():
    assert delay(status=429, headers={"retry-after": "7"}) == 7.0
    assert delay(status=403, headers={"retry-after": "3"}) == 3.0
    assert delay(status=503, headers={"retry-after": "2"}) == 2.0
    assert delay(status=429, headers={"retry-after": "600"}) is None  # longer than max_wait: give up


def test_primary_rate_limit_waits_until_reset():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"}
    assert delay(status=403, headers=headers, now=1000.0) == 31.0
    assert delay(status=429, headers=headers, now=1040.0) == 1.0


def test_secondary_rate_limit_without_headers_waits_at_least_a_minute():
    body = b'{"message": "You have exceeded a secondary rate limit."}'
    assert delay(status=403, body=body) == 60.0
    assert delay(status=429) == 60.0


@pytest.fixture
def repo(fake_github, tmp_path):
    git = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    sha = commit(git, {"README.md": "hi\n"}, ref="refs/heads/main")
    fake_github.add_repo("octo", "r", git)
    return sha


def app(fake, session, policy=FAST) -> GitHubApp:
    return GitHubApp(
        session, app_id=str(fake.app_id), private_key=fake.private_key_pem, base_url=fake.url, policy=policy
    )


async def test_installation_token_is_cached_and_the_jwt_accepted(fake_github, session, repo):
    github = app(fake_github, session)
    gh = github.installation(fake_github.installation_id)
    await gh.getitem("/repos/octo/r/git/commits/{sha}", {"sha": repo})
    await github.installation(fake_github.installation_id).getitem(
        "/repos/octo/r/git/commits/{sha}", {"sha": repo}
    )
    assert fake_github.tokens_issued == 1
    token_request = next(r for r in fake_github.requests if r["path"].endswith("/access_tokens"))
    assert token_request["status"] == 201  # the fake checked RS256, iss, iat and exp like GitHub


async def test_expired_token_is_renewed_once_on_401(fake_github, session, repo):
    github = app(fake_github, session)
    gh = github.installation(fake_github.installation_id)
    await gh.getitem("/repos/octo/r/git/commits/{sha}", {"sha": repo})
    fake_github.expire_all_tokens()
    data = await gh.getitem("/repos/octo/r/git/commits/{sha}", {"sha": repo})
    assert data["sha"] == repo
    assert fake_github.tokens_issued == 2
    assert [r["status"] for r in fake_github.requests if "/git/commits/" in r["path"]] == [200, 401, 200]


async def test_502_is_retried_then_succeeds(fake_github, session, repo):
    fake_github.fail("GET", r"/git/commits/", 502, times=2)
    gh = app(fake_github, session).installation(fake_github.installation_id)
    assert (await gh.getitem("/repos/octo/r/git/commits/{sha}", {"sha": repo}))["sha"] == repo
    assert [r["status"] for r in fake_github.requests if "/git/commits/" in r["path"]] == [502, 502, 200]


async def test_persistent_502_raises_after_the_last_attempt(fake_github, session, repo):
    fake_github.fail("GET", r"/git/commits/", 502, times=10)
    gh = app(fake_github, session).installation(fake_github.installation_id)
    with pytest.raises(GitHubBroken):
        await gh.getitem("/repos/octo/r/git/commits/{sha}", {"sha": repo})
    assert sum("/git/commits/" in r["path"] for r in fake_github.requests) == FAST.attempts


async def test_rate_limit_with_retry_after_waits_and_posts_once(fake_github, session, repo):
    fake_github.add_pull("octo", "r", 1, repo, "main")
    fake_github.fail(
        "POST",
        r"/issues/1/comments",
        403,
        times=1,
        headers={"retry-after": "1"},
        body={"message": "You have exceeded a secondary rate limit."},
    )
    gh = app(fake_github, session).installation(fake_github.installation_id)
    started = time.monotonic()
    await gh.post("/repos/octo/r/issues/1/comments", data={"body": "hello"})
    assert time.monotonic() - started >= 1.0
    assert [c["body"] for c in fake_github.comments.values()] == ["hello"]


async def test_a_post_whose_answer_was_lost_is_looked_for_before_it_is_sent_again(fake_github, session, repo):
    """GitHub created the comment, then the answer was a 502: the retry finds it instead of posting twice."""
    fake_github.add_pull("octo", "r", 1, repo, "main")
    fake_github.fail("POST", r"/issues/1/comments", 502, times=1, after=True)
    gh = app(fake_github, session).installation(fake_github.installation_id)
    created = await gh.post_once(
        "/repos/octo/r/issues/1/comments",
        {},
        data={"body": "hello key-1"},
        find=lambda: find_body(gh, "key-1"),
    )
    assert [c["body"] for c in fake_github.comments.values()] == ["hello key-1"]
    assert created["id"] in fake_github.comments
    # Nothing was created: the lookup finds nothing and the POST is sent again.
    fake_github.fail("POST", r"/issues/1/comments", 502, times=1)
    again = await gh.post_once(
        "/repos/octo/r/issues/1/comments",
        {},
        data={"body": "hello key-2"},
        find=lambda: find_body(gh, "key-2"),
    )
    assert [c["body"] for c in fake_github.comments.values()] == ["hello key-1", "hello key-2"]
    assert again["body"] == "hello key-2"


async def find_body(gh, text):
    async for comment in gh.getiter("/repos/octo/r/issues/1/comments"):
        if text in comment["body"]:
            return comment
    return None


async def test_exhausted_primary_rate_limit_raises(fake_github, session, repo):
    reset = int(time.time()) + 3600
    fake_github.fail(
        "GET",
        r"/git/commits/",
        403,
        times=5,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        body={"message": "API rate limit exceeded"},
    )
    gh = app(fake_github, session).installation(fake_github.installation_id)
    with pytest.raises(RateLimitExceeded):  # an hour away is longer than max_wait: fail fast
        await gh.getitem("/repos/octo/r/git/commits/{sha}", {"sha": repo})


async def test_timeouts_are_retried(fake_github, session, repo):
    fake_github.delay(r"/git/blobs/", 2.0)
    gh = app(fake_github, session).installation(fake_github.installation_id)
    with pytest.raises(TimeoutError):
        await gh.getitem("/repos/octo/r/git/blobs/{sha}", {"sha": "0" * 40})
    assert sum("/git/blobs/" in r["path"] for r in fake_github.requests) == FAST.attempts
