"""The "Before merging" steps of a pin whose build the tree defines, read from the tree at the head: the
presets that build it, the values of their list variables no preset builds, the target that refreshes the
vendored copies and the Go packages whose bindings are generated from them. Nothing is a fixed text, so a
checklist on an old base never names a preset, target or directory that base does not have.

A preset belongs to the pin's build when its name, its targets, its configure preset's name or the cache
variables it sets name the pin's project (the first word of the pin's name, as a word of its own).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from bot.build import presets
from bot.config import Config, Pin
from bot.lang import cmakelang
from bot.markup import code_span
from bot.ollama import gobindings
from bot.repos import buildpatches
from bot.repos.snapshot import Snapshot
from bot.review.cmake import commands
from bot.review.source import code_text

MAX_ALTERNATIVES = 8  # values of one list variable offered as steps


@dataclass(frozen=True)
class Step:
    id: str
    text: str


def _names(preset: presets.BuildPreset) -> Iterable[str]:
    yield preset.name
    yield from preset.targets
    if preset.configure is not None:
        yield preset.configure.name
        yield from preset.configure.cache


def pin_presets(snapshot: Snapshot, pin: Pin) -> list[presets.BuildPreset]:
    """The build presets of the pin's build: the top-level presets file's, else every file's."""
    word = presets.project_word(pin)
    by_file = [
        _naming(presets.build_presets(snapshot, path), word) for path in presets.preset_files(snapshot)
    ]
    top = next((found for found in by_file if found), [])
    if top and top[0].source_dir == "":
        return top
    return [p for found in by_file for p in found]


def _naming(found: list[presets.BuildPreset], word: re.Pattern[str]) -> list[presets.BuildPreset]:
    return [p for p in found if any(word.search(n) for n in _names(p))]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _quoted(name: str) -> str:
    return f"'{name}'" if re.search(r"[^\w.-]", name) else name


def _set_here(preset: presets.BuildPreset, word: re.Pattern[str]) -> str:
    configure = preset.configure
    shown = [
        code_span(f"{k}={v}")
        for k, v in sorted((configure.cache if configure else {}).items())
        if word.search(k)
    ]
    targets = ", ".join(code_span(t) for t in preset.targets)
    parts = ([f"sets {', '.join(shown)}"] if shown else []) + (
        [f"target{'s' if len(preset.targets) > 1 else ''} {targets}"] if targets else []
    )
    return f" ({'; '.join(parts)})" if parts else ""


def preset_step(preset: presets.BuildPreset, word: re.Pattern[str]) -> Step:
    configure = preset.configure.name if preset.configure else preset.name
    command = f"cmake --preset {_quoted(configure)} && cmake --build --preset {_quoted(preset.name)}"
    where = (
        code_span(command) if not preset.source_dir else code_span(f"(cd {preset.source_dir} && {command})")
    )
    return Step(
        f"build-preset-{_slug(preset.source_dir + '-' + preset.name)}",
        f"Configure and build the {code_span(preset.name)} preset: {where}{_set_here(preset, word)}",
    )


_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _all_cmake(snapshot: Snapshot) -> dict[str, str]:
    """Ollama's CMake files, comment-free, read once per snapshot."""
    try:
        return _TEXTS[snapshot]
    except (KeyError, TypeError):
        pass
    texts = {
        path: code_text((snapshot.read(path) or b"").decode("utf-8", "replace"), path)
        for path in snapshot.files()
        if buildpatches.is_cmake_file(path)
    }
    try:
        _TEXTS[snapshot] = texts
    except TypeError:  # a snapshot that takes no weak reference is read again
        pass
    return texts


def _cmake_texts(snapshot: Snapshot, needle: str) -> dict[str, str]:
    """Ollama's CMake files that spell `needle`, comment-free."""
    return {path: text for path, text in _all_cmake(snapshot).items() if needle in text}


_HEADS = {"foreach_command": "foreach", "if_command": "if", "elseif_command": "elseif"}


def _heads(text: str) -> Iterator[tuple[str, list[str]]]:
    """(foreach | if | elseif, arguments) of each loop and condition head, in document order."""
    stack = [cmakelang.parse(text)]
    while stack:
        node = stack.pop()
        kind = _HEADS.get(node.type)
        if kind is not None:
            yield kind, cmakelang.arguments(node)
            continue
        stack.extend(reversed(node.children))


def _loops_over(args: list[str], variable: str) -> bool:
    return len(args) >= 4 and args[1:3] == ["IN", "LISTS"] and variable in args[3:]


def list_values(snapshot: Snapshot, variable: str) -> list[str]:
    """The values a `foreach(<v> IN LISTS <variable>)` of Ollama's CMake compares its item with
    (`if(<v> STREQUAL "cuda_v13")`): what the build accepts in the list."""
    values: list[str] = []
    for text in _cmake_texts(snapshot, variable).values():
        loops: set[str] = set()
        for kind, args in _heads(text):
            if kind == "foreach" and _loops_over(args, variable):
                loops.add(args[0])
            elif kind in ("if", "elseif") and loops:
                values += _compared(args, loops)
    return list(dict.fromkeys(values))


def _compared(args: Sequence[str], loops: set[str]) -> list[str]:
    """The literals a condition compares a loop variable with by STREQUAL."""
    found = []
    for at in range(1, len(args) - 1):
        if args[at] == "STREQUAL" and args[at - 1].strip("${}") in loops:
            found.append(args[at + 1])
    return found


