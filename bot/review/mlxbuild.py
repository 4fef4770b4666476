"""MLX's own build changes against Ollama's build of it: what the bump changes in the CMake files Ollama's
configurations read, weighed by what Ollama sets, links, installs and ships.

- a new or changed version comparison in an `if()` (`CMAKE_OSX_DEPLOYMENT_TARGET VERSION_GREATER_EQUAL
  26.2`) that a configure preset of Ollama's build now fails: the preset builds without what it guards, or,
  for a guard around `message(FATAL_ERROR)`, no longer configures;
- a library a target Ollama installs newly links that upstream builds as a shared library (the payload has
  to carry it), and a library Ollama installs that the target no longer links;
- an `install()` of files new upstream, which an install of Ollama's components never picks up;
- a custom command that makes a file Ollama ships with another command.

Plain texts in, drafts out: `Run` hands both refs' comment-free CMake files and `OllamaBuild`, Ollama's
side, read from its tree at the head.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.build import presets
from bot.lang import cmakelang
from bot.markup import code_span
from bot.model import LocalRef
from bot.repos.snapshot import Snapshot
from bot.review.changes import Draft

MAX_DEPTH = 64  # nesting of if()/foreach()/function() blocks read
MAX_SHOWN = 3  # guarded commands named per item
_ORDERED = {
    "LESS",
    "GREATER",
    "EQUAL",
    "LESS_EQUAL",
    "GREATER_EQUAL",
    "VERSION_LESS",
    "VERSION_GREATER",
    "VERSION_EQUAL",
    "VERSION_LESS_EQUAL",
    "VERSION_GREATER_EQUAL",
}
_VARIABLE = re.compile(r"\$\{(\w+)\}|(\w+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class Head:
    """An `if`/`elseif` condition (or an `else`, whose arguments are ("ELSE",)) and its line."""

    args: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Command:
    """A command with the conditions around it, outermost first."""

    name: str
    args: tuple[str, ...]
    line: int
    heads: tuple[Head, ...] = ()

    @property
    def shown(self) -> str:
        """The command as a person recognises it: its literal arguments, the source directory prefix and
        bare variable references left out."""
        kept = [
            re.sub(r"^\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/", "", a)
            for a in self.args
            if not re.fullmatch(r"\$\{\w+\}", a)
        ]
        words = " ".join(kept)
        return f"{self.name}({words[:80]}{'…' if len(words) > 80 else ''})"


def flat(text: str) -> list[Command]:
    """Every command of a CMake text with the conditions it runs under."""
    out: list[Command] = []
    _walk(cmakelang.parse(text), (), out, 0)
    return out


def _walk(node: Node, heads: tuple[Head, ...], out: list[Command], depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    for child in node.children:
        if child.type == "normal_command":
            out.append(
                Command(
                    cmakelang.name(child), tuple(cmakelang.arguments(child)), cmakelang.line(child), heads
                )
            )
        elif child.type == "if_condition":
            _branches(child, heads, out, depth + 1)
        elif child.named_child_count:
            _walk(child, heads, out, depth + 1)


def _branches(node: Node, heads: tuple[Head, ...], out: list[Command], depth: int) -> None:
    head: Head | None = None
    for child in node.children:
        if child.type in ("if_command", "elseif_command"):
            head = Head(tuple(cmakelang.arguments(child)), cmakelang.line(child))
        elif child.type == "else_command":
            head = Head(("ELSE",), cmakelang.line(child))
        elif child.type == "body" and head is not None:
            _walk(child, (*heads, head), out, depth + 1)


# -- Ollama's side ------------------------------------------------------------------------------------


@dataclass
class OllamaBuild:
    """What Ollama's tree at the head says of the pin's build."""

    # cache variable -> (preset, its value, where the presets file sets it)
    preset_values: dict[str, list[tuple[presets.ConfigurePreset, str, LocalRef]]] = field(
        default_factory=dict
    )
    installed_targets: dict[str, LocalRef] = field(default_factory=dict)  # install(TARGETS ...) names
    components: set[str] = field(default_factory=set)  # what `--component` installs pick; empty: all
    shared_libs: bool = False  # BUILD_SHARED_LIBS is set ON somewhere
    texts: dict[str, str] = field(default_factory=dict)  # Ollama's build files, comment-free
    set_options: set[str] = field(default_factory=set)  # option names its build files spell


def ollama_build(
    snapshot: Snapshot, files: Mapping[str, str], word: re.Pattern[str], build_files: Iterable[str]
) -> OllamaBuild:
    """Ollama's build as its CMake files, presets and scripts give it (`files`: comment-free texts by path;
    `build_files`: the paths of its build files; `word`: the pin's project as a word)."""
    build = OllamaBuild()
    build.texts = {p: files[p] for p in build_files if p in files}
    for path in presets.preset_files(snapshot):
        _read_presets(build, snapshot, path, word)
    for path, text in build.texts.items():
        _read_ollama_file(build, path, text)
    return build


