"""Credentials never reach the logs, comments or links; nothing else in a log line is touched."""

import io
import json
import logging
import sys
from dataclasses import replace

from bot.logs import REDACTED, JsonFormatter, configure_logging
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
