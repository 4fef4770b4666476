"""Output Ollama parses: its own patterns against what upstream's code prints, at both refs.

Every line template (bot/review/producers.py) a change removes from code that writes to a program Ollama
runs is rendered to sample lines (bot/review/samplelines.py) and tested with the patterns Ollama's Go code
applies to that program's output, as the contract inventory finds them (bot/review/gopatterns.py). A
pattern that matched a removed template and matches nothing the program prints at the new ref is a line
Ollama stops recognising with no error anywhere (a device list, free memory, system info, an error).
"Nothing" means: no template of the same file in the same preprocessor branch, none the bump added
elsewhere and, for a pattern that only tests for text (no capture group), none in any file Ollama builds.
A line still printed by the template in the old one's place can still change what Ollama reads: when every
such template gives a capture group other text (`[%d] %s` where it took `%s`), the values Ollama reads from
the line are no longer the ones it expects. The pattern's contract says where Ollama applies it, and to what.
"""

from __future__ import annotations

import ast
import difflib
import operator
import re
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from bot.cache import facts
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange, Span
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.cpieces import FUNCTION_NAMES
from bot.review.gopatterns import (
    LogPattern,
    distinct_refs,
    go_function_at,
    is_program_output,
    output_searches,
    program_of,
    streams_of,
)
from bot.review.producers import (
    CALL_LOOKBEHIND,
    READ_PAST,
    SourceFile,
    Template,
    function_above,
    windows,
)
from bot.review.samplelines import (
    PLAIN_VALUES,
    Sample,
    captured_arguments,
    plain_lines,
    rendered_lines,
    samples,
    shape,
)

__all__ = [
    "Program",
    "log_draft",
    "log_line_drafts",
    "matched_templates",
    "needles_of",
    "new_printer_drafts",
    "patterns_id",
    "printed_patterns",
]

MAX_PATTERN_SHOWN = 70
MAX_CODE_SHOWN = 200  # characters of a printed line or a print statement a finding quotes


@dataclass(frozen=True)
class Program:
    """What the detector asks of the review beyond the diff, each asked only when a candidate needs it."""

    # the programs code at an upstream path writes to the output of (None: any, a library's code)
    writes_to: Callable[[str], frozenset[str] | None]
    patterns: Callable[[], list[LogPattern]]  # Ollama's patterns that need some text (`printed_patterns`)
    # the C/C++ files Ollama builds at the new ref that hold one of the needles (None: not in the clone)
    sources: Callable[[Collection[bytes]], Iterator[tuple[str, bytes | None]]]

    def runs(self, path: str) -> bool:
        """Whether code at `path` writes to the output of a program Ollama runs and reads with a pattern."""
        programs = self.writes_to(path)
        return programs is None or any(program_of(p.contract) in programs for p in self.patterns())

    def reads(self, path: str, pattern: LogPattern) -> bool:
        """Whether code at `path` writes to the output of the program `pattern` reads."""
        programs = self.writes_to(path)
        return programs is None or program_of(pattern.contract) in programs


@dataclass(frozen=True)
class Lost:
    """A line a removed template printed that a pattern matched, with no template printing it now; or, with
    `successor`, printed now only with other text where the pattern captures a value."""

    change: FileChange
    pattern: LogPattern
    template: Template
    sample: Sample
    successor: Template | None = None


def log_line_drafts(changes: list[FileChange], local: Mapping[str, str], program: Program) -> list[Draft]:
    """One draft per line Ollama matches that the bump stops printing in a program Ollama runs."""
    found = _lost(changes, program)
    recaptured = [item for item in _once(found) if item.successor is not None]
    lost = [item for item in found if item.successor is None]
    lost = _not_added(lost, changes) if lost else []
    drafts = [_recaptured_draft(item, local) for item in recaptured]
    if not lost:
        return drafts
    unread, printed = _searched_elsewhere(lost, changes, program)
    return drafts + [
        log_draft(item, local, unread) for item in _once(lost) if item.pattern.source not in printed
    ]


def new_printer_drafts(changes: list[FileChange], local: Mapping[str, str], program: Program) -> list[Draft]:
    """One draft per pattern Ollama reads values from that a file printing no line of it before now prints,
    while no change stops printing one and some other file Ollama builds still does: Ollama now reads the
    values of a second line, printed by other code at another time."""
    added = _added_prints(changes, program)
    if not added:
        return []
    lost = {item.pattern.source for item in _lost(changes, program)}
    fresh = [a for a in added if a.pattern.source not in lost and not _printed_before(a.change, a.pattern)]
    printed = _printed_elsewhere({a.pattern.source: a.pattern for a in fresh}, changes, program)
    once = {(a.change.path, a.pattern.source): a for a in fresh if a.pattern.source in printed}
    return [_second_printer_draft(a, local) for a in once.values()]


