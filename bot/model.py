"""Plain data shared by the engine, the review, the checklist and the service.

Everything here is JSON-shaped (the report of docs/report.md) so that a report can be
stored, diffed and rendered without the objects that produced it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import metadata

REBUILT = (
    "regenerated",
    "fuzzy",
)  # the statuses with a rebuilt patch: `check --out` writes it, the bot commits it
UNRESOLVED = ("conflict", "error", "upstreamed")  # the statuses a person must resolve: no patch was rebuilt
NEEDS_CHANGE = {*REBUILT, *UNRESOLVED}
SEVERITY_ORDER = {"high": 0, "medium": 1, "info": 2}
MAX_BROUGHT = 500  # the upstream commits a pin's report lists; the count says how many there are


@cache
def bot_version() -> str:
    """The installed llama-bot's version (its package metadata); "unknown" run from a tree never installed."""
    try:
        return metadata.version("llama-bot")
    except metadata.PackageNotFoundError:
        return "unknown"


class AnalysisError(Exception):
    """The analysis could not run (bad ref, unreadable config, ...): one line for the user."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    url: str


@dataclass(frozen=True)
class LocalRef:
    path: str
    line: int


@dataclass(frozen=True)
class BuildChange:
    """An upstream file of Ollama's build that a bump changes: a CMake file its build reads, or the code of a
    tool or generator those files run; the commits between the refs that touched it (a few, newest first)."""

    path: str
    commits: tuple[Commit, ...] = ()


@dataclass
class HunkResult:
    file: str
    old_line: int
    new_line: int  # for a conflict: the best candidate, else where it was expected
    status: str  # clean|offset|merged|relocated|conflict
    upstream_commits: list[Commit] = field(default_factory=list)
    detail: str = ""
    patch_line: int = 0  # not in the JSON: where the hunk's header is in the patch file


@dataclass(frozen=True)
class Doubt:
    """What a patch that applies as it is may no longer mean (its added lines name what upstream removed):
    evidence for a finding, never a status."""

    note: str
    upstream_path: str
    upstream_line: int
    patch_line: int  # the header line of the hunk that names it, in the patch file
    severity: str  # high: the build fails on it (a name upstream renamed); medium: its meaning may have moved
    commits: tuple[Commit, ...] = ()


@dataclass
class PatchResult:
    path: str
    status: str
    message: str
    regenerated: str | None = None
    hunks: list[HunkResult] = field(default_factory=list)
    new_text: bytes | None = None  # the rewritten patch text; not in the JSON report
    doubts: list[Doubt] = field(default_factory=list)  # not in the JSON: they become the pin's findings

    def to_json(self) -> dict:
        """The report's keys (docs/report.schema.json); the explanations are in the markdown and check runs."""
        data = asdict(self)
        data.pop("new_text")
        data.pop("doubts")
        for hunk in data["hunks"]:
            hunk.pop("patch_line")
            hunk.pop("detail")
        return data


@dataclass
class Finding:
    area: str  # build|discovery|server|streaming|models|patch-context
    severity: str  # high|medium|info
    title: str
    detail: str
    upstream_path: str
    upstream_line: int | None
    upstream_commits: list[Commit] = field(default_factory=list)
    local_refs: list[LocalRef] = field(default_factory=list)
    check: str = ""  # the id of the check that raised it: a review check's, or the engine's own

    def to_json(self) -> dict:
        """The finding's keys in the report; a finding about a file gone upstream has line 0."""
        return {**asdict(self), "upstream_line": self.upstream_line or 0}

    @property
    def key(self) -> tuple:
        """Identity for merging duplicates and for stable checklist ids."""
        return (self.area, self.title, self.upstream_path)


