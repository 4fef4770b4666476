"""Data-driven detectors: the rules of bot/review/ruleset.py against the changed files.

A rule names files (globs) and either a line pattern (any changed code line
that matches) or a block (a `struct`/`enum` whose body changed), with the
area, severity and texts of the finding.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from itertools import islice

from bot.cache import facts
from bot.markup import code_block, code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange, Span
from bot.review.needles import may_match
from bot.review.ruleset import Rule
from bot.review.source import LineIndex, excerpt, glob_match, local_refs, non_test_paths, split_args, squash

# Ollama lines a rule reads: the check shows ten, those where Ollama configures a program first
REFS_READ = 40


def _title(rule: Rule, path: str) -> str:
    return rule.title.replace("{path}", path).replace("{file}", path.rsplit("/", 1)[-1])


# Which changed lines match a rule's pattern depends on the change's two blobs and the pattern alone: a re-check
# of the same refs matches none of them again.
CHANGED_LINES = facts.Extractor("rule-changed-lines", 1, __name__)


def _changed_lines(change: FileChange, pattern: re.Pattern | None) -> tuple[list, list]:
    """(span, old line, raw) removed and (span, new line, raw) added code lines that really changed and match."""
    key = (*change.fact_key("-+"), repr((pattern.pattern, pattern.flags)) if pattern else "")
    return facts.remembered(CHANGED_LINES, key, lambda: _matching_lines(change, pattern))


def _matching_lines(change: FileChange, pattern: re.Pattern | None) -> tuple[list, list]:
    removed, added = [], []
    for span in change.significant:
        if pattern is None or may_match(pattern, *change.span_code(span)):
            gone, came = _span_changes(change, span, pattern)
            removed += gone
            added += came
    return removed, added


def _hits(lines: list[tuple[int, str]], pattern: re.Pattern | None) -> list[tuple[int, str]]:
    """The non-blank lines that match (all of them without a pattern)."""
    return [(n, t) for n, t in lines if t.strip() and (pattern is None or pattern.search(t))]


def _span_changes(change: FileChange, span: Span, pattern: re.Pattern | None) -> tuple[list, list]:
    """`_changed_lines` for one span: its matching lines, less those found on both sides (moved or re-indented)."""
    gone, came = change.removed_code(span), change.added_code(span)
    gone_hits, came_hits = _hits(gone, pattern), _hits(came, pattern)
    if not gone_hits and not came_hits:
        return [], []
    return (
        [(span, n, change.removed_line(n)) for n in _unmoved(gone_hits, came)],
        [(span, n, change.added_line(n)) for n in _unmoved(came_hits, gone)],
    )


def _unmoved(hits: list[tuple[int, str]], other_side: list[tuple[int, str]]) -> list[int]:
    """The lines of the hits whose code (whitespace aside) the other side of the span does not have."""
    there = {squash(t) for _, t in other_side}
    return [n for n, t in hits if squash(t) not in there]


def _line_draft(rule: Rule, change: FileChange) -> Draft | None:
    if rule.pattern is not None and not may_match(rule.pattern, *change.changed_raw):
        return None  # the raw lines are a superset of the code lines: nothing can match
    removed, added = _changed_lines(change, rule.pattern)
    if not removed and not added:
        return None
    shown = excerpt([r for _, _, r in removed], [a for _, _, a in added])
    draft = Draft(
        rule.area, rule.severity, _title(rule, change.path), _joined(rule.text, shown), change.path, None
    )
    return _placed_on_lines(draft, change, removed, added)


def _placed_on_lines(draft: Draft, change: FileChange, removed: list, added: list) -> Draft:
    """The item at the first added line (blaming the first five), else where the first removed one was."""
    if added:
        return replace(draft, line=added[0][1], blame=tuple((n, n) for _, n, _ in added[:5]))
    span, _, text = removed[0]
    return replace(draft, line=change.where(span), removed=(change.old_path or change.path, text.strip()))


def _joined(*parts: str) -> str:
    """The non-empty parts of an item's text, a blank line between them."""
    return "\n\n".join(p for p in parts if p)