@dataclass(frozen=True)
class Added:
    """A template a change adds that prints a line of a pattern."""

    change: FileChange
    pattern: LogPattern
    template: Template
    sample: Sample


def _added_prints(changes: list[FileChange], program: Program) -> list[Added]:
    """The templates the changes add that print a line of a pattern Ollama reads values from, in code of the
    program the pattern reads."""
    adding = [c for c in changes if _adds_a_string(c) and program.runs(c.path)]
    patterns = [p for p in program.patterns() if p.extracts] if adding else []
    return [a for c in (adding if patterns else []) for a in _added_in(c, patterns, program)]


def _added_in(change: FileChange, patterns: list[LogPattern], program: Program) -> list[Added]:
    return [
        Added(change, p, t, s) for t, p, s, _ in _added(change, patterns) if program.reads(change.path, p)
    ]


def _adds_a_string(change: FileChange) -> bool:
    return bool(change.new_path) and any('"' in line for line in change.added_raw)


def _printed_elsewhere(
    tested: Mapping[str, LogPattern], changes: list[FileChange], program: Program
) -> set[str]:
    """The patterns of `tested` a file the changes leave alone prints a line of."""
    if not tested:
        return set()
    changed = {path for c in changes for path in (c.path, c.old_path)}
    found = [(p, data) for p, data in program.sources(_needles_of(tested.values())) if p not in changed]
    return set().union(*(_printing(path, data, tested) for path, data in found))


def _printed_before(change: FileChange, pattern: LogPattern) -> bool:
    """Whether the file printed a line of the pattern before the change."""
    old = change.old_text.encode() if change.old_path else b""
    return bool(_printing(change.old_path or change.path, old, {pattern.source: pattern}))


def _second_printer_draft(item: Added, local: Mapping[str, str]) -> Draft:
    """The finding: the new line, the file that printed it alone before, and where Ollama reads it."""
    change, template, pattern, sample = item.change, item.template, item.pattern, item.sample
    contract = pattern.contract
    where = code_span(f"{contract.ref.path}:{contract.ref.line}")
    detail = (
        f"Ollama's pattern {code_span(pattern.source)} ({where}) reads values from a line of "
        f"{_read_from(contract)} that other code printed alone. At the new ref, "
        f"{code_span(_shortened(template.code.strip(), MAX_CODE_SHOWN))} "
        f"({code_span(f'{change.path}:{template.line}')}) prints a line it matches too: "
        f"{code_span(_shortened(sample.line.rstrip(), MAX_CODE_SHOWN))}, at another point of the program's "
        f"run. {_reader(contract, local)} reads the values of every line it matches: it may now take this "
        "line's."
    )
    return Draft(
        "server",
        "medium",
        f"{_output(contract)} Ollama parses: {code_span(_shortened(pattern.source))} now also matches a line "
        f"{code_span(change.path)} prints",
        detail,
        change.path,
        template.line,
        (),
        None,
        distinct_refs((contract.ref, *contract.used_at)),
        cause=f"output pattern {contract.ref.path}:{contract.ref.line}",
    )


def printed_patterns(contracts: Iterable[OutputPattern]) -> list[LogPattern]:
    """Ollama's patterns (of its output contracts, and the texts it searches an HTTP answer's body for: an
    error message is made like a log line) that a line must hold some text to match: those a template can be
    tested with."""
    contracts = list(contracts)
    searched = [*output_searches(contracts), *_answer_searches(contracts)]
    return [p for p in searched if shape(p.regex).needles or (shape(p.regex).skeleton and p.extracts)]


def _answer_searches(contracts: Iterable[OutputPattern]) -> list[LogPattern]:
    """The texts Ollama searches in an HTTP answer's body (`strings.Contains(err.Error(), "too large")`),
    read as the patterns of a program's output are (each keeps its own contract)."""
    found = []
    for c in contracts:
        if c.sources and all(_ANSWER.match(s) for s in c.sources):
            found += [LogPattern(p.source, p.regex, c) for p in output_searches([replace(c, sources=("-",))])]
    return found


