"""CMake presets as CMake reads them: every `CMakePresets.json` of a tree, each configure preset with the
cache variables it inherits, each build preset with its configure preset and targets.

The files are hostile input: a file past MAX_BYTES, a preset list past MAX_PRESETS or an `inherits` chain
past MAX_DEPTH is cut there; JSON that does not parse, or entries of the wrong shape, are skipped.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field

from bot.config import Pin
from bot.repos.snapshot import Snapshot

MAX_BYTES = 1 << 20
MAX_PRESETS = 500
MAX_DEPTH = 16


@dataclass(frozen=True)
class ConfigurePreset:
    file: str  # the CMakePresets.json it is in
    name: str
    hidden: bool
    cache: dict[str, str] = field(default_factory=dict)  # with what it inherits (its own entries win)
    binary_dir: str = ""  # as written, `${sourceDir}` not expanded

    @property
    def source_dir(self) -> str:
        """The directory of the presets file: the source tree `cmake --preset` configures."""
        return posixpath.dirname(self.file)


@dataclass(frozen=True)
class BuildPreset:
    file: str
    name: str
    configure: ConfigurePreset | None
    targets: tuple[str, ...]

    @property
    def source_dir(self) -> str:
        return posixpath.dirname(self.file)


def project_word(pin: Pin) -> re.Pattern[str]:
    """The pin's project as a word of its own in a preset, target or variable name (`mlx` of `mlx-c`)."""
    word = re.match(r"[A-Za-z0-9]+", pin.name)
    return re.compile(
        rf"(?<![A-Za-z0-9]){re.escape(word[0] if word else pin.name)}(?![A-Za-z0-9])", re.IGNORECASE
    )


def preset_files(snapshot: Snapshot) -> list[str]:
    """Every CMakePresets.json of the tree, the top-level one first."""
    found = [p for p in snapshot.files() if posixpath.basename(p) == "CMakePresets.json"]
    return sorted(found, key=lambda p: (p.count("/"), p))


def _load(snapshot: Snapshot, path: str) -> dict:
    data = snapshot.read(path) or b""
    if len(data) > MAX_BYTES:
        return {}
    try:
        loaded = json.loads(data)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _entries(raw: dict, key: str) -> list[dict]:
    listed = raw.get(key)
    if not isinstance(listed, list):
        return []
    return [e for e in listed[:MAX_PRESETS] if isinstance(e, dict) and isinstance(e.get("name"), str)]


def _value(value: object) -> str | None:
    """A cache variable's value: a string, a bool, or `{"type": ..., "value": ...}`."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return value if isinstance(value, str) else None


def _parents(entry: dict) -> list[str]:
    """The presets an entry `inherits` (a name or a list of names)."""
    parents = entry.get("inherits", [])
    listed = [parents] if isinstance(parents, str) else parents if isinstance(parents, list) else []
    return [p for p in listed if isinstance(p, str)]


def _own_cache(entry: dict) -> dict[str, str]:
    own = entry.get("cacheVariables")
    if not isinstance(own, dict):
        return {}
    return {k: v for k, value in own.items() if isinstance(k, str) and (v := _value(value)) is not None}


def _inherited(name: str, raw: dict[str, dict], depth: int = 0) -> dict[str, str]:
    """The cache variables of the preset and of those it inherits, the nearer ones winning."""
    entry = raw.get(name)
    if entry is None or depth > MAX_DEPTH:
        return {}
    merged: dict[str, str] = {}
    for parent in reversed(_parents(entry)):
        merged.update(_inherited(parent, raw, depth + 1))
    return merged | _own_cache(entry)


def _binary_dir(name: str, raw: dict[str, dict], depth: int = 0) -> str:
    entry = raw.get(name)
    if entry is None or depth > MAX_DEPTH:
        return ""
    if isinstance(entry.get("binaryDir"), str):
        return entry["binaryDir"]
    return next((d for p in _parents(entry) if (d := _binary_dir(p, raw, depth + 1))), "")


def configure_presets(snapshot: Snapshot, path: str) -> list[ConfigurePreset]:
    raw = {e["name"]: e for e in _entries(_load(snapshot, path), "configurePresets")}
    return [
        ConfigurePreset(
            path,
            name,
            entry.get("hidden") is True,
            _inherited(name, raw),
            _binary_dir(name, raw),
        )
        for name, entry in raw.items()
    ]


def build_presets(snapshot: Snapshot, path: str) -> list[BuildPreset]:
    configures = {p.name: p for p in configure_presets(snapshot, path)}
    found = []
    for entry in _entries(_load(snapshot, path), "buildPresets"):
        if entry.get("hidden") is True:
            continue
        targets = entry.get("targets", [])
        targets = [targets] if isinstance(targets, str) else targets if isinstance(targets, list) else []
        configure = configures.get(entry.get("configurePreset", ""))
        found.append(
            BuildPreset(path, entry["name"], configure, tuple(t for t in targets if isinstance(t, str)))
        )
    return found


def cmake_minimum(snapshot: Snapshot, path: str) -> tuple[str, int] | None:
    """The CMake version a presets file declares it needs (`cmakeMinimumRequired`) and the line that says
    so; None when it declares none."""
    required = _load(snapshot, path).get("cmakeMinimumRequired")
    if not isinstance(required, dict):
        return None
    parts = [required.get(k, 0) for k in ("major", "minor", "patch")]
    if not all(_small_number(p) for p in parts):
        return None
    text = (snapshot.read(path) or b"")[:MAX_BYTES].decode("utf-8", "replace")
    line = next((n for n, t in enumerate(text.splitlines(), 1) if '"cmakeMinimumRequired"' in t), 1)
    return ".".join(str(p) for p in parts), line


def _small_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 16
