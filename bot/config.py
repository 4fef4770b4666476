"""Repository configuration (`.github/llama-bot.toml`, see docs/configuration.md) and ref validation."""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from bot.commands import PREFIX_SHAPE
from bot.markup import code_span
from bot.model import AnalysisError
from bot.repos import buildpatches
from bot.repos.buildpatches import glob_matches, is_glob
from bot.repos.snapshot import Snapshot
from bot.times import KEEP_SECONDS

CONFIG_PATH = ".github/llama-bot.toml"
DEFAULTS_PATH = Path(__file__).with_name("defaults.toml")

_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")
_COMMIT = re.compile(r"[0-9a-fA-F]{40}")
MAX_REF_LENGTH = 100


@dataclass(frozen=True)
class Consumer:
    """Code that compiles against a pin's headers: another pin's upstream at its own pin, with its carried
    patches (`pin`), or Ollama's own code at the head (no `pin`)."""

    sources: tuple[str, ...]  # globs of the consumer's files
    pin: str | None = None


@dataclass(frozen=True)
class Vendored:
    """Upstream files Ollama keeps a copy of: the first of `copies` that exists at the head holds them."""

    upstream: str  # a directory of the pin's upstream
    copies: tuple[str, ...]  # directories of Ollama's tree, one per layout
    files: str = "*"  # which files of the directory are copied

    def name_of(self, path: str) -> str | None:
        """The copy's file name when `path` is an upstream file this entry copies."""
        directory, _, name = path.rpartition("/")
        return name if directory == self.upstream and fnmatchcase(name, self.files) else None


@dataclass(frozen=True)
class Pin:
    name: str
    version_file: str
    patches: str
    upstream: str
    also_watch: tuple[str, ...] = ()
    more_patches: tuple[
        str, ...
    ] = ()  # further directories or globs (`*` within one directory) after `patches`
    review: str = "llama.cpp"  # which upstream review profile runs (REVIEW_PROFILES)
    consumers: tuple[Consumer, ...] = ()
    vendored: tuple[Vendored, ...] = ()
    release_tags: str | None = None  # the pattern of the upstream's release tags, its groups numbers
    bump_every: int | None = None  # seconds between the service's own bumps of this pin; None: never
    track: str | None = None  # the branch whose head a pin holding a commit moves to

    @property
    def patch_sets(self) -> tuple[str, ...]:
        return (self.patches, *self.more_patches)

    def watches(self, path: str, also_watch: bool = True) -> bool:
        """Whether a change to `path` in a PR concerns this pin.

        The service also reacts to `also_watch` paths; the CLI checks only pins whose
        version file or patch directory changed, so it passes False.
        """
        return (
            path == self.version_file
            or any(_holds(entry, path) for entry in self.patch_sets)
            or (also_watch and any(fnmatchcase(path, pattern) for pattern in self.also_watch))
        )


def _holds(entry: str, path: str) -> bool:
    """Whether a patches entry holds `path`: a glob matching it, or a directory above it."""
    return glob_matches(entry, path) if is_glob(entry) else path.startswith(entry + "/")


@dataclass(frozen=True)
class Platform:
    name: str
    workflow: str
    inputs: dict = field(default_factory=dict)
    # dispatched on its own (bot/worker/autovalidate.py): "build" when a bump changes upstream's build, "bump"
    # whenever the head moves a pin; "" never
    auto: str = ""
    report: str = ""  # the artifact of its run holding a probe report, read into the checklist when it ends


@dataclass(frozen=True)
class Dashboard:
    """The pin dashboard: one issue the service keeps, listing how far behind each pin is."""

    enabled: bool = False
    title: str = "llama-bot: pin dashboard"
    label: str = "llama-bot"
    every: int = 6 * 3600  # seconds between refreshes when no upstream moved