_ANSWER_SUFFIX = " response"
_ANSWER = re.compile(r"^[A-Z]+ /\S*" + _ANSWER_SUFFIX + "$")  # an HTTP answer's body, not a stream of frames


def _lost(changes: list[FileChange], program: Program) -> list[Lost]:
    """The lines removed templates printed that Ollama's patterns match, printed nowhere the bump kept or
    put them."""
    losing = [c for c in changes if _loses_a_string(c, program.runs)]
    patterns = program.patterns() if losing else []
    lost = [item for c in losing for item in _lost_in(c, patterns)] if patterns else []
    return [item for item in lost if program.reads(item.change.path, item.pattern)]


def _once(lost: list[Lost]) -> list[Lost]:
    """One per template and pattern, whichever sample showed it."""
    once: dict[tuple[str, int, LocalRef], Lost] = {}
    for item in lost:
        once.setdefault((item.change.path, item.template.line, item.pattern.contract.ref), item)
    return list(once.values())


def _loses_a_string(change: FileChange, runs: Callable[[str], bool]) -> bool:
    """Whether the change removes a line holding a string, or a line of a call's arguments (what a format
    prints), from a file of a program Ollama runs (asked last: it may read the inventory)."""
    removed = change.removed_raw
    printing = any('"' in line or _ARGUMENT_LINE.search(line) for line in removed)
    return bool(change.old_path and printing and runs(change.old_path))


_ARGUMENT_LINE = re.compile(r",\s*$|\)\s*;\s*$")  # a line a call's arguments go on from, or end on


# What a change's templates print of Ollama's patterns depends on the change's two blobs and the patterns alone:
# kept by those (the patterns by what they match, their lines aside), a re-check renders none of it again.
PRINTED = facts.Extractor("log-lines-printed", 3, __name__)


Printed = tuple[Template, LogPattern, Sample, "Template | None"]  # a line, and the successor printing it anew


def _kept(
    change: FileChange, patterns: list[LogPattern], found: Callable[[], list[Printed]], side: str
) -> list[Printed]:
    """`found()`, or what the facts store kept of it for the same change and patterns."""
    key = (*change.fact_key("-+"), side, patterns_id(patterns))
    index = {id(p): i for i, p in enumerate(patterns)}
    kept = facts.remembered(PRINTED, key, lambda: [(t, index[id(p)], s, n) for t, p, s, n in found()])
    return [(t, patterns[i], s, n) for t, i, s, n in kept]


def patterns_id(patterns: Sequence[LogPattern]) -> str:
    """The patterns' content address by what they match (their lines aside), for facts read with them."""
    return facts.text_id(repr([(p.source, p.regex.pattern, p.regex.flags) for p in patterns]))


def _lost_in(change: FileChange, patterns: list[LogPattern]) -> list[Lost]:
    """The lines the change's removed templates printed that a pattern matches and that nothing in the new
    file prints in the same preprocessor branch."""
    lost = _kept(change, patterns, lambda: _lost_lines(change, patterns), "lost")
    return [Lost(change, p, t, s, n) for t, p, s, n in lost]


def _lost_lines(change: FileChange, patterns: list[LogPattern]) -> list[Printed]:
    """The removed templates' lines nothing prints now (no successor), and those whose only successors
    print them with other text where the pattern captures a value (the first such successor)."""
    removed = sorted(n for s in change.significant for n in s.old_lines)
    found = matched_templates(
        change.old_lines, lambda: SourceFile(change.old_text, change.path), removed, patterns
    )
    if not found or not change.new_path:
        return [(t, p, s, None) for t, p, s in found]
    values = _SameValue(change.old_text, change.new_text)
    return _unsucceeded(found, SourceFile(change.new_text, change.path), values)


def _unsucceeded(
    found: list[tuple[Template, LogPattern, Sample]], new: SourceFile, values: _SameValue
) -> list[Printed]:
    """Of the lines found, those the new file prints with no template in the old one's branch, or only
    with other text (or other values) where the pattern captures a value (with the first template printing
    it)."""
    needles = Needles.of(p for _, p, _ in found)
    successors = new.templates_for(needles.texts, needles.skeletons)
    kept: list[Printed] = []
    for t, p, s in found:
        same = [n for n in successors if _succeeds(n, t, p, s, new.branches)]
        if not same or _recaptured(t, same, p) or _reargued(t, same, p, values):
            kept.append((t, p, s, same[0] if same else None))
    return kept


