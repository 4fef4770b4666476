"""Ollama's build settings: the option values its presets, CMake files, Dockerfile and workflows pass."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence

from tree_sitter import Node

from bot.lang import cmakelang, syntax
from bot.model import LocalRef
from bot.review.consumers.shared import (
    DEFINE,
    OLLAMA_CMAKE,
    OLLAMA_COMMAND_LINES,
    SETTABLE,
    OptionSetting,
    line_of,
    text_of,
    truth_of,
)
from bot.review.source import glob_match

_FUNCTION_DEFINITIONS = syntax.pattern("cmake", "(function_def) @f")

_Found = dict[str, list[OptionSetting]]  # each variable set, with every place that sets it


def ollama_options(
    ollama: Mapping[str, str], paths: list[str]
) -> tuple[dict[str, tuple[OptionSetting, ...]], set[str]]:
    """Every CMake variable Ollama sets (presets, its CMake files, `-D` on command lines) with each place,
    and the backends a visible preset turns on (through `inherits`)."""
    found: _Found = {}
    preset_backends: set[str] = set()
    for path in paths:
        read = _settings_reader(path)
        if read is not None and (text := text_of(ollama, path)) is not None:
            preset_backends |= read(path, text, found)
    return {k: tuple(v) for k, v in sorted(found.items())}, preset_backends


def builds_leaving_default(
    ollama: Mapping[str, str],
    paths: list[str],
    names: re.Pattern[str],
    options: Mapping[str, tuple[OptionSetting, ...]],
) -> Callable[[str], tuple[str, ...]]:
    """For an option Ollama sets somewhere, the builds of Ollama's that leave it to upstream's default: the
    visible presets (of the presets files that configure options of these `names`) that do not set it, itself
    or by inheritance; none when one of Ollama's CMake files sets it, which every build reads."""
    configuring = preset_builds(ollama, paths, names)

    def leaving(option: str) -> tuple[str, ...]:
        if any(glob_match(s.ref.path, OLLAMA_CMAKE) for s in options.get(option, ())):
            return ()
        return tuple(p for p, variables in configuring.items() if option not in variables)

    return leaving


def preset_builds(
    ollama: Mapping[str, str], paths: list[str], names: re.Pattern[str]
) -> dict[str, dict[str, str]]:
    """The builds Ollama's presets make of an upstream: the visible configure presets of the presets files that
    configure options of these `names`, each with every cache variable it sets (or inherits) and its value."""
    presets: dict[str, dict[str, str]] = {}
    for path in paths:
        text = text_of(ollama, path) if posixpath.basename(path) == "CMakePresets.json" else None
        if text is not None:
            presets.update(_visible_presets(text))
    return {p: v for p, v in presets.items() if any(names.fullmatch(name) for name in v)}


def _visible_presets(text: str) -> dict[str, dict[str, str]]:
    """A presets file's visible configure presets, each with every cache variable it sets (or inherits)."""
    try:
        presets = json.loads(text).get("configurePresets", [])
    except (ValueError, AttributeError):
        return {}
    by_name = {p.get("name"): p for p in presets if isinstance(p, dict)}
    return {
        str(name): _effective(preset, by_name) for name, preset in by_name.items() if not preset.get("hidden")
    }


def _settings_reader(path: str) -> Callable[[str, str, _Found], set[str]] | None:
    """How a file of Ollama's sets variables, by its kind: presets, CMake, command lines; None for others."""
    if posixpath.basename(path) == "CMakePresets.json":
        return _preset_settings
    if glob_match(path, OLLAMA_CMAKE):
        return _cmake_settings
    if glob_match(path, OLLAMA_COMMAND_LINES):
        return _command_line_settings
    return None


def _command_line_settings(path: str, text: str, found: _Found) -> set[str]:
    """Record the `-DNAME=VALUE` of a Dockerfile's or workflow's command lines; no preset backends."""
    if "-D" in text:
        for m in DEFINE.finditer(text):
            found.setdefault(m[1], []).append(
                OptionSetting(m[2].strip("\"'"), LocalRef(path, line_of(text, m.start())))
            )
    return set()


def _preset_value(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, dict):
        return _preset_value(value.get("value", ""))
    return str(value)


def _preset_settings(path: str, text: str, found: _Found) -> set[str]:
    """Record a presets file's cache variables; return the GGML_<X> names set ON in a visible preset."""
    try:
        presets = json.loads(text).get("configurePresets", [])
    except (ValueError, AttributeError):
        return set()
    by_name = {p.get("name"): p for p in presets if isinstance(p, dict)}
    _record_presets(path, text, by_name, found)
    on: set[str] = set()
    for preset in by_name.values():
        if not preset.get("hidden"):
            on |= _ggml_on(preset, by_name)
    return on


def _ggml_on(preset: dict, by_name: dict) -> set[str]:
    """The <x> of the GGML_<X> variables a preset sets ON, itself or by inheritance."""
    return {
        var[5:].lower()
        for var, value in _effective(preset, by_name).items()
        if var.startswith("GGML_") and truth_of(value) is True
    }


def _record_presets(path: str, text: str, by_name: dict, found: _Found) -> None:
    """Each preset's cache variables, at the line of the variable's first mention after the preset's name."""
    at = 0
    for preset in by_name.values():
        name_at = text.find(f'"{preset.get("name")}"', at)
        at = max(at, name_at)
        for var, value in _cache_variables(preset).items():
            var_at = text.find(f'"{var}"', max(name_at, 0))
            line = line_of(text, var_at) if var_at >= 0 else 1
            found.setdefault(var, []).append(OptionSetting(_preset_value(value), LocalRef(path, line)))