def _binary_root(preset: presets.BuildPreset | None) -> str:
    """Where a preset builds, relative to its source directory (`build` when it does not say)."""
    written = preset.configure.binary_dir if preset and preset.configure else ""
    root = written.replace("${sourceDir}/", "").replace("${sourceDir}", "").strip("/")
    return root if root and "$" not in root and not root.startswith("..") else "build"


def alternative_steps(
    snapshot: Snapshot, chosen: list[presets.BuildPreset], word: re.Pattern[str]
) -> list[Step]:
    """A step for each value the build accepts in a list variable the presets set but no preset builds."""
    steps = [
        step
        for preset in chosen
        for variable in sorted(preset.configure.cache if preset.configure else {})
        if word.search(variable)
        for step in _unbuilt(snapshot, chosen, preset, variable)
    ]
    return list({s.id: s for s in steps}.values())


def _unbuilt(
    snapshot: Snapshot, chosen: list[presets.BuildPreset], preset: presets.BuildPreset, variable: str
) -> list[Step]:
    """The values of `variable` the build accepts and no chosen preset sets, as steps."""
    built = {v for p in chosen if p.configure for v in p.configure.cache.get(variable, "").split(";")}
    others = [v for v in list_values(snapshot, variable) if v not in built]
    return [_alternative(preset, variable, value) for value in others[:MAX_ALTERNATIVES]]


def _alternative(preset: presets.BuildPreset, variable: str, value: str) -> Step:
    directory = f"build/{_slug(variable)}-{value}"
    source = preset.source_dir or "."
    targets = "".join(f" --target {t}" for t in preset.targets)
    return Step(
        f"build-{_slug(variable)}-{_slug(value)}",
        f"Build {code_span(f'{variable}={value}')}, which no preset builds: `cmake -S {source} -B {directory} "
        f"-D{variable}={value} && cmake --build {directory}{targets}`",
    )


def _custom_targets(snapshot: Snapshot, needle: str) -> list[tuple[str, tuple[str, ...]]]:
    """(name, arguments) of the `add_custom_target`s of Ollama's CMake whose arguments spell `needle`."""
    found = []
    for text in _cmake_texts(snapshot, needle).values():
        for c in commands(text):
            if c.name == "add_custom_target" and c.args and any(needle in a for a in c.args[1:]):
                found.append((c.args[0], c.args[1:]))
    return found


def _runs_go_generate(args: tuple[str, ...]) -> bool:
    return "generate" in args and any(re.search(r"(?:^|[/{])go(?:\.exe)?$|GO_EXECUTABLE", a) for a in args)


@dataclass(frozen=True)
class _Copies:
    directory: str  # Ollama's copies
    upstream: str  # the upstream directory they copy
    pin: str
    files: str


def bindings_step(snapshot: Snapshot, pins: Sequence[Pin], build_dir: str) -> Step | None:
    """Refresh the vendored copies (the target that writes them, else by hand) and regenerate every Go
    package generated from them."""
    copies = [
        _Copies(c, v.upstream, p.name, v.files)
        for p in pins
        for v in p.vendored
        for c in v.copies
        if snapshot.files(c)
    ]
    if not copies:
        return None
    parts = [_refresh(snapshot, c, build_dir) for c in copies]
    generated = _regenerate(snapshot, copies, build_dir)
    return Step("bindings", "; ".join(parts + ([generated] if generated else [])) + "; commit what changed")


def _refresh(snapshot: Snapshot, copies: _Copies, build_dir: str) -> str:
    target = next((t for t, _ in _custom_targets(snapshot, copies.directory)), None)
    how = (
        code_span(f"cmake --build {build_dir} --target {target}")
        if target
        else f"copy {copies.pin}'s {code_span(f'{copies.upstream}/{copies.files}')} at the new pin"
    )
    return f"Refresh the vendored {copies.pin} files in {code_span(copies.directory)} ({how})"


def _regenerate(snapshot: Snapshot, copies: list[_Copies], build_dir: str) -> str:
    """Regenerate the Go packages whose go:generate reads the copies ("" when none does)."""
    pairs = [(c.directory, c.upstream) for c in copies]
    generated = [b.directory for b in gobindings.bindings(snapshot, pairs) if b.generates]
    if not generated:
        return ""
    packages = " ".join(f"./{d}" for d in generated)
    wrapper = next((t for t, args in _custom_targets(snapshot, "generate") if _runs_go_generate(args)), None)
    also = f", or {code_span(f'cmake --build {build_dir} --target {wrapper}')}" if wrapper else ""
    named = ", ".join(code_span(d) for d in generated)
    return f"regenerate the Go bindings of {named} ({code_span(f'go generate {packages}')}{also})"


def derived_steps(snapshot: Snapshot, pin: Pin, config: Config) -> list[Step]:
    """The pin's "Before merging" steps, read from the tree: its presets, the list values no preset builds,
    and the vendored copies and bindings of the pin and of the pins that compile against it."""
    word = presets.project_word(pin)
    chosen = pin_presets(snapshot, pin)
    consuming = {c.pin for c in pin.consumers if c.pin}
    related = [pin, *(p for p in config.pins if p.name in consuming)]
    bindings = bindings_step(snapshot, related, _binary_root(chosen[0] if chosen else None))
    return [
        *(preset_step(p, word) for p in chosen),
        *alternative_steps(snapshot, chosen, word),
        *([bindings] if bindings else []),
    ]