class _SameValue:
    """Whether two value expressions of a change are the same value: a name renamed (the old one gone from the
    file, the new one not in it before), or a constant of the file put in for its value (`total / 1024 /
    1024` -> `total / MiB` with `constexpr size_t MiB = 1024 * 1024;`)."""

    def __init__(self, old_text: str, new_text: str):
        self.old_words = set(_WORD.findall(old_text))
        self.new_words = set(_WORD.findall(new_text))
        self.constants = _constants((old_text, new_text))
        self.old_declared = set(_DECLARED.findall(_STRING_LITERAL.sub('""', old_text)))
        self.new_declared = set(_DECLARED.findall(_STRING_LITERAL.sub('""', new_text)))

    def same(self, before: str, after: str) -> bool:
        """The same value, or one the file does not say enough of to tell (a name it neither declares nor
        defines: a constant of another file)."""
        if self._only_renamed(before, after) or not self._known(before, after):
            return True
        return _arithmetic_equal(self._expanded(before), self._expanded(after))

    def _known(self, before: str, after: str) -> bool:
        """Whether each name only one side uses is declared or defined by the file at its side's ref."""
        a, b = set(_WORD.findall(before)), set(_WORD.findall(after))
        return all(n in self.constants or n in self.old_declared for n in a - b) and all(
            n in self.constants or n in self.new_declared for n in b - a
        )

    def _only_renamed(self, before: str, after: str) -> bool:
        a, b = _WORD.findall(before), _WORD.findall(after)
        if len(a) != len(b) or _WORD.sub("", before).split() != _WORD.sub("", after).split():
            return False
        pairs = {(x, y) for x, y in zip(a, b) if x != y}
        return all(x not in self.new_words and y not in self.old_words for x, y in pairs)

    def _expanded(self, expression: str) -> str:
        for _ in range(3):  # constants defined through constants
            expression = _WORD.sub(
                lambda m: f"({self.constants[m[0]]})" if m[0] in self.constants else m[0], expression
            )
        return expression


_WORD = re.compile(r"[A-Za-z_]\w*")
_CONSTANT = re.compile(
    r"\b(?:constexpr|const)\s+[\w:]+\s+(\w+)\s*=\s*([\w\s*+/()<>-]{1,80});"
    r"|^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([\d \t*+/()<>-]{1,80})$",
    re.MULTILINE,
)
_ARITHMETIC = re.compile(r"[\w\s+\-*/%()<>]+")
_CALL_OPEN = re.compile(r"\w\s*\(")
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# a variable or parameter a declaration names: `size_t idx)`, `auto & dev = ...`, `int n;`
_DECLARED = re.compile(r"\b[A-Za-z_][\w:<>]*\s*[*&]*\s+[*&]?\s*([A-Za-z_]\w*)\s*(?=[=;,)\[{:])")
_PROBES = ((1_000_003, 7_919), (998_244_353, 104_729))  # values names stand for, two ways
_OPERATORS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.LShift: lambda a, b: a << b if 0 <= b <= 64 else _too_big(),
    ast.RShift: lambda a, b: a >> b if 0 <= b <= 64 else _too_big(),
}
LIMIT = 1 << 96  # the largest value an evaluation carries


def _constants(texts: Iterable[str]) -> dict[str, str]:
    return {(m[1] or m[3]): (m[2] or m[4]) for text in texts for m in _CONSTANT.finditer(text)}


def _arithmetic_equal(before: str, after: str) -> bool:
    """Whether two integer expressions of names and numbers (no calls, no members) give the same value for
    the same values of their names, tried with two sets of values."""
    calls = _CALL_OPEN.search(before) or _CALL_OPEN.search(after)
    if calls or not (_ARITHMETIC.fullmatch(before) and _ARITHMETIC.fullmatch(after)):
        return False
    names = sorted({*_WORD.findall(before), *_WORD.findall(after)})
    for base, step in _PROBES:
        values = {name: str(base + step * i) for i, name in enumerate(names)}
        found = [_evaluated(_WORD.sub(partial(_value_of, values), e)) for e in (before, after)]
        if None in found or found[0] != found[1]:
            return False
    return True


def _value_of(values: Mapping[str, str], m: re.Match) -> str:
    return values[m[0]]


def _evaluated(expression: str) -> int | None:
    """An expression of numbers and integer operators (C's `/` as floor division of the non-negative values
    tried), read as a syntax tree, never run; None for anything else, or a value past LIMIT."""
    python = re.sub(r"(\d+)[uUlL]+\b", r"\1", expression).replace("/", "//")
    if len(python) > 400:
        return None
    try:
        return _value(ast.parse(python, mode="eval").body)
    except (ArithmeticError, SyntaxError, ValueError, RecursionError):
        return None


