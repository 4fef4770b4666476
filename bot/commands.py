"""Slash commands in comments on pull requests (and, for some, on issues): which lines are commands and what each one takes.

Pure functions of the comment text and the configured prefix. The command
table is data, so a new command is one more row (and one handler in the
service).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.markup import code_span

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)  # hidden in the rendered comment: not a command
PREFIX_SHAPE = re.compile(r"^[/!]\w[\w.-]*$")  # what `command_prefix` may be: `/llama`, `!ollama-bot`
_SIGIL_WORD = re.compile(r"^[/!]\w")


@dataclass(frozen=True)
class CommandSpec:
    name: str
    usage: str  # the arguments as the help shows them
    summary: str
    min_args: int = 0
    max_args: int | None = 0  # None: any number
    on_issues: bool = False  # it also runs in a comment on an issue (the others need a pull request)


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "regenerate-patches",
        "[pin]",
        "regenerate the carried patches that no longer apply and commit them to this branch",
        0,
        1,
    ),
    CommandSpec(
        "validate",
        "<platform> [<platform> ...] | all",
        "run the platform test workflows on this branch",
        1,
        None,
    ),
    CommandSpec("recheck", "", "check the carried patches again and refresh the checklist"),
    CommandSpec(
        "bump",
        "<pin> [<pin> ...] [<ref>]",
        "open the pull request that moves the pins to `<ref>` (default: each one's newest release tag) with "
        "the patches rebuilt, or update the one open for them; on an issue too",
        1,
        None,
        True,
    ),
    CommandSpec(
        "skip",
        "<pin> <ref>",
        "leave `<ref>` out of the pin's scheduled bumps (a bump that names it still takes it); on an issue too",
        2,
        2,
        True,
    ),
    CommandSpec(
        "dashboard",
        "",
        "refresh the pin dashboard issue now (how far behind each pin is), and link it; on an issue too",
        on_issues=True,
    ),
    CommandSpec("help", "", "show this help", on_issues=True),
)
SPECS = {spec.name: spec for spec in COMMANDS}


@dataclass(frozen=True)
class Command:
    name: str  # a COMMANDS name; anything that cannot run becomes "help" with a `problem`
    args: tuple[str, ...] = ()
    line: str = ""
    problem: str | None = None


def command_lines(body: str) -> list[str]:
    """The lines that may hold a command: outside fenced or indented code and quotes. Inline code that
    opens a line hides it (`` `/llama recheck` `` quotes a command); further on, only its backticks go
    (`` /llama validate `metal` `` names metal)."""
    return [
        _without_inline_code(raw.strip())
        for raw in _outside_fences(_HTML_COMMENT.sub("", body or "").splitlines())
        if not (raw.startswith(("    ", "\t")) or raw.lstrip().startswith(">"))
    ]


def _outside_fences(lines: list[str]) -> Iterator[str]:
    """The lines that are neither in a fenced code block nor one of its fences."""
    fence: str | None = None
    for raw in lines:
        opening = _FENCE.match(raw)
        if fence is not None:
            fence = None if _closes(fence, opening, raw) else fence
        elif opening:
            fence = opening[1]
        else:
            yield raw


def _closes(fence: str, opening: re.Match[str] | None, raw: str) -> bool:
    """Whether `raw` ends the block `fence` opened: a fence of the same character, at least as long, with
    nothing after it."""
    return (
        opening is not None
        and opening[1][0] == fence[0]
        and len(opening[1]) >= len(fence)
        and not raw.strip()[len(opening[1]) :].strip()
    )


def _without_inline_code(line: str) -> str:
    return _INLINE_CODE.sub(lambda m: "" if m.start() == 0 else m[0].strip("`"), line).strip()


def looks_like_command(body: str) -> bool:
    """Whether a comment may hold a command under any prefix (`/` or `!`, then a word, like `/llama`).

    The webhook router uses this to skip ordinary comments (`@alice thanks`,
    `:+1:`) without knowing the repository's configured prefix; the job parses
    exactly.
    """
    return any(_SIGIL_WORD.match(line) for line in command_lines(body))


def _check_arity(spec: CommandSpec, args: tuple[str, ...], prefix: str) -> str | None:
    usage = f"`{prefix} {spec.name}{' ' + spec.usage if spec.usage else ''}`"
    if len(args) < spec.min_args:
        return f"{code_span(f'{prefix} {spec.name}')} needs arguments: {usage}"
    if spec.max_args is not None and len(args) > spec.max_args:
        return (
            f"{code_span(f'{prefix} {spec.name}')} takes {'no' if spec.max_args == 0 else f'at most {spec.max_args}'} "
            f"argument{'' if spec.max_args == 1 else 's'}: {usage}"
        )
    return None


def parse_commands(body: str, prefix: str) -> list[Command]:
    """Every command in a comment, in order, duplicates dropped; unknown or malformed ones become help."""
    found: list[Command] = []
    wanted = prefix.lower()
    for line in command_lines(body):
        words = line.split()
        if not words or words[0].lower() != wanted:
            continue
        command = _command(words, line, prefix)
        if all((c.name, c.args, c.problem) != (command.name, command.args, command.problem) for c in found):
            found.append(command)
    return found


def _command(words: list[str], line: str, prefix: str) -> Command:
    """The command a line under the prefix asks for: the prefix alone asks for help, and a name or arguments
    that cannot run become help saying why."""
    name, args = (words[1].lower(), tuple(words[2:])) if len(words) > 1 else ("help", ())
    spec = SPECS.get(name)
    if spec is None:
        return Command("help", (), line, f"I do not know the command {code_span(f'{prefix} {words[1]}')}.")
    problem = _check_arity(spec, args, prefix)
    return Command("help", (), line, problem) if problem else Command(name, args, line)
