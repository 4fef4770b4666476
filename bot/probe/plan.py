"""What the probe asks llama-server, read from Ollama's contract inventory: the flags and environment Ollama
starts it with, the device listing it runs first, and the requests it sends, one per value Ollama's code or
documentation can put in a field; and the runs of the other upstream programs Ollama starts (llama-quantize),
once with the flags it always gives and once per other value its code gives a flag. Pure: the inventory and
the documented values in, a plan out."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.model import LocalRef
from bot.review.consumers.contracts.model import Inventory, LaunchSetting, OutputPattern, WireField

RULES = Path(__file__).with_name("probe.toml")
PROGRAM = "llama-server"
MAX_PROBES = 200
MAX_RUNS = 40  # runs of the other programs
MAX_LAUNCHES = 40  # starts of the server with one more flag or variable


@dataclass(frozen=True)
class Probe:
    """One request: the base body of an endpoint, or that body with one field set to one value."""

    name: str  # "POST /completion repeat_last_n=-1"
    method: str
    path: str
    body: dict[str, Any]
    stream: bool
    field: str = ""  # the field this probe varies ("" for the base request)
    value: str = ""  # the value it tries, as Ollama's code or documentation spells it
    why: str = ""  # where that value comes from ("documented: -1 = num_ctx")
    ref: LocalRef | None = None  # Ollama's line that sends the field


@dataclass(frozen=True)
class Launch:
    """The server started with one more flag or variable Ollama gives on some starts, set to one value its
    code gives it; the base requests are sent to it too."""

    name: str  # "--load-mode dio", "GGML_CUDA_INIT=1"
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    ref: LocalRef | None = None  # Ollama's line that gives it


@dataclass(frozen=True)
class ProgramRun:
    """One run of another upstream program as Ollama runs it: its flags, then the arguments Ollama gives after
    them (`{model}` is the tiny model, `{output}` a file the run writes)."""

    name: str  # "llama-quantize --tensor-type ^token_embd\.weight$=f16"
    program: str
    args: tuple[str, ...]
    flag: str = ""  # the flag this run adds to the base run ("" for the base run)
    ref: LocalRef | None = None  # Ollama's line that gives it


@dataclass(frozen=True)
class Plan:
    args: tuple[str, ...]  # the flags after the probe's own (model, host, port)
    env: dict[str, str]
    listing: tuple[str, ...]  # the device listing's flags
    probes: tuple[Probe, ...]
    patterns: tuple[OutputPattern, ...]  # what Ollama looks for in the program's output
    decoded: tuple[WireField, ...]  # the response and stream fields Ollama reads
    skipped: tuple[str, ...] = field(default=())  # what Ollama gives that the probe leaves out, and why
    runs: tuple[ProgramRun, ...] = ()  # the other programs Ollama starts
    launches: tuple[Launch, ...] = ()  # the server's other starts

    @property
    def programs(self) -> tuple[str, ...]:
        """The upstream programs the probe builds: llama-server and those of the runs."""
        return (PROGRAM, *dict.fromkeys(r.program for r in self.runs))


Documented = Callable[[Sequence[str]], list[tuple[str, str]]]  # options -> (value, what the docs say)


def make_plan(inventory: Inventory, documented: Documented, rules: dict | None = None) -> Plan:
    """The plan for llama-server from `inventory`; `documented` gives the values Ollama's documentation
    promises for the options a field forwards."""
    rules = rules if rules is not None else tomllib.loads(RULES.read_text())
    skipped: list[str] = []
    args = _flags(inventory.launch, rules, skipped)
    probes = _probes(inventory.request_fields, documented, rules, skipped)
    runs = _program_runs(inventory.launch, rules, skipped)
    launches = _launches(inventory.launch, rules, skipped)
    programs = (PROGRAM, *(r.program for r in runs))
    patterns = tuple(
        p for p in inventory.output_patterns if any(s.split(" ", 1)[0] in programs for s in p.sources)
    )
    spoken = {f"{p.method} {p.path}" for p in probes} | {"GET /health"}
    decoded = tuple(f for f in inventory.response_fields if f.endpoint in spoken)
    env = _environment(inventory.launch)
    return Plan(
        tuple(args), env, tuple(rules["listing"]), probes, patterns, decoded, tuple(skipped), runs, launches
    )


def _launches(settings: Sequence[LaunchSetting], rules: dict, skipped: list[str]) -> tuple[Launch, ...]:
    """One start per flag or variable Ollama gives llama-server on some starts and per value its code (or, for
    a value it computes, the rules) gives it; a switch is given alone."""
    found: list[Launch] = []
    for s in settings:
        if s.program == PROGRAM and not s.always and s.name not in rules["owned_flags"]:
            values = _values_given(s, rules)
            if not values:
                skipped.append(f"{s.kind} {s.name}: {_computed(s)}; not started with it")
            found += [_launch(s, value) for value in values]
    return tuple(found[:MAX_LAUNCHES])


def _values_given(s: LaunchSetting, rules: dict) -> list[str | None]:
    """The values Ollama gives a flag or variable on some starts: its code's constants (a flag's empty one is
    the code's "not given"), else the rules' value for one it computes; [None] for a switch."""
    if not s.values:
        return [None] if s.kind == "flag" else []
    values: list[str | None] = [v for v in _all_constants(s.values) if v or s.kind == "env"]
    return values or ([str(rules["flag_values"][s.name])] if s.name in rules["flag_values"] else [])


def _launch(s: LaunchSetting, value: str | None) -> Launch:
    ref = s.refs[0] if s.refs else None
    if s.kind == "env":
        return Launch(f"{s.name}={value}", env=((s.name, str(value)),), ref=ref)
    args = (s.name,) if value is None else (s.name, value)
    return Launch(" ".join(args), args, ref=ref)


def _computed(s: LaunchSetting) -> str:
    return f"Ollama computes its value ({', '.join(s.values)})"


def _program_runs(
    settings: Sequence[LaunchSetting], rules: dict, skipped: list[str]
) -> tuple[ProgramRun, ...]:
    """Per other program Ollama starts: the run with the flags it always gives, then one run per other value
    its code gives a flag; a program the rules give no arguments for is named in `skipped`."""
    runs: list[ProgramRun] = []
    for program in dict.fromkeys(s.program for s in settings if s.program != PROGRAM):
        after = rules.get("programs", {}).get(program, {}).get("arguments")
        if after is None:
            skipped.append(f"program {program}: what Ollama gives after its flags is not in probe.toml")
            continue
        flags = [s for s in settings if s.program == program and s.kind == "flag"]
        skipped += [
            f"flag {s.name} of {program}: {_computed(s)}; no probe value" for s in flags if _unvalued(s)
        ]
        runs += _runs_of(program, flags, tuple(after))
    return tuple(runs[:MAX_RUNS])


def _unvalued(s: LaunchSetting) -> bool:
    """A flag Ollama always gives with a value it computes: left out of the runs."""
    return s.always and bool(s.values) and not _given(s)


def _runs_of(program: str, flags: list[LaunchSetting], after: tuple[str, ...]) -> list[ProgramRun]:
    """The base run (the flags always given, then `after`), then one per other flag and value."""
    base = tuple(arg for s in flags if s.always for arg in _given(s))
    runs = [ProgramRun(program, program, (*base, *after))]
    for s in flags:
        ref = s.refs[0] if s.refs else None
        runs += [
            ProgramRun(" ".join((program, *added)), program, (*base, *added, *after), s.name, ref)
            for added in _each_given(s)
        ]
    return runs


def _each_given(s: LaunchSetting) -> list[tuple[str, ...]]:
    """A flag Ollama gives on some runs, once per value its code gives it (a switch alone); none when always
    given (the base run has it)."""
    if s.always:
        return []
    return [(s.name, value) for value in _all_constants(s.values)] if s.values else [(s.name,)]


def _given(setting: LaunchSetting) -> list[str]:
    """A flag Ollama always gives, with its first constant value; none when it computes the value."""
    if not setting.values:
        return [setting.name]
    value = _first_constant(setting.values)
    return [setting.name, value] if value is not None else []


def _all_constants(values: Sequence[str]) -> list[str]:
    """The whole constants of an inventory entry's values, as text (one it shortened is no value to give)."""
    constants = (_decoded(v) for v in values)
    return [
        v if isinstance(v, str) else json.dumps(v)
        for v in constants
        if v is not None and not (isinstance(v, str) and v.endswith("..."))
    ]