def block_span(code: str, block: str) -> tuple[int, int] | None:
    """Offsets of `block` (e.g. 'struct ggml_backend_dev_props') through its closing brace."""
    if block.split()[-1] not in code:
        return None
    head = re.search(r"\b" + r"\s+".join(map(re.escape, block.split())) + r"\b\s*(?::[^{;]*)?\{", code)
    if head is None:
        return None
    _, end = split_args(code, head.end() - 1)
    return head.start(), end


def _block_draft(rule: Rule, change: FileChange) -> Draft | None:
    assert rule.block is not None
    old = block_span(change.old_code, rule.block)
    new = block_span(change.new_code, rule.block)
    old_body = change.old_code[old[0] : old[1]] if old else ""
    new_body = change.new_code[new[0] : new[1]] if new else ""
    if squash(old_body) == squash(new_body):
        return None
    severity, note = rule.severity, ""
    if rule.block.startswith("enum ") and old_body and new_body:
        severity, note = _enum_weighed(rule.severity, enumerators(old_body), enumerators(new_body))
    draft = Draft(
        rule.area,
        severity,
        _title(rule, change.path),
        _joined(rule.text + note, _body_diff(old_body, new_body)),
        change.path,
        None,
    )
    return _placed_on_block(draft, change, rule.block, old, new)


_ENUMERATOR = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:=\s*([^,}]+?))?\s*(?:,|$)")


def enumerators(body: str) -> dict[str, int | None]:
    """An enum block's enumerators in order, each with its value where the literals give it (None after
    one they do not)."""
    inside = body[body.find("{") + 1 : body.rfind("}")]
    found: dict[str, int | None] = {}
    last: int | None = -1
    for part in inside.replace("\n", ",").split(","):
        m = _ENUMERATOR.match(part)
        if m is None:
            continue
        if m[2] is None:
            last = None if last is None else last + 1
        else:
            try:
                last = int(m[2].strip(), 0)
            except ValueError:
                last = None
        found[m[1]] = last
    return found


def _enum_weighed(
    severity: str, old: Mapping[str, int | None], new: Mapping[str, int | None]
) -> tuple[str, str]:
    """An enum's item: information when every old enumerator keeps its known value (values added only:
    a copy of the old values still holds), else the rule's severity, naming what moved."""
    if None in old.values():
        return severity, ""  # a value the literals do not give: what moved cannot be told
    moved = [n for n, v in old.items() if new.get(n) != v]
    if not moved:
        return "info", " Every value it had keeps its number: values were only added."
    shown = ", ".join(
        f"{code_span(n)} {old[n]} -> {new[n]}" if n in new else f"{code_span(n)} removed" for n in moved[:6]
    )
    return severity, f" Values that moved: {shown}."


def _placed_on_block(
    draft: Draft,
    change: FileChange,
    block: str,
    old: tuple[int, int] | None,
    new: tuple[int, int] | None,
) -> Draft:
    """The item over the block's lines at the new ref (blaming them all), else where the removed block was."""
    if new is None:
        assert old is not None
        old_line = LineIndex(change.old_code).line(old[0])
        return replace(draft, line=change.new_line(old_line), removed=(change.old_path or change.path, block))
    index = LineIndex(change.new_code)
    start, end = index.line(new[0]), index.line(new[1])
    return replace(draft, line=start, blame=((start, end),))