@dataclass(frozen=True)
class Config:
    command_prefix: str
    pins: tuple[Pin, ...]
    platforms: tuple[Platform, ...]
    cancel_superseded: bool = False
    rules: dict = field(default_factory=dict)
    dashboard: Dashboard = Dashboard()

    def pin(self, name: str) -> Pin | None:
        return next((p for p in self.pins if p.name == name), None)

    def touched_pins(
        self, changed_paths: Iterable[str] | None, head: Snapshot | None = None, also_watch: bool = True
    ) -> list[Pin]:
        """The pins a change concerns (all of them when `changed_paths` is None): their version files and
        patch directories, `also_watch` paths (the service's; the CLI passes False), and given `head` the
        patches its CMake files apply to them."""
        if changed_paths is None:
            return list(self.pins)
        paths = list(changed_paths)
        return [
            pin
            for pin in self.pins
            if any(pin.watches(p, also_watch) for p in paths) or _applies_one_of(head, pin, set(paths))
        ]


def _applies_one_of(head: Snapshot | None, pin: Pin, paths: set[str]) -> bool:
    """Whether the CMake files of `head` apply one of `paths` to the pin as a patch (none without `head`)."""
    return head is not None and bool(paths & set(buildpatches.patches_for(head, pin.version_file)))


def _expect(value, kind, where: str):
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise AnalysisError(f"{where}: expected {names}, got {type(value).__name__}")
    return value


TOP_KEYS = ("command_prefix", "cancel_superseded", "pin", "platforms", "rules", "dashboard")
DASHBOARD_KEYS = ("enabled", "title", "label", "every")
PIN_KEYS = (
    "name",
    "version_file",
    "patches",
    "upstream",
    "also_watch",
    "review",
    "consumers",
    "vendored",
    "release_tags",
    "bump_every",
    "track",
)
CONSUMER_KEYS = ("pin", "sources")
VENDORED_KEYS = ("upstream", "copies", "files")
REVIEW_PROFILES = ("llama.cpp", "mlx", "mlx-c", "none")


PLATFORM_KEYS = ("workflow", "inputs", "auto", "report")
# `auto` as written -> when the platform is dispatched on its own
AUTO_VALUES: dict[bool | str, str] = {False: "", True: "build", "bump": "bump"}
_PIN_REQUIRED = {"name": str, "version_file": str, "patches": (str, list), "upstream": str}  # key -> its type


def _required(raw: dict, key: str, where: str) -> object:
    """The value of a key the table must have; its absence named in the error."""
    if key not in raw:
        raise AnalysisError(f"{where}: missing key '{key}'")
    return raw[key]


def reject_unknown(raw: dict, known: Collection[str], where: str) -> None:
    """A misspelt key would otherwise be ignored and the default used: name it and its nearest valid key."""
    for key in sorted(set(raw) - set(known)):
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
        hint = f"did you mean {code_span(close[0])}?" if close else f"known keys: {', '.join(sorted(known))}"
        name = f"{where} {key}" if where.endswith(":") else f"{where}.{key}"
        raise AnalysisError(f"{name}: unknown key ({hint})")


def parse_config(text: str | None, source: str = CONFIG_PATH) -> Config:
    """Defaults merged with the repository's file; every bad key is named in the error."""
    defaults = tomllib.loads(DEFAULTS_PATH.read_text())
    data = _toml(text, source) if text is not None else {}
    reject_unknown(data, TOP_KEYS, f"{source}:")
    merged = {**defaults, **data}
    prefix = _command_prefix(merged, source)
    pins = _pins(merged, source)
    _check_consumers(pins, source)
    platforms = [
        _platform(name, raw, f"{source}: platforms.{name}")
        for name, raw in _expect(merged.get("platforms", {}), dict, f"{source}: platforms").items()
    ]
    cancel = _expect(merged.get("cancel_superseded", False), bool, f"{source}: cancel_superseded")
    rules = _expect(data.get("rules", {}), dict, f"{source}: rules")
    for rule_id, rule in rules.items():  # checked here so the message names the file like the others
        _expect(rule, dict, f"{source}: rules.{rule_id}")
    dashboard = _dashboard(merged.get("dashboard", {}), f"{source}: dashboard")
    return Config(prefix, tuple(pins), tuple(platforms), cancel, rules, dashboard)