def _environment(settings: Sequence[LaunchSetting]) -> dict[str, str]:
    """The variables Ollama sets on every start to a constant."""
    found = {}
    for s in settings:
        constant = _first_constant(s.values) if s.program == PROGRAM and s.kind == "env" else None
        if constant is not None and s.always:
            found[s.name] = constant
    return found


def _flags(settings: Sequence[LaunchSetting], rules: dict, skipped: list[str]) -> list[str]:
    """The flags Ollama gives on every start, each with a constant of its code or the rules' value."""
    args: list[str] = []
    for s in settings:
        if s.program != PROGRAM or s.kind != "flag" or not s.always or s.name in rules["owned_flags"]:
            continue
        if not s.values:
            args.append(s.name)
            continue
        value = _first_constant(s.values)
        value = value if value is not None else rules["flag_values"].get(s.name)
        if value is None:
            skipped.append(
                f"flag {s.name}: Ollama computes its value ({', '.join(s.values)}); no probe value"
            )
            continue
        args += [s.name, str(value)]
    return args


def _first_constant(values: Sequence[str]) -> str | None:
    """The first quoted constant of an inventory entry's values, as text."""
    constants = _all_constants(values)
    return constants[0] if constants else None


def _probes(
    fields: Sequence[WireField], documented: Documented, rules: dict, skipped: list[str]
) -> tuple[Probe, ...]:
    """Per endpoint Ollama calls, its probes (an endpoint the base start does not serve, such as embeddings,
    answers under the start with the flag Ollama gives for it)."""
    probes: list[Probe] = []
    for endpoint in dict.fromkeys(f.endpoint for f in fields):
        probes += _endpoint_probes(endpoint, list(fields), documented, rules)
    if len(probes) > MAX_PROBES:
        skipped.append(f"{len(probes) - MAX_PROBES} requests past the first {MAX_PROBES}")
    return tuple(probes[:MAX_PROBES])