def _read_presets(build: OllamaBuild, snapshot: Snapshot, path: str, word: re.Pattern[str]) -> None:
    """The cache variables of a presets file's configure presets, when the file configures the pin's build
    (a preset's name or cache variable names its project)."""
    configures = presets.configure_presets(snapshot, path)
    if not any(word.search(p.name) or any(word.search(k) for k in p.cache) for p in configures):
        return
    raw = (snapshot.read(path) or b"").decode("utf-8", "replace")
    for preset in (p for p in configures if not p.hidden):
        for variable, value in preset.cache.items():
            where = LocalRef(path, _value_line(raw, preset.name, variable, value))
            build.preset_values.setdefault(variable, []).append((preset, value, where))


def _value_line(text: str, name: str, variable: str, value: str) -> int:
    """The line of a presets file that sets `variable` to `value`: the first after the preset's name, else
    the first anywhere (an inherited value), else the preset's name."""
    lines = text.splitlines()
    named = next((n for n, line in enumerate(lines) if f'"{name}"' in line and '"name"' in line), 0)
    setting = re.compile(rf'"{re.escape(variable)}"\s*:.*{re.escape(value)}')
    after = next((n for n in range(named, len(lines)) if setting.search(lines[n])), None)
    anywhere = next((n for n, line in enumerate(lines) if setting.search(line)), named)
    return (after if after is not None else anywhere) + 1


def _read_ollama_file(build: OllamaBuild, path: str, text: str) -> None:
    build.components |= set(re.findall(r"--component\s+([\w.-]+)", text))
    if re.search(r"(?:-D|set\(\s*)BUILD_SHARED_LIBS[\s=:A-Z]*\b(?:ON|TRUE|1)\b", text):
        build.shared_libs = True
    build.set_options |= set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", text))
    if not (path.endswith(("CMakeLists.txt", ".cmake"))):
        return
    for c in flat(text):
        if c.name == "install" and c.args[:1] == ("TARGETS",):
            for name in c.args[1:]:
                if name in cmakelang.INSTALL_TARGETS_END:
                    break
                build.installed_targets.setdefault(name, LocalRef(path, c.line))


# -- upstream's side ----------------------------------------------------------------------------------


def _subdirectory(c: Command, path: str) -> str | None:
    """The directory an add_subdirectory() adds, relative to upstream's root; None when computed."""
    if c.name != "add_subdirectory" or not c.args:
        return None
    target = re.sub(r"^\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/?", "", c.args[0])
    if "${" in target:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), target))


def _declared_off(commands: Iterable[Command]) -> set[str]:
    """Options declared with default OFF."""
    return {
        c.args[0]
        for c in commands
        if c.name == "option"
        and len(c.args) >= 2
        and (len(c.args) < 3 or c.args[2].upper() in ("OFF", "FALSE", "0", "NO"))
    }