def _body_diff(old_body: str, new_body: str) -> str:
    """The block's changed lines as a diff fence: the first twelve, each cut at 160 characters."""
    diff = [
        line
        for line in difflib.unified_diff(old_body.splitlines(), new_body.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]
    return code_block([d.rstrip()[:160] for d in diff[:12]], "diff")


def _subjects(rule: Rule, text: str) -> list[str]:
    pattern = rule.subject or rule.pattern
    assert pattern is not None
    return [m["subject"] if "subject" in pattern.groupindex else m[0] for m in pattern.finditer(text)]


_GO_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')


def ollama_uses(
    files: Mapping[str, str], globs, subject: str, whole: bool = False, limit: int = 5
) -> tuple[LocalRef, ...]:
    """Where `subject` stands in a string of the Ollama files matching `globs` (tests aside): as a word of
    the string, or (`whole`) as all of it, a struct tag's `"name,omitempty"` included."""
    word = re.compile(rf"(?<![\w]){re.escape(subject)}(?![\w])")
    found = (
        ref
        for path in non_test_paths(files, globs)
        if subject in files[path]
        for ref in _string_uses(path, files[path], subject, word if not whole else None)
    )
    return tuple(islice(found, limit))


def _string_uses(path: str, text: str, subject: str, word: re.Pattern | None) -> Iterator[LocalRef]:
    """The strings of a file that hold `subject` as a word (`word`), or else as all of the string before
    any comma."""
    index = LineIndex(text)
    for m in _GO_STRING.finditer(text):
        body = m[1]
        if (
            (subject in body and word.search(body))
            if word is not None
            else (body.split(",", 1)[0] == subject)
        ):
            yield LocalRef(path, index.line(m.start()))


def _gone_subjects(
    rule: Rule, change: FileChange, removed, elsewhere: Callable[[str], bool]
) -> dict[str, tuple]:
    """Subjects on removed lines (each with the first line it is on) that the new file no longer has and
    no other changed file adds."""
    first: dict[str, tuple] = {}
    for span, n, raw in removed:
        for subject in _subjects(rule, raw):
            first.setdefault(subject, (span, n, raw))
    kept = _kept_subjects(rule, change, first)
    return {s: where for s, where in first.items() if s not in kept and not elsewhere(s)}


def _kept_subjects(rule: Rule, change: FileChange, candidates: Iterable[str]) -> set[str]:
    """The new file's subjects, read only when a candidate's text is still there."""
    if not any(s in change.new_code for s in candidates):
        return set()
    return set(_subjects(rule, change.new_code))


def _listed(subjects: list[str], gone: Mapping[str, tuple]) -> tuple[str, str]:
    """(the subjects as the title lists them, what happened to them)."""
    listed = ", ".join(code_span(s) for s in subjects[:6]) + (
        f" and {len(subjects) - 6} more" if len(subjects) > 6 else ""
    )
    if set(subjects) <= set(gone):
        return listed, "removed or renamed"
    return listed, "new" if not set(subjects) & set(gone) else "changed"


def _weighed(rule: Rule, local: Mapping[str, str], found: list[str]) -> tuple[list[str], str, tuple]:
    """(the subjects to name: those Ollama's files use, else all; the severity; Ollama's lines). Without
    `local_paths`, or with a `local_pattern` naming the consumer itself, the rule's severity holds."""
    if rule.local_pattern is not None:
        return found, rule.severity, local_refs(local, rule.local_paths, rule.local_pattern, REFS_READ)
    if not rule.local_paths:
        return found, rule.severity, ()
    return _weighed_by_use(rule, local, found)


def _weighed_by_use(rule: Rule, local: Mapping[str, str], found: list[str]) -> tuple[list[str], str, tuple]:
    """`_weighed` by the strings of Ollama's `local_paths` that use each subject: information when none does."""
    whole = rule.local_match == "string"
    uses = {s: ollama_uses(local, rule.local_paths, s, whole) for s in found}
    used = sorted(s for s, refs in uses.items() if refs)
    return used or found, rule.severity if used else "info", tuple(r for s in used for r in uses[s])[:10]


def _subject_draft(
    rule: Rule, change: FileChange, local: Mapping[str, str], elsewhere: Callable[[str], bool]
) -> Draft | None:
    """What the change does to each subject: gone from the file (and not added in another changed file),
    or (unless the rule watches removals only) new in it. The rule's severity holds when Ollama's files
    (`local_paths`) use a subject, or when the rule names Ollama's consumer itself (`local_pattern`: its
    lines are the references); otherwise the item is information."""
    assert rule.pattern is not None  # parse_rule: a subject needs a pattern
    if not may_match(rule.pattern, *change.changed_raw):
        return None
    removed, added = _changed_lines(change, rule.pattern)
    gone = _gone_subjects(rule, change, removed, elsewhere)
    new = _new_subjects(rule, change, added) if rule.when == "changed" and added else {}
    if not gone and not new:
        return None
    subjects, severity, refs = _weighed(rule, local, [*gone, *new])
    listed, what = _listed(subjects, gone)
    draft = Draft(
        rule.area,
        severity,
        _title(rule, change.path).replace("{subjects}", listed).replace("{what}", what),
        _joined(rule.text, _subject_excerpt(change, subjects, gone, new)),
        change.path,
        None,
        local_refs=refs,
        cause=f"{rule.id}:{','.join(sorted(subjects))}",
    )
    return _placed_on_subjects(draft, change, subjects, gone, new)


def _subject_excerpt(
    change: FileChange, subjects: list[str], gone: Mapping[str, tuple], new: Mapping[str, int]
) -> str:
    """The lines the named subjects were removed from and added on."""
    lines = [gone[s][2] for s in subjects if s in gone]
    news = [change.added_line(new[s]) for s in subjects if s in new]
    return excerpt(lines, news)


def _new_subjects(rule: Rule, change: FileChange, added) -> dict[str, int]:
    """Subjects on added lines that the old file did not have, each with the new line it is on."""
    had = set(_subjects(rule, change.old_code))
    return {subject: n for _, n, raw in added for subject in _subjects(rule, raw) if subject not in had}


def _placed_on_subjects(
    draft: Draft, change: FileChange, subjects: list[str], gone: Mapping[str, tuple], new: Mapping[str, int]
) -> Draft:
    """The item at the first new subject's line (blaming the new ones), else where the first gone one was."""
    added = [new[s] for s in subjects if s in new]
    if added:
        return replace(draft, line=added[0], blame=tuple((n, n) for n in added[:5]))
    span, _, text = gone[subjects[0]]
    return replace(draft, line=change.where(span), removed=(change.old_path or change.path, text.strip()))


def _watches(rule: Rule, change: FileChange) -> bool:
    """Whether the rule's globs name the changed file (at either path) and its exclusions do not."""
    named = glob_match(change.path, rule.paths) or (
        change.old_path and glob_match(change.old_path, rule.paths)
    )
    return bool(named) and not glob_match(change.path, rule.exclude_paths)


def rule_drafts(
    rules: list[Rule],
    changes: list[FileChange],
    local: Mapping[str, str],
    builds: Callable[[str], bool] = lambda path: True,
    scopes: Callable[[str], Sequence[LocalRef]] = lambda name: (),
) -> list[Draft]:
    """Every rule against every changed file its globs name. A file of the upstream that Ollama's build
    does not compile (`builds`) can only give information. A rule's `@scope` entries of `local_paths` are
    the Ollama lines `scopes` gives (asked only of a rule that watches a changed file): their files, and,
    for a rule with only scopes and no `local_pattern`, the lines themselves are its references."""
    drafts = []
    for rule in rules:
        watched = [c for c in changes if _watches(rule, c)]
        rule, refs = (
            _scoped(rule, scopes) if watched else (rule, [])
        )  # refs: found with the rule's first item
        found = ((c, _rule_draft(rule, c, changes, local, refs)) for c in watched)
        drafts += [_weighed_by_build(d, c, builds, rule) for c, d in found if d is not None]
    return drafts


def _weighed_by_build(draft: Draft, change: FileChange, builds: Callable[[str], bool], rule: Rule) -> Draft:
    """The rule's item with its id; information only, in a file Ollama's build does not compile."""
    return replace(draft, check=f"rule.{rule.id}", severity=draft.severity if builds(change.path) else "info")


def _scoped(rule: Rule, scopes: Callable[[str], Sequence[LocalRef]]) -> tuple[Rule, list[tuple]]:
    """The rule with its `@scope` entries replaced by the files of the lines they stand for (Go tests aside);
    and those lines, the rule's references, when it has only scopes and no `local_pattern`."""
    if not any(p.startswith("@") for p in rule.local_paths):
        return rule, []
    scoped = _scope_lines(rule.local_paths, scopes)
    globs = tuple(p for p in rule.local_paths if not p.startswith("@"))
    lines = [scoped] if rule.local_pattern is None and not globs else []
    return replace(rule, local_paths=globs + tuple(dict.fromkeys(r.path for r in scoped))), lines


def _scope_lines(paths: Sequence[str], scopes: Callable[[str], Sequence[LocalRef]]) -> tuple[LocalRef, ...]:
    """The Ollama lines the `@scope` entries stand for, Go tests aside."""
    lines = (r for p in paths if p.startswith("@") for r in scopes(p[1:]))
    return tuple(dict.fromkeys(r for r in lines if not r.path.endswith("_test.go")))


def _rule_draft(
    rule: Rule, change: FileChange, changes: list[FileChange], local: Mapping[str, str], refs: list[tuple]
) -> Draft | None:
    """One rule's item on one changed file: by subjects, else by block or line with the rule's Ollama
    references (found once per rule, into `refs`)."""
    if rule.subject is not None or rule.when == "removed":
        return _subject_draft(rule, change, local, partial(_added_elsewhere, rule, changes, change))
    draft = (_block_draft if rule.block else _line_draft)(rule, change)
    if draft is None:
        return None
    if not refs:
        refs.append(_block_refs(rule, change, local) if rule.local_paths else ())
    return replace(draft, local_refs=refs[0])


def _block_refs(rule: Rule, change: FileChange, local: Mapping[str, str]) -> tuple[LocalRef, ...]:
    """The rule's Ollama lines; for a block, first the lines of Ollama's own copies of it: identifiers that
    spell the block's name or its enumerators in another case (`ggmlBackendDevProps` for
    `ggml_backend_dev_props`)."""
    found = local_refs(local, rule.local_paths, rule.local_pattern, REFS_READ)
    if rule.block is None:
        return found
    span = block_span(change.old_code, rule.block)
    body = change.old_code[span[0] : span[1]] if span else ""
    names = [rule.block.split()[-1], *(enumerators(body) if rule.block.startswith("enum ") else ())]
    copies = local_refs(local, rule.local_paths, _any_case(names))
    return tuple(dict.fromkeys([*copies, *found]))[:REFS_READ]


def _any_case(names: Iterable[str]) -> re.Pattern[str]:
    """Identifiers that spell one of the snake-case names in any case, underscores kept or left out."""
    spelled = ("_?".join(map(re.escape, n.split("_"))) for n in names if len(n) > 3)
    return re.compile(rf"(?i)(?<![\w]){'|'.join(f'(?:{s})' for s in spelled)}(?![\w])")


def _added_elsewhere(rule: Rule, changes: list[FileChange], skip: FileChange, subject: str) -> bool:
    """Whether another changed file of the rule's globs adds `subject` (as a quoted string, or as a
    subject of the rule): moved, not gone."""
    return any(c is not skip and _adds_subject(rule, c, subject) for c in changes)


def _adds_subject(rule: Rule, change: FileChange, subject: str) -> bool:
    """Whether a change to a file of the rule's globs adds `subject` on a line, quoted or as a subject of
    the rule."""
    if not change.new_path or subject not in change.changed_raw[0] or not glob_match(change.path, rule.paths):
        return False
    quoted = f'"{subject}"'
    return any(quoted in line or subject in _subjects(rule, line) for line in change.added_raw)
