"""Credentials never reach the logs, comments or links; nothing else in a log line is touched."""

import base64
import io
import json
import logging
import sys
from dataclasses import replace

from bot.service.logs import REDACTED, JsonFormatter, configure_logging
from bot.service.settings import Settings
from tests.conftest import SECRET, Bot, bot_settings
from tests.fakegithub import _default_key, commit

TOKEN = "ghs_" + "T0k3n" * 8
PEM = _default_key()


def formatted(formatter: JsonFormatter, msg: str, *args, exc_info=None, **extra) -> dict:
    record = logging.LogRecord("bot.test", logging.WARNING, __file__, 1, msg, args, exc_info)
    for key, value in extra.items():
        setattr(record, key, value)
    return json.loads(formatter.format(record))


def test_a_short_secret_inside_words_leaves_the_line_alone():
    formatter = JsonFormatter(("ing", PEM))
    entry = formatted(
        formatter, "claiming a job failed while %s", "renewing", reason="missing ref", path="/x/ing"
    )
    assert entry["message"] == "claiming a job failed while renewing"
    assert (entry["reason"], entry["path"]) == ("missing ref", "/x/ing")


def test_secret_values_are_redacted_where_they_are_logged():
    formatter = JsonFormatter((SECRET, PEM))
    entry = formatted(
        formatter,
        "signed with %s, key %s, token %s",
        SECRET,
        PEM,
        TOKEN,
        secret_used=SECRET,
        delivered_with=SECRET,
        installation_token="anything at all",
        authorization=f"token {TOKEN}",
        private_key="-----BEGIN",
        job_id=7,
    )
    assert entry["message"] == f"signed with {REDACTED}, key {REDACTED}, token {REDACTED}"
    assert {
        entry[k]
        for k in ("secret_used", "delivered_with", "installation_token", "authorization", "private_key")
    } == {REDACTED}
    assert entry["job_id"] == 7
    line = json.dumps(entry)
    assert SECRET not in line and TOKEN not in line and "PRIVATE KEY" not in line


def test_credentials_in_tracebacks_and_urls_are_redacted():
    formatter = JsonFormatter((SECRET,))
    try:
        raise RuntimeError(f"fetch https://bot:{TOKEN}@github.com/ggml-org/llama.cpp failed, key {PEM}")
    except RuntimeError:
        entry = formatted(
            formatter,
            "fetching %s",
            "https://oauth2:hunter2hunter2@example.com/x.git",
            exc_info=sys.exc_info(),
        )
    assert entry["message"] == f"fetching https://{REDACTED}@example.com/x.git"
    assert "hunter2" not in json.dumps(entry) and TOKEN not in entry["exception"]
    assert "BEGIN PRIVATE KEY" not in entry["exception"]
    assert f"https://{REDACTED}@github.com/ggml-org/llama.cpp failed" in entry["exception"]


async def test_credentials_in_the_upstream_url_appear_in_no_log_comment_or_link(
    fake_github, scenario, tmp_path
):
    user, password = "mirror-reader-x9", "pa55-w0rd-of-the-mirror"
    upstream = f"https://{user}:{password}@github.com/ggml-org/llama.cpp"
    config = (
        f'[[pin]]\nname = "llama.cpp"\nversion_file = "LLAMA_CPP_VERSION"\npatches = "llama/compat"\n'
        f'upstream = "{upstream}"\n'
    )
    commit(scenario.git, {".github/llama-bot.toml": config}, ref="refs/heads/main", message="bot config")
    settings = replace(
        bot_settings(fake_github, scenario, tmp_path / "var"),
        url_instead_of=f"{scenario.upstream_path}={upstream}",
    )
    bot = await Bot(settings).start()
    stream = io.StringIO()
    handler = configure_logging(settings, stream)
    try:
        assert (await bot.deliver("pull_request", scenario.pull_event("opened")))[0] == 202
        await bot.settle()
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)
        await bot.close()
    (comment,) = scenario.bot_comments()
    assert "https://github.com/ggml-org/llama.cpp/compare/v1...v2" in comment["body"]
    runs = scenario.check_runs(scenario.head_sha)
    assert len(runs) == 2 and stream.getvalue()
    for text in [comment["body"], stream.getvalue(), *(json.dumps(r["output"]) for r in runs)]:
        assert password not in text and user not in text