def skipped(heads: tuple[Head, ...], off: Container[str]) -> bool:
    """Whether a condition is false for Ollama: a conjunction that requires an option off for Ollama."""
    for head in heads:
        if head.args == ("ELSE",) or "OR" in head.args or "NOT" in head.args:
            continue
        if any(a in off for a in head.args):
            return True
    return False


def reached(texts: Mapping[str, list[Command]], off: Container[str]) -> set[str]:
    """The CMake files the top-level one reaches through add_subdirectory(), skipping directories added only
    under an option that is off for Ollama; an unknown condition counts as met."""
    if "CMakeLists.txt" not in texts:
        return set(texts)
    seen, queue = {"CMakeLists.txt"}, ["CMakeLists.txt"]
    while queue:
        path = queue.pop()
        for c in texts[path]:
            directory = _subdirectory(c, path)
            target = posixpath.join(directory, "CMakeLists.txt") if directory else ""
            if target in texts and target not in seen and not skipped(c.heads, off):
                seen.add(target)
                queue.append(target)
    scripts = {p for p in texts if not p.endswith("CMakeLists.txt")}  # included scripts: read when named
    return seen | scripts


@dataclass(frozen=True)
class Upstream:
    """Both refs' CMake files, each as commands with their conditions, and the files Ollama's build reads."""

    old: dict[str, list[Command]]
    new: dict[str, list[Command]]
    built: frozenset[str]
    old_built: frozenset[str] = frozenset()  # the files Ollama's build read at the old ref
    off: frozenset[str] = frozenset()  # options off for Ollama: what they guard is not built

    @classmethod
    def of(cls, old_texts: Mapping[str, str], new_texts: Mapping[str, str], ollama: OllamaBuild) -> Upstream:
        old = {p: flat(t) for p, t in old_texts.items()}
        new = {p: flat(t) for p, t in new_texts.items()}
        off = _declared_off(c for cs in new.values() for c in cs) - ollama.set_options
        return cls(old, new, frozenset(reached(new, off)), frozenset(reached(old, off)), frozenset(off))

    def commands(self, side: str, built_only: bool = True) -> Iterable[tuple[str, Command]]:
        files = self.old if side == "old" else self.new
        for path, commands in sorted(files.items()):
            if not built_only or side == "old" or path in self.built:
                for c in commands:
                    yield path, c


# -- version guards against the presets ---------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    variable: str
    op: str
    value: str
    negated: bool

    @property
    def shown(self) -> str:
        return f"{'NOT ' if self.negated else ''}{self.variable} {self.op} {self.value}"


def comparisons(head: Head) -> list[Comparison]:
    """The ordered comparisons of a variable with a number that a condition of ANDs requires."""
    args = head.args
    if "OR" in args:
        return []
    found = []
    for at in range(1, len(args) - 1):
        variable = _VARIABLE.fullmatch(args[at - 1])
        if args[at] in _ORDERED and variable and _NUMBER.fullmatch(args[at + 1]):
            negated = at >= 2 and args[at - 2] == "NOT"
            found.append(Comparison(variable[1] or variable[2] or "", args[at], args[at + 1], negated))
    return found


def _version(text: str) -> tuple[int, ...] | None:
    match = _NUMBER.match(text.strip())
    return tuple(int(n) for n in match[0].split(".")) if match else None


def holds(value: str, c: Comparison) -> bool | None:
    """Whether a preset's value meets the comparison; None when the value is no number."""
    left, right = _version(value), _version(c.value)
    if left is None or right is None:
        return None
    width = max(len(left), len(right))
    left, right = left + (0,) * (width - len(left)), right + (0,) * (width - len(right))
    op = c.op.removeprefix("VERSION_")
    result = {
        "LESS": left < right,
        "GREATER": left > right,
        "EQUAL": left == right,
        "LESS_EQUAL": left <= right,
        "GREATER_EQUAL": left >= right,
    }[op]
    return not result if c.negated else result


def _body(commands: list[Command], head: Head) -> list[Command]:
    """The commands a condition guards directly or through nested blocks."""
    return [c for c in commands if head in c.heads]


