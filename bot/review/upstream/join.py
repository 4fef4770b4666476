"""The join: every contract of Ollama's inventory resolved to the upstream code that produces it at one ref, or
"no producer found" with a one-line reason. Pure over the inventory and the producer model.

An output pattern resolves when a string literal (a constant) or a print template (a regular expression's
literal text, in order) of a program it is read from can produce it; a request field when llama-server's
sources read its last name, a response field when they emit it; a flag or environment variable when the
program's argument table or sources take it; a build item when upstream's CMake declares, reads, defines or
looks for it. A behaviour resolves through the contract it is derived from. Some contracts have nothing of
upstream's to find (a preset Ollama defines, a program Ollama's build looks for, another pin's build item):
they are kept apart, with why, and not counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.consumers.contracts.build import OPTIONAL
from bot.review.consumers.contracts.model import (
    GROUPS,
    Behaviour,
    BuildItem,
    Inventory,
    LaunchSetting,
    OutputPattern,
    WireField,
)
from bot.review.upstream.anchors import SERVER
from bot.review.upstream.producers import (
    Needles,
    Place,
    Producers,
    constant_needles,
    printed,
    regexp_needles,
)

RESOLVED, UNRESOLVED, NOT_UPSTREAMS = "resolved", "unresolved", "needs none"
_ENDPOINT = re.compile(r"^(GET|POST|PUT|DELETE|PATCH) (/\S*)")


@dataclass(frozen=True)
class OllamaBuild:
    """What Ollama's own tree defines, so that a build item naming it is not looked for upstream."""

    presets: frozenset[str] = frozenset()  # presets Ollama's CMakePresets.json files define
    other_pins: tuple[str, ...] = ()  # the other pins' names: a build item named after one is that pin's


@dataclass(frozen=True)
class Resolution:
    group: str
    contract: OutputPattern | LaunchSetting | WireField | Behaviour | BuildItem
    label: str  # the contract in a few words
    ollama: tuple[LocalRef, ...]
    producers: tuple[Place, ...]
    why: str
    status: str  # RESOLVED, UNRESOLVED, NOT_UPSTREAMS

    def to_json(self) -> dict:
        return {
            **self.contract.to_json(),
            "producer": [p.to_json() for p in self.producers],
            "why": self.why,
            "status": self.status,
        }


def _found(places: Iterable[Place], why: str) -> tuple[tuple[Place, ...], str, str]:
    shown = tuple(dict.fromkeys(places))[:3]
    return (shown, why, RESOLVED) if shown else ((), why, UNRESOLVED)


def resolve(
    inventory: Inventory, producers: Producers, ollama: OllamaBuild = OllamaBuild()
) -> list[Resolution]:
    """Every contract of the inventory with its producers at the ref, or why none was found."""
    found: list[Resolution] = []
    for entry in inventory.output_patterns:
        found.append(
            _made(
                "output_patterns",
                entry,
                _value_label(entry),
                (entry.ref,),
                _pattern(entry, producers, ollama),
            )
        )
    for setting in inventory.launch:
        found.append(
            _made(
                "launch",
                setting,
                f"{setting.program} {setting.kind} {setting.name}",
                setting.refs,
                _launch(setting, producers),
            )
        )
    for field in inventory.request_fields:
        found.append(
            _made(
                "request_fields",
                field,
                f"{field.endpoint} {field.path}",
                (field.ref,),
                _request(field, producers),
            )
        )
    for field in inventory.response_fields:
        found.append(
            _made(
                "response_fields",
                field,
                f"{field.endpoint} {field.direction} {field.path}",
                (field.ref,),
                _response(field, producers),
            )
        )
    for item in inventory.build:
        found.append(
            _made("build", item, f"{item.kind} {item.name}", item.refs, _build(item, producers, ollama))
        )
    derived = {r.label: r for r in found}
    for behaviour in inventory.behaviours:
        found.append(
            _made(
                "behaviours",
                behaviour,
                f"{behaviour.area}: {behaviour.subject}",
                behaviour.refs,
                _behaviour(behaviour, derived, producers),
            )
        )
    return found


def _made(group: str, contract, label: str, refs: tuple[LocalRef, ...], answer) -> Resolution:
    places, why, status = answer
    return Resolution(group, contract, label, tuple(refs), places, why, status)


def _value_label(entry: OutputPattern) -> str:
    return f"{entry.kind} {entry.value!r}"


# --- output patterns --------------------------------------------------------------------------------------


def _pattern(entry: OutputPattern, producers: Producers, ollama: OllamaBuild):
    pin = _named_pin(entry.value, ollama) if entry.kind != "regexp" else None
    if pin is not None:
        return (), f"names the {pin} pin: what that pin's program prints, not this upstream's", NOT_UPSTREAMS
    needles = _needles(entry)
    if needles is None or not needles.runs:
        why = "does not parse" if needles is None else "spells no literal text outside its groups"
        return (), f"the regular expression {why}: nothing to look for", UNRESOLVED
    return _printed(needles, entry, producers)