def _endpoint_probes(
    endpoint: str, fields: list[WireField], documented: Documented, rules: dict
) -> list[Probe]:
    """The base request streaming and not, then one request per other value a top-level field can hold."""
    fields = [f for f in fields if f.endpoint == endpoint]
    if not fields:
        return []
    base = _body(fields, rules)
    method, path = endpoint.split(" ", 1)
    streamed = "stream" in base
    probes = [
        Probe(f"{endpoint}{' stream' if stream else ''}", method, path, {**base, "stream": stream}, stream)
        for stream in ((False, True) if streamed else ())
    ] or [Probe(endpoint, method, path, base, False)]
    for f in fields:
        if "." in f.path or "[]" in f.path or f.path == "stream":  # streaming is the two base requests
            continue
        for value, why in _variants(f, base.get(f.path), documented):
            body = {**base, f.path: value, **({"stream": False} if streamed else {})}
            shown = json.dumps(value)
            probes.append(
                Probe(f"{endpoint} {f.path}={shown}", method, path, body, False, f.path, shown, why, f.ref)
            )
    return probes


def _body(fields: list[WireField], rules: dict) -> dict[str, Any]:
    """The base request: each field with a base value at its path (`messages[].role` in the one element of
    `messages`); a field whose place another already holds as a plain value is left out."""
    body: dict[str, Any] = {}
    for f in sorted(fields, key=lambda f: f.path):
        value = _base_value(f, rules)
        if value is not None:
            _put(body, f.path.split("."), value)
    return body


def _put(container: dict[str, Any], steps: list[str], value: Any) -> None:
    """`value` at the path `steps` of `container`, making its objects and one-element lists on the way."""
    name, is_list = steps[0].removesuffix("[]"), steps[0].endswith("[]")
    if len(steps) == 1 and not is_list:
        container.setdefault(name, value)
        return
    holder = container.setdefault(name, [{}] if is_list else {})
    if is_list and isinstance(holder, list) and holder and isinstance(holder[0], dict):
        holder = holder[0]
    if isinstance(holder, dict) and len(steps) > 1:
        _put(holder, steps[1:], value)


def _base_value(f: WireField, rules: dict) -> Any:
    """What the base request puts in a field: the rules' value by name; else, for a field Ollama always
    sends, its code's first constant or the rules' value for its type. An optional field is left out, as
    Ollama leaves it out (its constants are tried one by one as variants)."""
    if f.path in rules["field_values"]:
        return rules["field_values"][f.path]
    if f.optional:
        return None
    constants = _constants(f)
    return constants[0] if constants else rules["type_values"].get(f.go_type)


def _constants(f: WireField) -> list[Any]:
    """The whole constants of Ollama's code for a field (one the inventory shortened is no value to send)."""
    values = (_decoded(x) for x in f.values)
    return [v for v in values if v is not None and not (isinstance(v, str) and v.endswith("..."))]


NUMBERS = ("int", "int32", "int64", "float32", "float64", "integer", "number")
EDGES = (0, -1)  # what a user may put in a number Ollama forwards unchecked, tried on every such field


def _variants(f: WireField, base: Any, documented: Documented) -> list[tuple[Any, str]]:
    """The other values Ollama can send in a field: its code's constants, the numbers its documentation
    promises for the options the field forwards, and for a number it forwards from its user, 0 and -1."""
    found: list[tuple[Any, str]] = [(v, "a constant of Ollama's code") for v in _constants(f)]
    if f.go_type in NUMBERS and f.forwards:
        for value, says in documented(f.forwards):
            number = _decoded(value)
            if isinstance(number, int | float) and not isinstance(number, bool):
                found.append((number, f"documented: {says}"))
        options = ", ".join(f.forwards)
        found += [(edge, f"a user's value of {options}, forwarded unchecked") for edge in EDGES]
    seen, out = {json.dumps(base)}, []
    for value, why in found:
        if json.dumps(value) not in seen:
            seen.add(json.dumps(value))
            out.append((value, why))
    return out


def _decoded(value: str) -> Any:
    """A quoted constant of the inventory as a value; None for a kind of value ("integer", "string"). A Go
    raw string is quoted as written (`"^blk\\.weight$"`), which JSON does not read: its text is the value."""
    try:
        decoded = json.loads(value)
    except ValueError:
        quoted = len(value) >= 2 and value[0] == value[-1] == '"'
        return value[1:-1] if quoted else None
    return decoded if isinstance(decoded, str | int | float | bool) else None