def _fatal(body: list[Command], head: Head) -> bool:
    return any(c.name == "message" and c.args[:1] == ("FATAL_ERROR",) and c.heads[-1] == head for c in body)


def _new_comparisons(up: Upstream) -> list[tuple[str, Head, Comparison]]:
    """Comparisons in the built files' conditions that the old ref's files did not make."""
    before = {c for _, cmd in up.commands("old") for h in cmd.heads for c in comparisons(h)}
    seen, found = set(), []
    for path, cmd in up.commands("new"):
        for head in cmd.heads:
            for c in comparisons(head):
                if c not in before and (path, head, c) not in seen:
                    seen.add((path, head, c))
                    found.append((path, head, c))
    return found


def guard_drafts(up: Upstream, ollama: OllamaBuild) -> list[Draft]:
    """A high draft per new version guard that a configure preset of Ollama's build fails, naming the
    presets and what each loses (or that it no longer configures)."""
    drafts = []
    for path, head, comparison in _new_comparisons(up):
        body = _body(up.new[path], head)
        fatal = _fatal(body, head)
        failing = [
            (preset, value, where)
            for preset, value, where in ollama.preset_values.get(comparison.variable, [])
            if holds(value, comparison) is fatal  # a fatal guard fails the presets it holds for
        ]
        if failing and body:
            drafts.append(_guard_draft(path, head, comparison, body, fatal, failing))
    return drafts


def _guarded(body: list[Command]) -> str:
    """The commands a guard skips, a few by name and how many more."""
    doing = [c for c in body if c.name != "message"] or body
    shown = [code_span(c.shown) for c in doing[:MAX_SHOWN]]
    more = len(doing) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _guard_draft(
    path: str,
    head: Head,
    comparison: Comparison,
    body: list[Command],
    fatal: bool,
    failing: list[tuple[presets.ConfigurePreset, str, LocalRef]],
) -> Draft:
    names = ", ".join(f"{code_span(p.name)} ({comparison.variable}={v})" for p, v, _ in failing)
    many = len(failing) > 1
    presets_word = "Presets" if many else "Preset"
    if fatal:
        title = f"{presets_word} {names} no longer configure{'' if many else 's'}: upstream stops at {code_span(comparison.shown)}"
        lost = "CMake stops with a fatal error"
    else:
        title = f"{presets_word} {names} now build{'' if many else 's'} without {_guarded(body)}"
        lost = "the build leaves those out"
    who = "these presets of Ollama do" if many else "this preset of Ollama does"
    detail = (
        f"Upstream now guards this by {code_span(comparison.shown)} ({code_span(f'{path}:{head.line}')}), which {who} not meet: "
        f"{lost}. Raise {code_span(comparison.variable)} in the preset{'s' if many else ''}, or decide that "
        f"{'they' if many else 'it'} can do without."
    )
    refs = tuple(dict.fromkeys(where for _, _, where in failing))
    return Draft("build", "high", title, detail, path, head.line, local_refs=refs)


# -- libraries, links, installed files ----------------------------------------------------------------