COMMIT = "6f1c7e0b9d2a4c3e8f5a1b2c3d4e5f60718293a4"  # a commit id: 40 hex digits that are no credential
OPAQUE = "opaque-Xq7"  # any length, where the header is named
BASIC = base64.b64encode(b"x-access-token:hunter2-of-the-mirror").decode()
# Each credential as it is written where it is logged, and the part of it that must not show.
CREDENTIAL_SHAPES = {
    "installation token": ("ghs_" + "A1b2C3d4E5f6" * 3, "A1b2C3d4E5f6" * 3),
    "personal access token": ("ghp_" + "Zz09Yy18Xx27" * 3, "Zz09Yy18Xx27" * 3),
    "OAuth token": ("gho_" + "Oo11Aa22Uu33" * 3, "Oo11Aa22Uu33" * 3),
    "user-to-server token": ("ghu_" + "Uu44Ss55Ee66" * 3, "Uu44Ss55Ee66" * 3),
    "refresh token": ("ghr_" + "Rr77Ff88Hh99" * 6, "Rr77Ff88Hh99" * 6),
    "fine-grained token": ("github_pat_11ABCDEFG0aBcDeFgHiJkLm_" + "Qw3" * 20, "Qw3" * 20),
    "installation token, older shape": ("v1." + "0a1b2c3d4e" * 4, "0a1b2c3d4e" * 4),
    "JWT": (
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2lnbmF0dXJlLW9mLXRoZS1qd3Q",
        "c2lnbmF0dXJlLW9mLXRoZS1qd3Q",
    ),
    "Authorization header, Bearer": (f"Authorization: Bearer {OPAQUE}", OPAQUE),
    "authorization header in a dict": (f"{{'authorization': 'token {OPAQUE}'}}", OPAQUE),
    "Authorization header, Basic": (f"Authorization: Basic {BASIC}", BASIC),
    "Basic credentials": (f"sent Basic {BASIC}", BASIC),
    "token credentials": ("token " + "0a1b2c3d4e" * 4, "0a1b2c3d4e" * 4),
    "bearer credentials": ("Bearer " + "Tk5-" * 6, "Tk5-" * 6),
}


def logged_lines(settings, *calls) -> tuple[list[dict], str]:
    """The JSON lines the service's logging writes for `calls` (each logs through a logger), and anything
    logging itself printed to stderr."""
    stream, stderr = io.StringIO(), io.StringIO()
    handler = configure_logging(settings, stream)
    logger = logging.getLogger("bot.test")
    real_stderr, sys.stderr = sys.stderr, stderr
    try:
        for call in calls:
            call(logger)
    finally:
        sys.stderr = real_stderr
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)
    return [json.loads(line) for line in stream.getvalue().splitlines()], stderr.getvalue()


def test_every_credential_shape_is_masked_in_a_message_its_arguments_extras_and_traceback(tmp_path):
    def failing_call(written: str):
        def call(logger: logging.Logger) -> None:
            try:
                raise RuntimeError(f"GitHub refused {written} for commit {COMMIT}")
            except RuntimeError:
                logger.warning(
                    f"sent {written} for commit %s, then %s",
                    COMMIT,
                    written,
                    extra={"detail": written, "request": {"headers": written, "commit": COMMIT}},
                    exc_info=True,
                )

        return call

    calls = [failing_call(written) for written, _ in CREDENTIAL_SHAPES.values()]
    lines, stderr = logged_lines(settings_for(tmp_path), *calls)
    assert len(lines) == len(CREDENTIAL_SHAPES) and stderr == ""
    shown = {
        shape: [where for where in ("message", "detail", "request", "exception") if secret in entry[where]]
        for (shape, (_, secret)), entry in zip(CREDENTIAL_SHAPES.items(), lines)
    }
    assert {shape: where for shape, where in shown.items() if where} == {}
    for entry in lines:
        assert entry["message"].count(REDACTED) == 2 and REDACTED in entry["detail"]
        assert REDACTED in entry["request"] and REDACTED in entry["exception"]
        for where in (entry["message"], entry["request"], entry["exception"]):
            assert COMMIT in where  # the commit id next to it is no credential


def test_a_call_whose_arguments_do_not_fit_its_message_still_masks_them(tmp_path):
    token = CREDENTIAL_SHAPES["installation token"][0]
    lines, stderr = logged_lines(
        settings_for(tmp_path),
        lambda logger: logger.warning("refreshing %s", token, COMMIT),  # noqa: PLE1205 (the case in hand)
        lambda logger: logger.warning("refreshing %(token)s", {"other": token}),
    )
    assert stderr == "" and token not in json.dumps(lines)
    assert [entry["message"] for entry in lines] == [
        f"refreshing %s ('{REDACTED}', '{COMMIT}')",
        f"refreshing %(token)s {{'other': '{REDACTED}'}}",
    ]


def settings_for(tmp_path) -> Settings:
    return Settings.from_env(
        {
            "GITHUB_APP_ID": "42",
            "GITHUB_PRIVATE_KEY": PEM,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "LLAMA_BOT_DATA_DIR": str(tmp_path),
        }
    )