def _printed(needles: Needles, entry: OutputPattern, producers: Producers):
    """Where a program the pattern is read from can print it."""
    scopes = [_source_scope(source, producers) for source in entry.sources]
    paths = list(dict.fromkeys(p for _, paths in scopes for p in paths))
    if not paths:
        return (), "; ".join(why for why, _ in scopes), UNRESOLVED
    places = printed(producers.tree, paths, needles, producers.defines)
    what = "string literal" if needles.whole_literal else "print template"
    named = ", ".join(dict.fromkeys(name for name, _ in scopes))
    return _found(
        places,
        f"a {what} of {named} holds it"
        if places
        else f"no {what} of {named} at {producers.ref} holds {' … '.join(needles.runs)!r}",
    )


def _needles(entry: OutputPattern) -> Needles | None:
    """A regexp's literal runs; a constant as itself, matched in any case when written in lower case (Go
    code lowers what it reads before such a comparison)."""
    if entry.kind == "regexp":
        return regexp_needles(entry.value)
    return constant_needles(entry.value, entry.value == entry.value.lower() or "any case" in entry.kind)


def _source_scope(source: str, producers: Producers) -> tuple[str, tuple[str, ...]]:
    """(what it is, the sources to look in) for a source the inventory names: an HTTP answer is
    llama-server's, a program's output that program's sources, the libraries it links included."""
    if _ENDPOINT.match(source):
        return SERVER, producers.anchors.programs[SERVER].paths
    program = source.split()[0]
    anchor = producers.anchors.programs.get(program)
    if anchor is None or not anchor.found:
        return program, ()
    return program, anchor.paths


# --- launch ----------------------------------------------------------------------------------------------


def _launch(setting: LaunchSetting, producers: Producers):
    anchor = producers.anchors.programs.get(setting.program)
    if anchor is None or not anchor.found:
        return (
            (),
            anchor.why if anchor else f"{setting.program} is no program found at {producers.ref}",
            UNRESOLVED,
        )
    if setting.kind == "env":
        return _environment(setting, producers)
    if not producers.anchors.arg_table.found and setting.program == SERVER:
        return (), f"no argument table found at {producers.ref}", UNRESOLVED
    place = producers.flags[setting.program].get(setting.name)
    return _found(
        [place] if place else [],
        "taken by the program"
        if place
        else f"flag {setting.name} is in no argument table nor source of {setting.program}",
    )


def _environment(setting: LaunchSetting, producers: Producers):
    place = producers.env[setting.program].get(setting.name)
    return _found(
        [place] if place else [],
        "read by the program's sources"
        if place
        else f"no source of {setting.program} reads {setting.name} and no argument table names it",
    )


# --- wire ------------------------------------------------------------------------------------------------


def _route(endpoint: str, producers: Producers) -> list[Place]:
    return [r.place for r in producers.routes if r.endpoint == endpoint]


def _last_name(path: str) -> str:
    return path.replace("[]", "").rsplit(".", 1)[-1]


def _request(field: WireField, producers: Producers):
    routes = _route(field.endpoint, producers)
    if not routes:
        return (), f"no route {field.endpoint} is registered at {producers.ref}", UNRESOLVED
    name = _last_name(field.path)
    reads = producers.reads.get(name, ())
    defaults = [r.default for r in reads if r.default]
    why = f"read as {name!r}" + (f", default {defaults[0]}" if defaults else "")
    return _found(
        (r.place for r in reads), why if reads else f"field {name} is read by no source of llama-server"
    )


def _response(field: WireField, producers: Producers):
    if not _route(field.endpoint, producers):
        return (), f"no route {field.endpoint} is registered at {producers.ref}", UNRESOLVED
    name = _last_name(field.path)
    if not name:
        return (), "the field has no name to look for", UNRESOLVED
    emits = producers.emits.get(name, ())
    return _found(
        (e.place for e in emits),
        f"emitted as {name!r}" if emits else f"field {name} is emitted by no source of llama-server",
    )


# --- build -----------------------------------------------------------------------------------------------


def _other_pin(name: str, ollama: OllamaBuild) -> str | None:
    key = name.lower().replace("-", "_")
    return next((p for p in ollama.other_pins if key.startswith(p.lower().replace("-", "_"))), None)


def _named_pin(value: str, ollama: OllamaBuild) -> str | None:
    """The other pin a constant starts with as a word of its own (`mlx:` for the mlx pin)."""
    word = re.match(r"[A-Za-z][\w-]*", value)
    return next((p for p in ollama.other_pins if word and word[0].lower() == p.lower()), None)


