"""Slash-command parsing is a pure function of the comment text and the prefix."""

from bot.commands import COMMANDS, Command, command_lines, looks_like_command, parse_commands


def names(body: str, prefix: str = "/llama") -> list[tuple[str, tuple[str, ...]]]:
    return [(c.name, c.args) for c in parse_commands(body, prefix)]


def test_one_command_per_line_with_arguments():
    body = "Thanks!\n/llama regenerate-patches llama.cpp\n/llama recheck\n"
    assert names(body) == [("regenerate-patches", ("llama.cpp",)), ("recheck", ())]


def test_prefix_must_be_the_first_word_and_is_configurable():
    assert names("please /llama recheck") == []
    assert names("/llamarecheck") == []
    assert names("!bot recheck", prefix="!bot") == [("recheck", ())]
    assert names("/llama recheck", prefix="!bot") == []
    assert names("/LLAMA Recheck") == [("recheck", ())]


def test_code_blocks_inline_code_and_quotes_are_not_commands():
    body = "\n".join(  # noqa: FLY002  (one line per case reads better)
        [
            "```",
            "/llama recheck",
            "```",
            "~~~~ text",
            "/llama help",
            "~~~",  # shorter than the opening fence: still inside
            "/llama regenerate-patches",
            "~~~~",
            "`/llama recheck`",
            "> /llama recheck",
            "  > /llama help",
            "    /llama recheck",
            "/llama validate metal",
        ]
    )
    assert names(body) == [("validate", ("metal",))]


def test_unclosed_fence_swallows_the_rest():
    assert names("```\n/llama recheck") == []


def test_unknown_command_and_bare_prefix_become_help():
    commands = parse_commands("/llama frobnicate\n/llama", "/llama")
    assert [c.name for c in commands] == ["help", "help"]
    assert "frobnicate" in commands[0].problem
    assert commands[1].problem is None
    # the commenter's word is quoted as one code span, whatever backticks it holds
    (odd,) = parse_commands("/llama fro`b<img>", "/llama")
    assert odd.problem == "I do not know the command ``/llama fro`b<img>``."


def test_wrong_number_of_arguments_becomes_help_with_usage():
    (command,) = parse_commands("/llama regenerate-patches a b", "/llama")
    assert command.name == "help" and "at most 1 argument" in command.problem
    (command,) = parse_commands("/llama validate", "/llama")
    assert command.name == "help" and "needs arguments" in command.problem
    (command,) = parse_commands("/llama recheck now", "/llama")
    assert command.name == "help" and "takes no arguments" in command.problem


def test_duplicates_are_dropped():
    assert names("/llama recheck\n/llama recheck\n/llama help") == [("recheck", ()), ("help", ())]


def test_command_keeps_its_line():
    assert parse_commands("  /llama recheck  ", "/llama") == [Command("recheck", (), "/llama recheck")]


def test_looks_like_command_for_the_router():
    assert looks_like_command("/llama recheck")
    assert looks_like_command("hi\n!bot help")
    assert not looks_like_command("LGTM, thanks")
    assert not looks_like_command("- a list item\n> /llama recheck\n`/llama help`")


def test_a_command_in_an_html_comment_is_hidden_and_not_run():
    assert parse_commands("thanks\n<!--\n/llama regenerate-patches\n-->\n", "/llama") == []
    assert [c.name for c in parse_commands("<!-- note --> \n/llama recheck", "/llama")] == ["recheck"]


def test_inline_code_hides_a_line_it_opens_and_only_loses_its_backticks_further_on():
    assert command_lines("/llama regenerate-patches `llama.cpp`") == ["/llama regenerate-patches llama.cpp"]
    assert command_lines("`/llama recheck` is how") == ["is how"]
    assert [(c.name, c.args) for c in parse_commands("/llama validate `metal` `cuda`", "/llama")] == [
        ("validate", ("metal", "cuda"))
    ]


def test_table_is_data():
    assert {spec.name for spec in COMMANDS} >= {"regenerate-patches", "validate", "recheck", "help"}
