"""Ollama's build settings: the option values its presets, CMake files, Dockerfile and workflows pass."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping

from bot import cmakelang, syntax
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


def ollama_options(
    ollama: Mapping[str, str], paths: list[str]
) -> tuple[dict[str, tuple[OptionSetting, ...]], set[str]]:
    """Every CMake variable Ollama sets (presets, its CMake files, `-D` on command lines) with each place,
    and the backends a visible preset turns on (through `inherits`)."""
    found: dict[str, list[OptionSetting]] = {}
    preset_backends: set[str] = set()
    for path in paths:
        if posixpath.basename(path) == "CMakePresets.json":
            text = text_of(ollama, path)
            if text is not None:
                preset_backends |= _preset_settings(path, text, found)
        elif glob_match(path, OLLAMA_CMAKE):
            text = text_of(ollama, path)
            if text is not None:
                _cmake_settings(path, text, found)
        elif glob_match(path, OLLAMA_COMMAND_LINES):
            text = text_of(ollama, path)
            if text is not None and "-D" in text:
                for m in DEFINE.finditer(text):
                    found.setdefault(m[1], []).append(
                        OptionSetting(m[2].strip("\"'"), LocalRef(path, line_of(text, m.start())))
                    )
    return {k: tuple(v) for k, v in sorted(found.items())}, preset_backends


def _preset_value(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, dict):
        return _preset_value(value.get("value", ""))
    return str(value)


def _preset_settings(path: str, text: str, found: dict[str, list[OptionSetting]]) -> set[str]:
    """Record a presets file's cache variables; return the GGML_<X> names set ON in a visible preset."""
    try:
        presets = json.loads(text).get("configurePresets", [])
    except (ValueError, AttributeError):
        return set()
    by_name = {p.get("name"): p for p in presets if isinstance(p, dict)}
    at = 0
    for preset in by_name.values():
        name_at = text.find(f'"{preset.get("name")}"', at)
        at = max(at, name_at)
        for var, value in (preset.get("cacheVariables") or {}).items():
            var_at = text.find(f'"{var}"', max(name_at, 0))
            line = line_of(text, var_at) if var_at >= 0 else 1
            found.setdefault(var, []).append(OptionSetting(_preset_value(value), LocalRef(path, line)))

    def effective(preset: dict, seen: frozenset = frozenset()) -> dict[str, str]:
        parents = preset.get("inherits") or []
        values: dict[str, str] = {}
        for parent in reversed([parents] if isinstance(parents, str) else parents):
            if parent in by_name and parent not in seen:
                values.update(effective(by_name[parent], seen | {parent}))
        values.update({k: _preset_value(v) for k, v in (preset.get("cacheVariables") or {}).items()})
        return values

    on: set[str] = set()
    for preset in by_name.values():
        if preset.get("hidden"):
            continue
        for var, value in effective(preset).items():
            if var.startswith("GGML_") and truth_of(value) is True:
                on.add(var[5:].lower())
    return on


def _cmake_settings(path: str, text: str, found: dict[str, list[OptionSetting]]) -> None:
    """`set(NAME VALUE ...)` of GGML_*/LLAMA_* names or cache entries, and calls of the file's own functions
    that forward their arguments to such a `set(${name} ${value} CACHE ...)`."""
    root = cmakelang.parse(text)
    forwarders: dict[str, tuple[int, int]] = {}
    for definition in syntax.captures("cmake", "(function_def) @f", root).get("f", []):
        header = cmakelang.arguments(definition.children[0])
        params = [p.lower() for p in header[1:]]
        for command in cmakelang.commands(definition):
            args = cmakelang.arguments(command)
            if cmakelang.name(command) == "set" and "CACHE" in args and len(args) >= 3:
                name_var, value_var = (re.fullmatch(r"\$\{(\w+)\}", a) for a in args[:2])
                if (
                    name_var
                    and value_var
                    and name_var[1].lower() in params
                    and value_var[1].lower() in params
                ):
                    forwarders[header[0].lower()] = (
                        params.index(name_var[1].lower()),
                        params.index(value_var[1].lower()),
                    )
    for command in cmakelang.commands(root):
        name = cmakelang.name(command)
        if name != "set" and name not in forwarders:
            continue
        args = cmakelang.arguments(command)
        line = command.start_point[0] + 1
        if name == "set" and len(args) >= 2 and (SETTABLE.fullmatch(args[0]) or "CACHE" in args):
            values = args[1 : args.index("CACHE")] if "CACHE" in args else args[1:]
            if "PARENT_SCOPE" in values or "${" in args[0]:
                continue
            found.setdefault(args[0], []).append(OptionSetting(";".join(values), LocalRef(path, line)))
        elif name in forwarders and len(args) > max(forwarders[name]):
            at_name, at_value = forwarders[name]
            found.setdefault(args[at_name], []).append(OptionSetting(args[at_value], LocalRef(path, line)))