def _effective(preset: dict, by_name: dict, seen: frozenset = frozenset()) -> dict[str, str]:
    """A preset's cache variables with those it inherits (the first parent wins, its own values win over all)."""
    values: dict[str, str] = {}
    for parent in reversed(_parents(preset)):
        if parent in by_name and parent not in seen:
            values.update(_effective(by_name[parent], by_name, seen | {parent}))
    values.update({k: _preset_value(v) for k, v in _cache_variables(preset).items()})
    return values


def _parents(preset: dict) -> list[str]:
    """The presets a preset inherits from, first first (`inherits` names one, or lists them)."""
    parents = preset.get("inherits") or []
    return [parents] if isinstance(parents, str) else parents


def _cache_variables(preset: dict) -> dict:
    """A preset's own cache variables, as its file gives them (none when it gives no table)."""
    return preset.get("cacheVariables") or {}


def _cmake_settings(path: str, text: str, found: _Found) -> set[str]:
    """`set(NAME VALUE ...)` of GGML_*/LLAMA_* names or cache entries, and calls of the file's own functions
    that forward their arguments to such a `set(${name} ${value} CACHE ...)`; no preset backends."""
    root = cmakelang.parse(text)
    forwarders = _forwarders(root)
    for command in cmakelang.commands(root):
        name = cmakelang.name(command)
        if name != "set" and name not in forwarders:
            continue
        args = cmakelang.arguments(command)
        setting = _set_value(args) if name == "set" else _forwarded_setting(args, forwarders[name])
        if setting is not None:
            found.setdefault(setting[0], []).append(
                OptionSetting(setting[1], LocalRef(path, command.start_point[0] + 1))
            )
    return set()


def _set_value(args: list[str]) -> tuple[str, str] | None:
    """(variable, value) a `set()` gives a GGML_*/LLAMA_* name or a cache entry; None for another variable,
    a computed name or a PARENT_SCOPE set."""
    if len(args) < 2 or not (SETTABLE.fullmatch(args[0]) or "CACHE" in args):
        return None
    values = args[1 : args.index("CACHE")] if "CACHE" in args else args[1:]
    if "PARENT_SCOPE" in values or "${" in args[0]:
        return None
    return args[0], ";".join(values)


def _forwarded_setting(args: list[str], positions: tuple[int, int]) -> tuple[str, str] | None:
    """(variable, value) a call of a forwarding function passes at its name and value positions."""
    if len(args) <= max(positions):
        return None
    return args[positions[0]], args[positions[1]]


def _forwarders(root: Node) -> dict[str, tuple[int, int]]:
    """The file's functions that forward two of their parameters to `set(${name} ${value} CACHE ...)`: the
    function's name -> the positions of the name and the value among its parameters."""
    forwarders: dict[str, tuple[int, int]] = {}
    for definition in syntax.captures(_FUNCTION_DEFINITIONS, root).get("f", []):
        header = cmakelang.arguments(definition.children[0])
        params = [p.lower() for p in header[1:]]
        for command in cmakelang.commands(definition):
            positions = _cache_set_positions(command, params)
            if positions is not None:
                forwarders[header[0].lower()] = positions
    return forwarders


def _cache_set_positions(command: Node, params: list[str]) -> tuple[int, int] | None:
    """The positions among `params` of the `${name}` and `${value}` a `set(... CACHE ...)` is given."""
    args = cmakelang.arguments(command)
    if cmakelang.name(command) != "set" or "CACHE" not in args or len(args) < 3:
        return None
    name_at, value_at = (_param_position(a, params) for a in args[:2])
    if name_at is None or value_at is None:
        return None
    return name_at, value_at


def _param_position(arg: str, params: list[str]) -> int | None:
    """The position among `params` of the parameter an argument `${param}` expands; None for another argument."""
    m = re.fullmatch(r"\$\{(\w+)\}", arg)
    if not m or m[1].lower() not in params:
        return None
    return params.index(m[1].lower())


def setting_anchor(
    mentions: Mapping[str, list[LocalRef]], anchor_dirs: Sequence[str], name: str
) -> LocalRef | None:
    """Where Ollama would set an option it does not: the end of its longest block of consecutive lines
    (under one of `anchor_dirs`) setting options of the same prefix (`LLAMA_`, `GGML_`), else of any prefix."""
    prefix = name.split("_", 1)[0] + "_"
    for same in (True, False):
        lines = sorted(
            {
                (r.path, r.line)
                for option, refs in mentions.items()
                if option.startswith(prefix) or not same
                for r in refs
                if r.path.startswith(tuple(anchor_dirs))
            }
        )
        if lines:
            path, line = _longest_run(lines)
            return LocalRef(path, line)
    return None


def _longest_run(lines: list[tuple[str, int]]) -> tuple[str, int]:
    """The last line of the longest run of lines of one file at most two apart (the first such run on a tie)."""
    best, best_length = lines[0], 0
    start = 0
    for i, (path, line) in enumerate(lines):
        if i and (path != lines[i - 1][0] or line - lines[i - 1][1] > 2):
            start = i
        if i - start + 1 > best_length:
            best, best_length = (path, line), i - start + 1
    return best