MAX_TITLE = 200  # characters of the dashboard issue's title
MAX_LABEL = 50  # GitHub's limit on a label's name


def _dashboard(raw: object, where: str) -> Dashboard:
    """The `[dashboard]` table: off unless `enabled = true`."""
    _expect(raw, dict, where)
    assert isinstance(raw, dict)
    reject_unknown(raw, DASHBOARD_KEYS, where)
    default = Dashboard()
    title = _expect(raw.get("title", default.title), str, f"{where}.title").strip()
    label = _expect(raw.get("label", default.label), str, f"{where}.label").strip()
    if not title or len(title) > MAX_TITLE:
        raise AnalysisError(f"{where}.title: must be 1 to {MAX_TITLE} characters")
    if not label or len(label) > MAX_LABEL or "," in label:
        raise AnalysisError(f"{where}.label: must be 1 to {MAX_LABEL} characters, without a comma")
    every = _duration(raw.get("every", "6h"), f"{where}.every")
    return Dashboard(
        _expect(raw.get("enabled", False), bool, f"{where}.enabled"), title, label, every or default.every
    )


def _toml(text: str, source: str) -> dict:
    """The repository's file as TOML; its syntax error named in ours."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalysisError(f"{source}: not valid TOML ({exc})") from None


def _command_prefix(merged: dict, source: str) -> str:
    """The configured command prefix, checked against the shape commands are read in."""
    prefix = _expect(merged["command_prefix"], str, f"{source}: command_prefix")
    if not PREFIX_SHAPE.match(prefix):
        raise AnalysisError(
            f'{source}: command_prefix {prefix!r} must be `/` or `!` and a word, like "/llama"'
        )
    return prefix


def _pins(merged: dict, source: str) -> list[Pin]:
    """The configured pins, in order; a name given twice is an error."""
    pins: list[Pin] = []
    for i, raw in enumerate(_expect(merged.get("pin", []), list, f"{source}: pin")):
        pin = _pin(raw, f"{source}: pin[{i}]")
        if any(p.name == pin.name for p in pins):
            raise AnalysisError(f"{source}: pin[{i}].name: a pin named {pin.name!r} is already configured")
        pins.append(pin)
    return pins


def _patch_entries(raw: dict, where: str) -> list[str]:
    entries = raw["patches"] if isinstance(raw["patches"], list) else [raw["patches"]]
    if not entries:
        raise AnalysisError(f"{where}.patches: must name a directory, got []")
    for entry in entries:
        _expect(entry, str, f"{where}.patches")
        if not entry.strip("/"):
            # An empty directory would make every path in the repository a "patch path".
            raise AnalysisError(f"{where}.patches: must name a directory, got {entry!r}")
    return entries


def _pin(raw: object, where: str) -> Pin:
    _expect(raw, dict, where)
    assert isinstance(raw, dict)
    reject_unknown(raw, PIN_KEYS, where)
    for key, kind in _PIN_REQUIRED.items():
        _expect(_required(raw, key, where), kind, f"{where}.{key}")
    entries = _patch_entries(raw, where)
    profile = _review_profile(raw, where)
    watch = _expect(raw.get("also_watch", []), list, f"{where}.also_watch")
    return Pin(
        raw["name"],
        raw["version_file"],
        entries[0].rstrip("/"),
        raw["upstream"],
        tuple(_expect(w, str, f"{where}.also_watch") for w in watch),
        tuple(e.rstrip("/") for e in entries[1:]),
        profile,
        _consumers(raw.get("consumers", []), f"{where}.consumers"),
        _vendored(raw.get("vendored", []), f"{where}.vendored"),
        _release_tags(raw.get("release_tags"), f"{where}.release_tags"),
        _duration(raw.get("bump_every"), f"{where}.bump_every"),
        _track(raw.get("track"), f"{where}.track"),
    )


MAX_PATTERN_LENGTH = 200


def _release_tags(value: object, where: str) -> str | None:
    """A regular expression a release tag matches whole, with at least one group: the numbers that order
    the releases (`b(\\d+)`, `v(\\d+)\\.(\\d+)\\.(\\d+)`)."""
    if value is None:
        return None
    pattern = _expect(value, str, where)
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise AnalysisError(f"{where}: longer than {MAX_PATTERN_LENGTH} characters")
    try:
        groups = re.compile(pattern).groups
    except re.error as exc:
        raise AnalysisError(f"{where}: {pattern!r} is not a regular expression ({exc})") from None
    if not groups:
        raise AnalysisError(
            f"{where}: {pattern!r} has no group: put the numbers that order releases in groups, "
            'like "b(\\\\d+)"'
        )
    return pattern


_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")


def _track(value: object, where: str) -> str | None:
    """A branch name git would take: letters, digits, `.`, `_`, `/`, `-`, no `..`, at most 100 characters."""
    if value is None:
        return None
    name = _expect(value, str, where)
    if not _BRANCH.fullmatch(name) or ".." in name or name.endswith((".lock", "/", ".")):
        raise AnalysisError(f"{where}: {name!r} is not a branch name")
    return name


_DURATION = re.compile(r"(\d+)\s*([dhm])")
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60}
MIN_BUMP_EVERY = 3600  # seconds: the upstream is asked for its tags at most this often per pin
MAX_BUMP_EVERY = KEEP_SECONDS  # the job store remembers that a period's scheduled bump was queued this long


def _duration(value: object, where: str) -> int | None:
    """`"7d"`, `"12h"` or `"90m"` as seconds; an hour at least, 30 days at most."""
    if value is None:
        return None
    text = _expect(value, str, where)
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise AnalysisError(f'{where}: {text!r} is not a duration like "7d", "12h" or "90m"')
    seconds = int(found[1]) * _UNIT_SECONDS[found[2]]
    if seconds < MIN_BUMP_EVERY:
        raise AnalysisError(f"{where}: {text!r} is shorter than an hour")
    if seconds > MAX_BUMP_EVERY:
        raise AnalysisError(f"{where}: {text!r} is longer than {MAX_BUMP_EVERY // 86400} days")
    return seconds


def _review_profile(raw: dict, where: str) -> str:
    """The pin's review profile: as given, else the one named like the pin, else llama.cpp's."""
    profile = _expect(
        raw.get("review", raw["name"] if raw["name"] in REVIEW_PROFILES else "llama.cpp"),
        str,
        f"{where}.review",
    )
    if profile not in REVIEW_PROFILES:
        raise AnalysisError(f"{where}.review: {profile!r} is not one of {', '.join(REVIEW_PROFILES)}")
    return profile


def _check_consumers(pins: list[Pin], source: str) -> None:
    names = {p.name for p in pins}
    for i, pin in enumerate(pins):
        for j, consumer in enumerate(pin.consumers):
            if consumer.pin is not None and consumer.pin not in names - {pin.name}:
                raise AnalysisError(
                    f"{source}: pin[{i}].consumers[{j}].pin: {consumer.pin!r} is not another "
                    f"configured pin (pins: {', '.join(sorted(names))})"
                )


def _platform(name: str, raw: object, where: str) -> Platform:
    _expect(raw, dict, where)
    assert isinstance(raw, dict)
    reject_unknown(raw, PLATFORM_KEYS, where)
    workflow = _required(raw, "workflow", where)
    inputs = _expect(raw.get("inputs", {}), dict, f"{where}.inputs")
    auto = AUTO_VALUES.get(raw.get("auto", False)) if isinstance(raw.get("auto", False), bool | str) else None
    if auto is None:
        shown = repr(raw["auto"])
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise AnalysisError(f'{where}.auto: expected true, false or "bump", got {shown}')
    workflow = _expect(workflow, str, f"{where}.workflow")
    report = _expect(raw.get("report", ""), str, f"{where}.report")
    if report and not re.fullmatch(r"[A-Za-z0-9._-]{1,100}", report):
        raise AnalysisError(f"{where}.report: an artifact name of letters, digits, '.', '_' and '-'")
    return Platform(name, workflow, {k: str(v) for k, v in inputs.items()}, auto, report)


def _strings(value: object, where: str) -> tuple[str, ...]:
    items = _expect(value, list, where)
    if not items:
        raise AnalysisError(f"{where}: must name at least one path, got []")
    return tuple(_expect(item, str, where).rstrip("/") for item in items)


def _consumers(value: object, where: str) -> tuple[Consumer, ...]:
    found = []
    for j, raw in enumerate(_expect(value, list, where)):
        at = f"{where}[{j}]"
        _expect(raw, dict, at)
        reject_unknown(raw, CONSUMER_KEYS, at)
        sources = _required(raw, "sources", at)
        pin = _expect(raw["pin"], str, f"{at}.pin") if "pin" in raw else None
        found.append(Consumer(_strings(sources, f"{at}.sources"), pin))
    return tuple(found)


def _vendored(value: object, where: str) -> tuple[Vendored, ...]:
    found = []
    for j, raw in enumerate(_expect(value, list, where)):
        at = f"{where}[{j}]"
        _expect(raw, dict, at)
        reject_unknown(raw, VENDORED_KEYS, at)
        given, copies = _required(raw, "upstream", at), _required(raw, "copies", at)
        upstream = _expect(given, str, f"{at}.upstream").strip("/")
        if not upstream:
            raise AnalysisError(f"{at}.upstream: must name a directory, got {given!r}")
        found.append(
            Vendored(
                upstream,
                _strings(copies, f"{at}.copies"),
                _expect(raw.get("files", "*"), str, f"{at}.files"),
            )
        )
    return tuple(found)


def load_config(snapshot: Snapshot) -> Config:
    raw = snapshot.read(CONFIG_PATH)
    if raw is None:
        return parse_config(None)
    return parse_config(_utf8(raw, f"{CONFIG_PATH}: not UTF-8 text"))


def _utf8(raw: bytes, error: str) -> str:
    """The bytes as UTF-8 text; an AnalysisError saying `error` when they are not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AnalysisError(error) from None