@dataclass
class PinReport:
    name: str
    version_file: str
    old_ref: str | None
    new_ref: str | None
    old_commit: str | None = None
    new_commit: str | None = None
    compare_url: str | None = None
    commit_count: int = 0  # upstream commits the bump brings (old..new)
    reverted_count: int = (
        0  # upstream commits it takes away (new..old): a downgrade, or a move to a side branch
    )
    error: str | None = None  # why this pin could not be checked; then there are no patches or findings
    # the upstream build files the bump changes that Ollama's build uses: a build is worth running (not in JSON)
    build_changes: list[BuildChange] = field(default_factory=list)
    patch_source: str = (
        ""  # how the patches were found ("from cmake/local.cmake:199, PATCH_COMMAND git apply"; not in JSON)
    )
    # without patches: what the build applies to it and beside its directory (not in JSON)
    build_note: str = ""
    # (id, text) of the "Before merging" steps read from the tree at the head; None: the pin's steps are
    # llama.cpp's (not in JSON)
    build_steps: list[tuple[str, str]] | None = None
    patches: list[PatchResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # the upstream commits the bump brings (old..new), newest first, at most MAX_BROUGHT (not in JSON)
    brought: list[Commit] = field(default_factory=list)
    # when the old and new commits were made (committer time, seconds since the epoch; not in JSON)
    old_time: int | None = None
    new_time: int | None = None
    # what of the pin could not be checked (a consumer pin unreadable, upstream files a fetch could not get),
    # one line each: said in the verdict, never read as nothing found
    unchecked: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The report's keys (docs/report.schema.json)."""
        counts = (
            "patches",
            "findings",
            "commit_count",
            "reverted_count",
            "build_changes",
            "patch_source",
            "build_note",
            "build_steps",
            "brought",
            "old_time",
            "new_time",
        )
        data = {k: v for k, v in asdict(self).items() if k not in counts}
        data["patches"] = [p.to_json() for p in self.patches]
        data["findings"] = [f.to_json() for f in self.findings]
        return data


# check --fail-on: the finding severities that fail a run besides a patch needing a change
FAIL_ON_SEVERITIES: dict[str, frozenset[str]] = {
    "patches": frozenset(),
    "high": frozenset({"high"}),
    "medium": frozenset({"high", "medium"}),
}


@dataclass
class Report:
    pins: list[PinReport] = field(default_factory=list)  # the pins that were checked
    failed: list[PinReport] = field(default_factory=list)  # the pins that could not be, each with its error
    base: str | None = None  # the Ollama commits compared; None for a tree no commit holds (a bump's edit)
    head: str | None = None

    def to_json(self) -> dict:
        return {
            "version": bot_version(),
            "base": self.base,
            "head": self.head,
            "pins": [p.to_json() for p in [*self.pins, *self.failed]],
        }

    def pin(self, name: str) -> PinReport | None:
        """The checked pin of that name."""
        return next((p for p in self.pins if p.name == name), None)

    @property
    def build_changes(self) -> list[BuildChange]:
        """Every checked pin's upstream build files that the bump changes."""
        return [c for pin in self.pins for c in pin.build_changes]

    @property
    def needs_change(self) -> bool:
        return any(p.status in NEEDS_CHANGE for pin in self.pins for p in pin.patches)

    def exit_status(self, fail_on: str = "patches") -> int:
        """`check`'s exit status: 2 when a pin, or something of one, could not be checked; 1 when it fails
        on `fail_on`; else 0."""
        if self.failed or self.unchecked:
            return 2
        return 1 if self.fails(fail_on) else 0

    def fails(self, fail_on: str) -> bool:
        """Whether a CI gating on `fail_on` ("patches", "high" or "medium") should fail: a patch needs a
        change, or (with "high"/"medium") a finding of that severity or graver exists."""
        graver = FAIL_ON_SEVERITIES[fail_on]
        return self.needs_change or any(f.severity in graver for pin in self.pins for f in pin.findings)

    @property
    def unchecked(self) -> list[tuple[str, str]]:
        """(pin, what) for everything of a checked pin that could not be checked."""
        return [(pin.name, line) for pin in self.pins for line in pin.unchecked]

    @property
    def unresolved(self) -> list[PatchResult]:
        """The patches a person must resolve (no rebuilt text could be written)."""
        return [p for pin in self.pins for p in pin.patches if p.status in UNRESOLVED]