def _value(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        found = _OPERATORS[type(node.op)](_value(node.left), _value(node.right))
        return found if abs(found) < LIMIT else _too_big()
    raise ValueError("not integer arithmetic")


def _too_big() -> int:
    raise ValueError("past the limit")


def _reargued(old: Template, successors: list[Template], pattern: LogPattern, values: _SameValue) -> bool:
    """Whether every successor printing the old line fills a slot Ollama's pattern captures with another
    value (`dev_num` where `idx` was printed), the text around it the same; a renamed variable is the same
    value."""
    if not pattern.extracts:
        return False
    before = captured_arguments(old, pattern.regex)
    if not before or not any(all(before_group) for before_group in before):
        return False
    after = [captured_arguments(n, pattern.regex) for n in successors]
    return all(a is not None and _other_values(before, a, values) for a in after)


def _other_values(
    before: tuple[tuple[str, ...], ...], after: tuple[tuple[str, ...], ...], values: _SameValue
) -> bool:
    pairs = [(" ".join(b), " ".join(a)) for b, a in zip(before, after, strict=False) if b and a]
    return any(b != a and not values.same(b, a) for b, a in pairs)


def _needle_texts(patterns: Iterable[LogPattern]) -> set[str]:
    """The (lower-case) texts one of which every line a pattern matches holds, for all the patterns."""
    return {n for p in patterns for n in shape(p.regex).needles or ()}


def _recaptured(old: Template, successors: list[Template], pattern: LogPattern) -> bool:
    """Whether every successor printing the old line gives a group of the pattern other text (a template
    whose plain lines the pattern does not match is not judged; a pattern without groups captures none)."""
    if not pattern.extracts:
        return False
    before = _captures(old, pattern)
    after = [_captures(n, pattern) for n in successors]
    return bool(before) and all(a and a != before for a in after)


def _captures(template: Template, pattern: LogPattern) -> frozenset[tuple[str, ...]]:
    """What the pattern's groups capture of the template's lines printed with the plain sample values, each
    value written as its conversion (`%s`): `[%d] %s` where the group read `%s` is another value."""
    if template.kind == "entry":
        return frozenset()
    found = set()
    for line in plain_lines(template):
        m = pattern.regex.search(line)
        if m is not None:
            found.add(tuple(_as_conversions(m.group(g) or "") for g in range(1, pattern.regex.groups + 1)))
    return frozenset(found)


def _as_conversions(text: str) -> str:
    for value, conversion in PLAIN_VALUES:
        text = text.replace(value, conversion)
    return text


def matched_templates(
    lines: list[str], code: Callable[[], SourceFile], numbers: list[int], patterns: list[LogPattern]
) -> list[tuple[Template, LogPattern, Sample]]:
    """(template, pattern, sample) for each line a template reaching onto the numbered lines prints that a
    pattern matches; the file's code is read only when the lines may hold one."""
    held = _holding(lines, windows(numbers), patterns)
    if not held:
        return []
    source, on = code(), set(numbers)
    templates = [t for t in source.templates_in(held) if _reaches(t, on)]
    return [(t, p, s) for t in templates for p in patterns for s in _printed(t, p)]


def needles_of(patterns: Iterable[LogPattern]) -> Needles:
    """The (lower-case) texts one of which every line some pattern matches holds."""
    return Needles.of(patterns)


def _holding(
    lines: list[str], ranges: list[tuple[int, int]], patterns: list[LogPattern]
) -> list[tuple[int, int]]:
    """The line ranges a line some pattern matches may come from."""
    needles = Needles.of(patterns)
    return [r for r in ranges if _may_print(lines, r, needles)]


@dataclass(frozen=True)
class Needles:
    """The (lower-case) texts one of which every line of some pattern holds."""

    texts: frozenset[str]
    fewest: tuple[str, ...]  # the same test: those holding a shorter one left out
    # for the patterns without a needle: their runs of fixed text in order, within one statement
    skeletons: tuple[re.Pattern, ...] = ()

    @staticmethod
    def of(patterns: Iterable[LogPattern]) -> Needles:
        patterns = list(patterns)
        skeletons = frozenset(shape(p.regex).skeleton for p in patterns) - {()}
        return _needles(frozenset(_needle_texts(patterns)), skeletons)

    def in_text(self, text: str) -> bool:
        return any(n in text for n in self.fewest) or any(s.search(text) for s in self.skeletons)

    def name(self, function: str) -> bool:
        """Whether a function's name is part of a needle (printed with `__func__`, it supplies that part)."""
        return any(function.lower() in n for n in self.texts)


@lru_cache(maxsize=64)
def _needles(texts: frozenset[str], skeletons: frozenset[tuple[str, ...]] = frozenset()) -> Needles:
    ordered = sorted(texts, key=len)
    return Needles(
        texts,
        tuple(n for i, n in enumerate(ordered) if not any(m in n for m in ordered[:i])),
        tuple(re.compile(SKELETON_GAP.join(map(re.escape, runs))) for runs in sorted(skeletons)),
    )


SKELETON_GAP = r"[^;]{0,80}?"  # what may stand between two runs of a skeleton in code: conversions, spacing


def _may_print(lines: list[str], lines_range: tuple[int, int], needles: Needles) -> bool:
    """Whether the lines (and those a call starting there may reach) hold a needle, or the name of the
    function they are in does and they print that name (`__func__`)."""
    text = "\n".join(lines[lines_range[0] - 1 : lines_range[1] + READ_PAST]).lower()
    if needles.in_text(text):
        return True
    if not any(name.lower() in text for name in FUNCTION_NAMES):
        return False
    function = function_above(lines, lines_range[0])
    return function is not None and needles.name(function)


def _reaches(template: Template, lines: Container[int]) -> bool:
    return any(n in lines for n in range(template.line, template.last_line + 1))


def _printed(template: Template, pattern: LogPattern) -> list[Sample]:
    """The lines of `template` the pattern matches; for a name/value entry, itself when its name is a word
    the pattern reads a value after."""
    if template.kind == "entry":
        name = template.pieces[0]
        return [Sample(template.code, ())] if name in shape(pattern.regex).keys else []
    return samples(template, pattern.regex)


def _succeeds(
    new: Template, old: Template, pattern: LogPattern, sample: Sample, branches: Container[tuple[str, ...]]
) -> bool:
    """Whether a template of the new file prints what `old` printed for the pattern, in its branch (any
    branch, when the new file no longer has that one)."""
    if new.branch != old.branch and old.branch in branches:
        return False
    return _prints_the_same(new, old, pattern, sample)


def _prints_the_same(new: Template, old: Template, pattern: LogPattern, sample: Sample) -> bool:
    """Whether `new` prints the line `old` printed for the pattern: a line with the same fixed words, or an
    entry of the same name."""
    if old.kind == "entry":
        return new.kind == "entry" and new.pieces[0] == old.pieces[0]
    return any(s.signature == sample.signature for s in _printed(new, pattern))


def _not_added(lost: list[Lost], changes: list[FileChange]) -> list[Lost]:
    """The lost lines that no template the bump added in another file prints (a line that moved still
    prints)."""
    patterns = list({id(item.pattern): item.pattern for item in lost}.values())
    own = {item.change.path for item in lost}
    needles = Needles.of(patterns)
    added = [(c.path, t) for c in _adding(changes, own, needles) for t, _, _, _ in _added(c, patterns)]
    return [item for item in lost if not _moved(item, added)]


def _adding(changes: list[FileChange], own: set[str], needles: Needles) -> list[FileChange]:
    """The changes that add, to a file other than the one (if only one) the lost lines are from, a line
    holding a needle or printing a function's name: only those can print a lost line."""
    return [
        c
        for c in changes
        if c.new_path and (len(own) > 1 or c.path not in own) and _may_add(c.added_raw, needles)
    ]


def _may_add(added: list[str], needles: Needles) -> bool:
    text = "\n".join(added).lower()
    return needles.in_text(text) or any(name.lower() in text for name in FUNCTION_NAMES)


def _moved(item: Lost, added: list[tuple[str, Template]]) -> bool:
    """Whether a template added in another file prints the lost line."""
    return any(
        _prints_the_same(t, item.template, item.pattern, item.sample)
        for path, t in added
        if path != item.change.path
    )


def _added(change: FileChange, patterns: list[LogPattern]) -> list[Printed]:
    """The templates on the lines a change adds that print a line of the patterns."""

    def found() -> list[Printed]:
        lines = sorted(n for s in change.significant for n in s.new_lines)
        return [
            (t, p, s, None)
            for t, p, s in matched_templates(
                change.new_lines, lambda: SourceFile(change.new_text, change.path), lines, patterns
            )
        ]

    return _kept(change, patterns, found, "added")


def _searched_elsewhere(
    lost: list[Lost], changes: list[FileChange], program: Program
) -> tuple[int, set[str]]:
    """For the patterns that only test for text: (the files that could not be searched, the patterns some
    unchanged file Ollama builds still prints a line for)."""
    tested = {item.pattern.source: item.pattern for item in lost if not item.pattern.extracts}
    if not tested:
        return 0, set()
    changed = {path for c in changes for path in (c.path, c.old_path)}
    found = [(p, data) for p, data in program.sources(_needles_of(tested.values())) if p not in changed]
    printed = set().union(*(_printing(path, data, tested) for path, data in found))
    return sum(data is None for _, data in found), printed


def _needles_of(patterns: Iterable[LogPattern]) -> set[bytes]:
    return {n.encode() for n in _needle_texts(patterns)}


def _printing(path: str, data: bytes | None, tested: Mapping[str, LogPattern]) -> set[str]:
    """The patterns of `tested` a template of the file prints a line for (none, for a file not read)."""
    lowered = data.lower() if data is not None else b""
    held = [p for p in tested.values() if any(n in lowered for n in _needles_of([p]))]
    if data is None or not held:
        return set()
    templates = SourceFile(data.decode("utf-8", "replace"), path).templates_for(_needle_texts(held))
    return {p.source for p in held if any(samples(t, p.regex) for t in templates)}


# ------------------------------------------------------------------------------------------ the finding


def log_draft(item: Lost, local: Mapping[str, str], unread: int) -> Draft:
    """The finding: Ollama's pattern and line, what upstream printed before and prints now, what breaks."""
    change, template, pattern = item.change, item.template, item.pattern
    contract = pattern.contract
    program = _printer(contract)
    span = _replacing_span(change, template)
    where = code_span(f"{contract.ref.path}:{contract.ref.line}")
    detail = (
        f"Ollama's pattern {code_span(pattern.source)} ({where}) no longer matches what {program} prints at the new "
        f"ref: {_before_and_now(item, _now(change, template, pattern, item.sample, span))}; "
        f"{_consequence(contract, pattern, local)}"
    )
    if unread and not pattern.extracts:
        detail += f"\n\n{unread} upstream files the clone lacks were not searched for another line like it."
    return Draft(
        "server",
        "high",
        f"{_output(contract)} Ollama parses changed: {code_span(_shortened(pattern.source))} no longer matches",
        detail,
        change.path,
        change.new_line(template.line),
        ((span.new_start, span.new_start + span.new_count - 1),) if span else (),
        (change.old_path or change.path, change.old_lines[template.line - 1].strip()),
        distinct_refs((contract.ref, *contract.used_at)),
        cause=f"output pattern {contract.ref.path}:{contract.ref.line}",
    )


def _recaptured_draft(item: Lost, local: Mapping[str, str]) -> Draft:
    """The finding: the line still matches, but a group of Ollama's pattern captures other text."""
    change, pattern, contract = item.change, item.pattern, item.pattern.contract
    successor = item.successor or item.template
    before, after = sorted(_captures(item.template, pattern)), sorted(_captures(successor, pattern))
    changed = _changed_groups(before[0], after[0]) if before and after else []
    what, said = "other text", "each printed value written as its conversion"
    if not changed:  # the same text, another value printed where a group captures
        what, said = "another value", "the code of each value printed there"
        changed = _changed_groups(*_argument_texts(item.template, successor, pattern))
    groups = "; ".join(f"group {n}: before {code_span(b)}, now {code_span(a)}" for n, b, a in changed)
    where = code_span(f"{contract.ref.path}:{contract.ref.line}")
    at = code_span(f"{change.path}:{change.new_line(successor.line) or successor.line}")
    detail = (
        f"Ollama's pattern {code_span(pattern.source)} ({where}) still matches a line of {_read_from(contract)} "
        f"at the new ref, but captures {what} ({groups}; {said}): "
        f"before {code_span(_shortened(item.sample.line.strip(), MAX_CODE_SHOWN))}, now printed by "
        f"{code_span(_shortened(successor.code.strip(), MAX_CODE_SHOWN))} "
        f"at {at}. {_reads_now(contract, local)}"
    )
    return Draft(
        "server",
        "medium",
        f"{_output(contract)} Ollama parses changed: {code_span(_shortened(pattern.source))} captures {what}",
        detail,
        change.path,
        change.new_line(successor.line),
        (),
        None,
        distinct_refs((contract.ref, *contract.used_at)),
        cause=f"output pattern {contract.ref.path}:{contract.ref.line}",
    )


def _argument_texts(
    old: Template, new: Template, pattern: LogPattern
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The code of the values each group of the pattern captures, in the old template and the new."""
    before = captured_arguments(old, pattern.regex) or ()
    after = captured_arguments(new, pattern.regex) or ()
    return tuple(" ".join(g) for g in before), tuple(" ".join(g) for g in after)


def _read_from(contract: OutputPattern) -> str:
    return streams_of(contract) if is_program_output(contract) else _printer(contract)


def _changed_groups(before: tuple[str, ...], after: tuple[str, ...]) -> list[tuple[int, str, str]]:
    return [(n, b, a) for n, (b, a) in enumerate(zip(before, after, strict=False), start=1) if b != a]


def _reads_now(contract: OutputPattern, local: Mapping[str, str]) -> str:
    return f"{_reader(contract, local)} now reads that text as the value: check what it does with it."


def _reader(contract: OutputPattern, local: Mapping[str, str]) -> str:
    """Where Ollama reads what the pattern matches: the Go function and its line, or the line alone."""
    use = contract.used_at[0] if contract.used_at else contract.ref
    function = go_function_at(local, use)
    at = code_span(f"{use.path}:{use.line}")
    return f"{code_span(function)} ({at})" if function else at


def _printer(contract: OutputPattern) -> str:
    """The program whose output the contract reads, or the answer it reads (`the answer to POST /x`)."""
    if is_program_output(contract):
        return program_of(contract)
    return "the answer to " + " or ".join(s.removesuffix(_ANSWER_SUFFIX) for s in contract.sources)


def _output(contract: OutputPattern) -> str:
    printer = _printer(contract)
    return f"{printer} output" if is_program_output(contract) else printer[0].upper() + printer[1:]


def _shortened(text: str, shown: int = MAX_PATTERN_SHOWN) -> str:
    return text if len(text) <= shown else text[:shown] + "…"


def _before_and_now(item: Lost, now: str | None) -> str:
    """Old text and new, with the code that wrote the old one."""
    template, at = item.template, code_span(f"{item.change.old_path}:{item.template.line}")
    after = f"now {code_span(now)}" if now else "now no line like it"
    if template.kind == "entry":
        return (
            f"before, the entry {code_span(template.code)} ({at}) named the value Ollama reads after "
            f"{code_span(template.pieces[0])}; {after}"
        )
    how = "printed with" if template.kind == "format" else "written by"
    return f"before {code_span(item.sample.line.rstrip())} ({how} {code_span(template.code.strip())} at {at}), {after}"


def _replacing_span(change: FileChange, template: Template) -> Span | None:
    """The first span that removes a line of the template, when it puts lines in its place."""
    lines = range(template.line, template.last_line + 1)
    span = next((s for s in change.spans if any(n in s.old_lines for n in lines)), None)
    return span if span is not None and span.new_count > 0 else None


def _now(
    change: FileChange, old: Template, pattern: LogPattern, sample: Sample, span: Span | None
) -> str | None:
    """What the code in the removed template's place prints (its line closest to the old sample)."""
    near = _in_place_of(change, old, span)
    if not near:
        return None
    if old.kind == "entry":
        return near[0].code
    lines = [line.rstrip() for t in near for line in rendered_lines(t, pattern.regex)]
    close = difflib.get_close_matches(sample.line.rstrip(), lines, n=1, cutoff=0)
    return close[0] if close else None


def _in_place_of(change: FileChange, old: Template, span: Span | None) -> list[Template]:
    """The templates of the old one's kind on the lines that replace it."""
    if span is None or not change.new_path:
        return []
    first = max(1, span.new_start - CALL_LOOKBEHIND)
    new = SourceFile(change.new_text, change.path).templates(first, span.new_start + span.new_count - 1)
    return [t for t in new if t.kind == old.kind and t.last_line >= span.new_start]


def _consequence(contract: OutputPattern, pattern: LogPattern, local: Mapping[str, str]) -> str:
    """What Ollama will do without the line: where it reads it, and what it reads from it."""
    reader = _reader(contract, local)
    streams = _read_from(contract)
    if pattern.extracts:
        count = pattern.regex.groups
        values = f"the {count} values it reads from it" if count > 1 else "the value it reads from it"
        return f"Ollama will no longer find the line in {streams}: {reader} goes without {values}."
    return f"Ollama will no longer see it in {streams}: the test at {reader} never holds."