def _build(item: BuildItem, producers: Producers, ollama: OllamaBuild):
    pin = _other_pin(item.name, ollama)
    if pin is not None:
        return (), f"named after the {pin} pin: that upstream's build, not this one's", NOT_UPSTREAMS
    return _BUILD_KINDS.get(item.kind, _unknown_kind)(item, producers, ollama)


def _option(item: BuildItem, producers: Producers, _ollama: OllamaBuild):
    if item.name in producers.declared:
        return _found([producers.declared[item.name]], "declared by upstream's CMake")
    if item.name in producers.cmake_words:
        return _found([producers.cmake_words[item.name]], "read by upstream's CMake")
    if item.name.startswith("CMAKE_"):
        return (), f"{item.name} is CMake's own variable, which upstream's CMake does not read", NOT_UPSTREAMS
    return (), f"no CMake file at {producers.ref} declares or reads {item.name}", UNRESOLVED


def _target(item: BuildItem, producers: Producers, _ollama: OllamaBuild):
    place = producers.targets.get(item.name)
    if place is None and item.value == OPTIONAL:
        why = (
            f"Ollama's build names it only under {code_span(f'if(TARGET {item.name})')}, and no CMake file at "
            f"{producers.ref} defines it: what the guard holds is skipped"
        )
        return (), why, NOT_UPSTREAMS
    return _found(
        [place] if place else [],
        "defined by upstream's CMake"
        if place
        else f"no CMake file at {producers.ref} defines target {item.name}",
    )


def _package(item: BuildItem, producers: Producers, _ollama: OllamaBuild):
    place = producers.packages.get(item.name)
    if place is None:
        return (
            (),
            f"upstream's CMake does not find_package({item.name}): Ollama's build looks for it itself",
            NOT_UPSTREAMS,
        )
    return _found([place], "upstream's CMake looks for it too")


def _preset(item: BuildItem, producers: Producers, ollama: OllamaBuild):
    place = producers.presets.get(item.name)
    if place is not None:
        return _found([place], "defined by upstream's CMakePresets.json")
    if item.name in ollama.presets:
        return (), "a preset Ollama's own CMakePresets.json defines", NOT_UPSTREAMS
    return (), f"no CMakePresets.json at {producers.ref} defines preset {item.name}", UNRESOLVED


def _program(item: BuildItem, producers: Producers, _ollama: OllamaBuild):
    place = producers.programs.get(item.name)
    if place is not None:
        return _found([place], "upstream's CMake looks for it too")
    return (
        (),
        f"a {item.kind} Ollama's own build runs or looks for on the build machine, not upstream's",
        NOT_UPSTREAMS,
    )


def _unknown_kind(item: BuildItem, _producers: Producers, _ollama: OllamaBuild):
    return (), f"no producer model for build items of kind {item.kind!r}", UNRESOLVED


_BUILD_KINDS: dict[str, Callable] = {
    "option": _option,
    "target": _target,
    "package": _package,
    "preset": _preset,
    "program": _program,
    "tool": _program,
}


# --- behaviours ------------------------------------------------------------------------------------------

_FIELD = re.compile(r"^field (\S+) of (\S+ \S+)$")
_FLAG_OF = re.compile(r"^flag (\S+) of (\S+)$")
_ENDPOINT_SUBJECT = re.compile(r"^endpoint (\S+ \S+)$")


def _behaviour(behaviour: Behaviour, derived: dict[str, Resolution], producers: Producers):
    """A behaviour through the contract it is derived from: a request field, a flag, an endpoint."""
    subject = behaviour.subject
    if m := _FIELD.match(subject):
        source = derived.get(f"{m[2]} {m[1]}")
    elif m := _FLAG_OF.match(subject):
        source = derived.get(f"{m[2]} flag {m[1]}")
    elif m := _ENDPOINT_SUBJECT.match(subject):
        places = _route(m[1], producers)
        return _found(
            places,
            "the route is registered" if places else f"no route {m[1]} is registered at {producers.ref}",
        )
    else:
        return (), f"derived from {subject!r}, a contract the join cannot name", UNRESOLVED
    if source is None:
        return (), f"derived from {subject}, which is not in the inventory's groups", UNRESOLVED
    return source.producers, f"as {source.label}: {source.why}", source.status


def summary(resolutions: list[Resolution]) -> tuple[int, int]:
    """(resolved, total): the contracts that need an upstream producer, and how many found one."""
    counted = [r for r in resolutions if r.status != NOT_UPSTREAMS]
    return sum(r.status == RESOLVED for r in counted), len(counted)


def by_group(resolutions: list[Resolution]) -> dict[str, list[Resolution]]:
    return {key: [r for r in resolutions if r.group == key] for key, _ in GROUPS}
