"""The contract inventory as plain data: what of upstream's behaviour Ollama's code relies on, each with where."""

from __future__ import annotations

from dataclasses import dataclass

from bot.model import LocalRef


def _refs(refs: tuple[LocalRef, ...]) -> list[dict]:
    return [{"path": r.path, "line": r.line} for r in refs]


@dataclass(frozen=True)
class OutputPattern:
    """A constant Ollama compares with what an upstream program printed or answered."""

    kind: str  # substring, prefix, suffix, separator, equals, equals (any case), regexp
    value: str
    sources: tuple[str, ...]  # what the compared value was read from: "llama-server stderr", "POST /x stream"
    ref: LocalRef  # where the constant is written
    used_at: tuple[LocalRef, ...]  # where it is compared
    expressions: tuple[str, ...]  # the compared values, as the code writes them

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "value": self.value,
            "sources": list(self.sources),
            "path": self.ref.path,
            "line": self.ref.line,
            "used_at": _refs(self.used_at),
            "compared": list(self.expressions),
        }


@dataclass(frozen=True)
class LaunchSetting:
    """A flag or environment variable Ollama gives an upstream program it starts."""

    program: str
    kind: str  # flag, env
    name: str
    values: tuple[str, ...]  # constants JSON-quoted; otherwise what kind of value (integer, string, ...)
    always: bool  # given on every start; otherwise the program's own default applies when it is not
    refs: tuple[LocalRef, ...]

    def to_json(self) -> dict:
        return {
            "program": self.program,
            "kind": self.kind,
            "name": self.name,
            "values": list(self.values),
            "always": self.always,
            "refs": _refs(self.refs),
        }


@dataclass(frozen=True)
class WireField:
    """A JSON field of a request Ollama sends to an upstream program, or of a response or stream chunk it
    decodes."""

    endpoint: str  # METHOD /path
    direction: str  # request, response, stream
    path: str  # dotted, `[]` for a list's elements: messages[].content
    go_type: str
    values: tuple[str, ...]  # requests: what Ollama's code can put there, as far as it says
    optional: bool  # requests: left out on some paths or when zero (upstream's default applies then)
    ref: LocalRef
    # requests: the JSON names of the fields of Ollama's own structs whose values this one forwards (an API
    # option's documented values reach upstream through it)
    forwards: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "endpoint": self.endpoint,
            "direction": self.direction,
            "field": self.path,
            "go_type": self.go_type,
            "values": list(self.values),
            "optional": self.optional,
            "forwards": list(self.forwards),
            "path": self.ref.path,
            "line": self.ref.line,
        }


@dataclass(frozen=True)
class Behaviour:
    """A sampler, tokenizer or chat-template behaviour Ollama sets, or leaves to upstream's default."""

    area: str  # sampler, tokenizer, template
    subject: str  # "flag --jinja", "field temperature of POST /completion"
    setting: str  # what Ollama does: the values it sets, or that upstream's default applies
    refs: tuple[LocalRef, ...]

    def to_json(self) -> dict:
        return {"area": self.area, "subject": self.subject, "setting": self.setting, "refs": _refs(self.refs)}


@dataclass(frozen=True)
class BuildItem:
    """Something Ollama's build configuration relies on upstream's build having: an option it sets, a preset
    it runs, a target it builds, installs or links into, a package or program it looks for."""

    kind: str  # option, preset, target, package, program, tool
    name: str
    value: str
    refs: tuple[LocalRef, ...]

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "value": self.value, "refs": _refs(self.refs)}


GROUPS = (
    ("output_patterns", "Output patterns"),
    ("launch", "Launch flags and environment"),
    ("request_fields", "Request fields"),
    ("response_fields", "Response and stream fields"),
    ("behaviours", "Sampler, tokenizer and template"),
    ("build", "Build"),
)


@dataclass(frozen=True)
class Inventory:
    """Everything of upstream's behaviour Ollama's code at one revision relies on, by group."""

    output_patterns: tuple[OutputPattern, ...]
    launch: tuple[LaunchSetting, ...]
    request_fields: tuple[WireField, ...]
    response_fields: tuple[WireField, ...]
    behaviours: tuple[Behaviour, ...]
    build: tuple[BuildItem, ...]

    def sizes(self) -> dict[str, int]:
        return {key: len(getattr(self, key)) for key, _ in GROUPS}

    def to_json(self) -> dict:
        return {key: [entry.to_json() for entry in getattr(self, key)] for key, _ in GROUPS}