_LIBRARY_KINDS = {"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "UNKNOWN", "ALIAS"}


def libraries(up: Upstream, side: str) -> dict[str, tuple[str, str, int]]:
    """Library name -> (kind, path, line) of the add_library() calls of the built files; kind "" when the
    call leaves it to BUILD_SHARED_LIBS."""
    found: dict[str, tuple[str, str, int]] = {}
    for path, c in up.commands(side):
        if c.name == "add_library" and c.args and "IMPORTED" not in c.args:
            kind = c.args[1] if len(c.args) > 1 and c.args[1] in _LIBRARY_KINDS else ""
            found.setdefault(c.args[0], (kind, path, c.line))
    return found


def _linked(item: str) -> str:
    """A link item as a target name: `$<BUILD_INTERFACE:jaccl>` -> `jaccl`."""
    match = re.fullmatch(r"\$<\w+:([^>]+)>", item)
    return match[1] if match else item


def links(up: Upstream, side: str, targets: Iterable[str]) -> dict[tuple[str, str], tuple[str, int]]:
    """(target, linked item) -> (path, line) of the target_link_libraries() of those targets."""
    wanted = set(targets)
    found: dict[tuple[str, str], tuple[str, int]] = {}
    for path, c in up.commands(side):
        if c.name == "target_link_libraries" and c.args and c.args[0] in wanted:
            for item in c.args[1:]:
                if item not in cmakelang.LINK_KEYWORDS:
                    found.setdefault((c.args[0], _linked(item)), (path, c.line))
    return found


def _shared(kind: str, ollama: OllamaBuild) -> bool:
    return kind in ("SHARED", "MODULE") or (kind == "" and ollama.shared_libs)


def link_drafts(up: Upstream, ollama: OllamaBuild) -> list[Draft]:
    """Shared libraries upstream builds that a target Ollama installs newly links (the payload must carry
    them), and libraries Ollama installs that a target it installs no longer links."""
    shipped = ollama.installed_targets
    before, after = links(up, "old", shipped), links(up, "new", shipped)
    built = libraries(up, "new")
    drafts = []
    for (target, item), (path, line) in sorted(after.items()):
        kind = built.get(item, ("-", "", 0))[0]
        if (target, item) not in before and item not in shipped and _shared(kind, ollama):
            drafts.append(_new_library(target, item, built[item], path, line, ollama))
    for (target, item), (path, line) in sorted(before.items()):
        if (target, item) not in after and item in shipped and not any(i == item for _, i in after):
            drafts.append(_dropped_library(target, item, path, line, ollama))
    return drafts


def _new_library(
    target: str, item: str, declared: tuple[str, str, int], path: str, line: int, ollama: OllamaBuild
) -> Draft:
    shipped = ", ".join(code_span(t) for t in ollama.installed_targets)
    _, where, at = declared
    return Draft(
        "build",
        "high",
        f"{code_span(target)} now links {code_span(item)}, a shared library upstream builds: Ollama's payload must carry it",
        f"Upstream's {code_span(target)}, which Ollama installs, now links {code_span(item)} ({code_span(f'{path}:{line}')}), built at "
        f"{code_span(f'{where}:{at}')} as a shared library (Ollama builds with BUILD_SHARED_LIBS ON). Ollama's build installs "
        f"{shipped} only: without {code_span(item)} beside it the library does not load. Install it with the others "
        "(`install(TARGETS ...)`) and carry it in every package the payload goes into.",
        path,
        line,
        local_refs=(ollama.installed_targets[target],),
    )


def _dropped_library(target: str, item: str, path: str, line: int, ollama: OllamaBuild) -> Draft:
    return Draft(
        "build",
        "medium",
        f"{code_span(target)} no longer links {code_span(item)}, which Ollama still installs",
        f"Upstream's {code_span(target)} linked {code_span(item)} at the old ref ({code_span(f'{path}:{line}')}) and no longer does: Ollama "
        "installs a library nothing loads now, or one it still needs comes from elsewhere. Check the payload.",
        path,
        None,
        removed=(path, item),
        local_refs=(ollama.installed_targets[item],),
    )


def _install_key(c: Command) -> tuple[str, ...]:
    return c.args


def install_drafts(up: Upstream, ollama: OllamaBuild) -> list[Draft]:
    """New install(DIRECTORY|FILES|PROGRAMS) rules of the built files that Ollama's component installs skip:
    files upstream now puts beside the library that the payload may need."""
    if not ollama.components:
        return []
    before = {_install_key(c) for _, c in up.commands("old") if c.name == "install"}
    drafts = []
    for path, c in up.commands("new"):
        if c.name != "install" or c.args[:1] not in (("DIRECTORY",), ("FILES",), ("PROGRAMS",)):
            continue
        component = c.args[c.args.index("COMPONENT") + 1] if "COMPONENT" in c.args[:-1] else ""
        if _install_key(c) in before or component in ollama.components:
            continue
        drafts.append(_install_draft(path, c, ollama))
    return drafts


def _installed_what(c: Command) -> str:
    keywords = {"DESTINATION", "TYPE", "COMPONENT", "FILES_MATCHING", "PATTERN", "PERMISSIONS", "OPTIONAL"}
    listed = []
    for arg in c.args[1:]:
        if arg in keywords:
            break
        listed.append(arg)
    return " ".join(listed)


def _install_draft(path: str, c: Command, ollama: OllamaBuild) -> Draft:
    what = _installed_what(c)
    components = ", ".join(code_span(n) for n in sorted(ollama.components))
    mentioned = tuple(
        dict.fromkeys(r for w in what.split() if w for r in _mentions(ollama, posixpath.basename(w)))
    )
    return Draft(
        "build",
        "info" if mentioned else "medium",
        f"Upstream now installs {code_span(what)} beside the library; Ollama's component install skips it",
        f"{code_span(c.shown)} ({code_span(f'{path}:{c.line}')}) is new. Ollama installs only the components {components}, and this "
        "rule names none of them, so the payload never gets these files: if the library reads them at run "
        "time (headers a JIT compiles, data files), install them in Ollama's component as well.",
        path,
        c.line,
        local_refs=mentioned,
    )


def _outputs(c: Command) -> list[str]:
    if "OUTPUT" not in c.args:
        return []
    found = []
    for arg in c.args[c.args.index("OUTPUT") + 1 :]:
        if arg.isupper() and "/" not in arg:
            break
        found.append(posixpath.basename(arg))
    return found


def _commands_of(c: Command) -> tuple[str, ...]:
    if "COMMAND" not in c.args:
        return ()
    rest = c.args[c.args.index("COMMAND") :]
    stop = next(
        (n for n, a in enumerate(rest) if a in ("DEPENDS", "COMMENT", "WORKING_DIRECTORY", "VERBATIM")),
        len(rest),
    )
    return rest[:stop]


def custom_command_drafts(up: Upstream, ollama: OllamaBuild) -> list[Draft]:
    """Files Ollama's build files name (it ships them) that upstream now makes with another command."""
    made_before = {
        o: _commands_of(c)
        for _, c in up.commands("old")
        if c.name == "add_custom_command"
        for o in _outputs(c)
    }
    return [
        _remade(output, made_before[output], path, c, ollama)
        for path, c in up.commands("new")
        if c.name == "add_custom_command"
        for output in _outputs(c)
        if made_before.get(output, _commands_of(c)) != _commands_of(c)
        and any(output in t for t in ollama.texts.values())
    ]


def _remade(output: str, before: tuple[str, ...], path: str, c: Command, ollama: OllamaBuild) -> Draft:
    return Draft(
        "build",
        "medium",
        f"Upstream now makes {code_span(output)}, which Ollama ships, with another command",
        f"{code_span(output)} was made by {code_span(' '.join(before))} and now by {code_span(' '.join(_commands_of(c)))} "
        f"({code_span(f'{path}:{c.line}')}). Ollama's build files name it: check that the file it ships still is what they "
        "expect (the tools it needs, the targets it was built for).",
        path,
        c.line,
        local_refs=_mentions(ollama, output),
    )


def _mentions(ollama: OllamaBuild, word: str) -> tuple[LocalRef, ...]:
    refs = []
    for path, text in sorted(ollama.texts.items()):
        for number, line in enumerate(text.splitlines(), 1):
            if word in line:
                refs.append(LocalRef(path, number))
                break
    return tuple(refs[:3])


def build_drafts(up: Upstream, ollama: OllamaBuild) -> list[Draft]:
    """Every MLX build rule over both refs' CMake files."""
    return [
        *guard_drafts(up, ollama),
        *link_drafts(up, ollama),
        *install_drafts(up, ollama),
        *custom_command_drafts(up, ollama),
    ]