def validate_ref(value: str, where: str) -> str:
    """A tag name or a 40-hex commit id, safe to hand to git; else one line naming the file."""
    if not value:
        raise AnalysisError(f"{where} is empty: it must hold an upstream tag (e.g. b10488) or a commit id")
    if not _is_ref(value):
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise AnalysisError(f"{where} holds {shown!r}, which is not an upstream tag or a 40-hex commit id")
    # git object ids are lower case; `git rev-parse` output pasted in upper case is the same id
    return value.lower() if _COMMIT.fullmatch(value) else value


def _is_ref(value: str) -> bool:
    """Whether `value` is a commit id, or a tag name git takes as a ref name and not as a range or path."""
    return (
        len(value) <= MAX_REF_LENGTH
        and bool(_COMMIT.fullmatch(value) or _TAG.fullmatch(value))
        and ".." not in value
        and not value.endswith((".lock", "/", "."))
        and "//" not in value
    )


def read_version(snapshot: Snapshot, path: str) -> str | None:
    """The ref named by a version file; None when the file does not exist at this revision."""
    raw = snapshot.read(path)
    if raw is None:
        return None
    text = _utf8(raw, f"{path} is not text: it must hold an upstream tag or a commit id")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        raise AnalysisError(f"{path} holds {len(lines)} lines: it must hold exactly one upstream ref")
    return validate_ref(next(iter(lines), ""), path)
