"""The PR checklist and check-run texts: pure functions of the report, rendered from templates/.

Every checkbox carries a stable id in an HTML comment, so a box a person
ticked stays ticked when the comment is rendered again. The bot ticks only
what it checked itself; the rest is the maintainer's to tick.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

import jinja2

from bot.model import REBUILT, SEVERITY_ORDER, Commit, Finding, PatchResult, PinReport, Report

MARKER = "<!-- llama-bot:checklist -->"
RUNNING = "<!-- llama-bot:running -->"  # in the comment while a run is under way
HEADING = "## 🦙 llama-bot: upstream bump checklist"
COMMENT_LIMIT = 65536
BANNER_ROOM = 1000  # a comment's checklist leaves this much of the limit for a re-checking or failure banner
CHECK_TEXT_LIMIT = 65535
ANNOTATIONS_PER_REQUEST = 50
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
BUILD_TRIGGERS = (
    "llama/compat/**.c",
    "llama/compat/**.cc",
    "llama/compat/**.cpp",
    "llama/compat/**.h",
    "llama/compat/**.hpp",
    "*/models/*.patch",
    "llama/server/CMakeLists.txt",
    "cmake/local.cmake",
)
PLATFORM_LABELS = {
    "metal": "Metal on macOS arm64",
    "cuda": "CUDA on Linux and Windows",
    "rocm": "ROCm on Linux and Windows",
    "vulkan": "Vulkan on Linux and Windows",
    "windows": "Windows (CPU and GPU runners)",
    "mlx-metal": "MLX Metal on macOS arm64",
    "mlx-cuda": "MLX CUDA on Linux",
}
STATUS_ICON = {
    "clean": "✅",
    "offset": "✅",
    "regenerated": "🔁",
    "fuzzy": "⚠️",
    "conflict": "❌",
    "upstreamed": "🗑️",
    "error": "⛔",
}
APPLIES = ("clean", "offset")  # the committed patch applies as it is
REGENERATED_DIR = "/tmp/llama-bot-regenerated"  # where the reproduce steps have `check --out` write
_TICKED = re.compile(r"^\s*[-*] \[[xX]\] .*?<!-- id:([\w.:-]+) -->", re.MULTILINE)
_RESULTS = re.compile(r"^<!-- llama-bot:results ([0-9a-f]{7,40}) -->$", re.MULTILINE)

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_env.globals.update(icon=STATUS_ICON, heading=HEADING)


def render_template(name: str, **context) -> str:
    """Any of templates/: the one jinja environment every comment, reply and check-run text is made with."""
    return _env.get_template(name).render(**context)


@dataclass
class Item:
    id: str
    text: str
    done: bool = False  # ticked by the bot from the report (rendered with `auto`, not read back)
    ticked: bool = False  # ticked by a person in an earlier version of the comment
    by_bot: bool = False  # only the bot's own check ticks it: a person's tick is neither shown nor read back

    @property
    def checked(self) -> bool:
        return self.done if self.by_bot else self.done or self.ticked

    @property
    def auto(self) -> bool:
        """Rendered with `auto` after its id, so that reading the comment back does not take it for a person's."""
        return self.by_bot or (self.done and not self.ticked)


@dataclass(frozen=True)
class HunkNote:
    """One line of a patch's details: where a hunk (or several with the same reason) went, and why."""

    file: str
    old_lines: tuple[int, ...]
    text: str
    commits: tuple[Commit, ...] = ()

    @property
    def where(self) -> str:
        lines = ", ".join(str(n) for n in self.old_lines)
        return f"hunk{'s' if len(self.old_lines) > 1 else ''} at old line{'s' if len(self.old_lines) > 1 else ''} {lines}"


@dataclass
class PinView:
    """What the checklist shows of one checked pin."""

    report: PinReport
    commits: str
    rows: list[tuple[PatchResult, str]]  # (patch, its one-line status)
    # patch path -> the hunks that need explaining, for the patches that need a change
    notes: dict[str, list[HunkNote]]
    reproduce: list[str]
    patch_dir: str | None

    @property
    def details(self) -> list[tuple[PatchResult, list[HunkNote]]]:
        return [(p, self.notes[p.path]) for p in self.report.patches if p.path in self.notes]


@dataclass
class Checklist:
    pins: list[PinView]
    failed: list[PinReport]  # pins that could not be checked, each with its error
    verdict: str
    steps: list[Item]
    review: list[tuple[str, list[tuple[Item, Finding]]]]  # (severity heading, items): high, then medium
    info: list[Finding]
    platforms: list[Item]
    platform_rows: list[dict] = field(default_factory=list)
    folded: int = 0


def finding_id(finding: Finding) -> str:
    return "finding-" + hashlib.sha1(repr(finding.key).encode()).hexdigest()[:10]


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def commits_text(pin: PinReport) -> str:
    """How far the bump moves upstream; a downgrade says how many commits it takes away."""
    added, reverted = pin.commit_count, pin.reverted_count
    if reverted and not added:
        return f"downgrade: {_plural(reverted, 'upstream commit')} reverted"
    if reverted:
        return (
            f"{_plural(added, 'upstream commit')} added and {reverted} reverted "
            "(the new ref does not descend from the old one)"
        )
    if not added:
        return "no upstream change"
    return _plural(added, "upstream commit")


def patch_status(patch: PatchResult, prefix: str) -> str:
    """The table's one-line status of a patch; the details say the specifics."""
    moved = [h for h in patch.hunks if h.status == "offset"]
    failed = [h for h in patch.hunks if h.status == "conflict"]
    if patch.status == "clean":
        return "applies exactly as it is"
    if patch.status == "offset":
        return f"applies as it is, {len(moved)} of {len(patch.hunks)} hunks at shifted lines"
    if patch.status == "regenerated":
        return f"rebuilt by a clean three-way merge: `{prefix} regenerate-patches` commits it"
    if patch.status == "fuzzy":
        return f"rebuilt with tolerance: review it, `{prefix} regenerate-patches` commits it"
    if patch.status == "conflict" and failed:
        return f"{len(failed)} of {len(patch.hunks)} hunks conflict: rebase it by hand"
    message = patch.message.rstrip(".")
    return message[:1].lower() + message[1:]


def hunk_notes(patch: PatchResult) -> list[HunkNote]:
    """The hunks that did not apply as they are; conflicting hunks with one reason are one note."""
    notes: list[HunkNote] = []
    for h in patch.hunks:
        if h.status in APPLIES:
            if h.detail:  # a question about a hunk that applies (upstream duplicated the hooked code)
                notes.append(HunkNote(h.file, (h.old_line,), h.detail, tuple(h.upstream_commits)))
            continue
        if h.status == "merged":
            text = f"merged, now at line {h.new_line}"
        elif h.status == "relocated":
            text = f"relocated to line {h.new_line}" + (f" ({h.detail})" if h.detail else "")
        else:
            text = (h.detail or h.status).removeprefix(f"{h.file}: ")
        same = next(
            (i for i, n in enumerate(notes) if h.status == "conflict" and (n.file, n.text) == (h.file, text)),
            None,
        )
        if same is None:
            notes.append(HunkNote(h.file, (h.old_line,), text, tuple(h.upstream_commits)))
        else:
            n = notes[same]
            commits = n.commits + tuple(c for c in h.upstream_commits if c not in n.commits)
            notes[same] = HunkNote(n.file, (*n.old_lines, h.old_line), text, commits)
    return notes


def _fetch_spec(ref: str) -> str:
    return ref if re.fullmatch(r"[0-9a-f]{40}", ref) else f"tag {ref}"


def reproduce_steps(pin: PinReport, committed: Collection[str] = ()) -> list[str]:
    """Shell steps that stack the pin's patches on its new ref the way the check did, through every conflict.

    Upstream comes from a shallow fetch of the two refs, never a full clone: the old ref holds the blobs
    `git apply --3way` merges from, and the CLI the README installs rebuilds the earlier patches from the
    same fetch (`check --upstream-dir`), writing them where `--out` says. Rebuilt patches already
    `committed` to the branch are read from the checkout like the others.
    """
    conflicts = [i for i, p in enumerate(pin.patches) if p.status == "conflict"]
    if not conflicts or not pin.compare_url or not pin.new_ref:
        return []
    stack = pin.patches[: conflicts[-1] + 1]
    url = pin.compare_url.split("/compare/")[0]
    refs = list(dict.fromkeys(r for r in (pin.old_ref, pin.new_ref) if r))
    work = "/tmp/" + re.sub(r"[^A-Za-z0-9._-]", "_", f"{pin.name}-{pin.new_ref[:12]}")
    rebuilt = [p for p in stack if p.status in REBUILT and (p.regenerated or p.path) not in committed]
    steps = [
        "# OLLAMA: a checkout of this branch"
        + ("; LLAMA_BOT: a llama-bot checkout set up by `make test`" if rebuilt else ""),
        f"git init -q {work} && cd {work}",
        f"git fetch -q --depth 1 {url} {' '.join(_fetch_spec(r) for r in refs)}",
    ]
    if rebuilt:
        steps.append(
            f'"$LLAMA_BOT/.venv/bin/python" -m bot check --repo "$OLLAMA" --upstream-dir {pin.name}={work} '
            f"--out {REGENERATED_DIR} > /dev/null  # writes the rebuilt patches"
        )
    steps.append(f"git checkout -q {pin.new_ref}")
    for p in stack:
        if p.status in APPLIES or (p.status in REBUILT and p not in rebuilt):
            steps.append(f'git apply --index "$OLLAMA/{p.regenerated or p.path}"')
        elif p.status in REBUILT:
            steps.append(f"git apply --index {REGENERATED_DIR}/{p.regenerated or p.path}")
        elif p.status == "conflict":
            steps.append(
                f'git apply --check "$OLLAMA/{p.path}"  # conflict (see above); --3way leaves markers'
            )
        else:
            steps.append(f"# skipped: {p.path} ({p.status})")
    return steps


def pin_view(pin: PinReport, prefix: str, patch_dir: str | None, committed: Collection[str] = ()) -> PinView:
    rows = [(p, patch_status(p, prefix)) for p in pin.patches]
    notes = {p.path: found for p in pin.patches if (found := hunk_notes(p))}
    return PinView(pin, commits_text(pin), rows, notes, reproduce_steps(pin, committed), patch_dir)


def review_findings(pin: PinReport) -> list[Finding]:
    """The pin's findings without those about nearby upstream changes to a patch the table already flags:
    such a patch gets rebuilt, rebased or dropped, which is the closer look the finding asks for."""
    flagged = {p.path for p in pin.patches if p.status not in APPLIES}
    return [
        f
        for f in pin.findings
        if not (f.area == "patch-context" and any(r.path in flagged for r in f.local_refs))
    ]


def _touches_build(changed: Iterable[str], report: Report) -> bool:
    """Ollama's build changes: rebuilt patches, its own build files or compat sources, or upstream CMake."""
    if any(p.status in REBUILT for pin in report.pins for p in pin.patches):
        return True
    if any(pin.cmake_changed for pin in report.pins):
        return True
    return any(fnmatchcase(path, pattern) for path in changed for pattern in BUILD_TRIGGERS)


def _steps(report: Report, changed: list[str]) -> list[Item]:
    steps = [
        Item(
            f"patches-apply-{pin.name}",
            f"The committed {pin.name} patches apply to `{pin.new_ref}` in apply order (checked by llama-bot)",
            done=all(p.status in APPLIES for p in pin.patches),
            by_bot=True,
        )
        for pin in report.pins
        if pin.patches
    ]
    llama_cpp, mlx = _bumped(report)
    if llama_cpp:
        steps += _llama_cpp_steps(report, changed)
    if mlx:
        steps += _mlx_steps()
    steps.append(Item("go-test", "Run `go test ./...`"))
    return steps


MLX_PINS = ("mlx", "mlx-c")  # a bump of only these gets the MLX build steps and none of llama.cpp's


def _bumped(report: Report) -> tuple[bool, bool]:
    """(llama.cpp, MLX): which builds the report's pins concern; a report of no pin concerns llama.cpp."""
    mlx = any(pin.name in MLX_PINS for pin in report.pins)
    return not mlx or any(pin.name not in MLX_PINS for pin in report.pins), mlx


def _default_platforms(report: Report) -> list[Item]:
    """Before anything was dispatched: the platforms that build what the bump changed."""
    llama_cpp, mlx = _bumped(report)
    return [
        Item(f"platform-{name}", label)
        for name, label in PLATFORM_LABELS.items()
        if (mlx if name.startswith("mlx-") else llama_cpp)
    ]


def _mlx_steps() -> list[Item]:
    """The MLX presets and superbuild targets of Ollama's CI (CMakePresets.json, .github/workflows/test.yaml)."""
    return [
        Item(
            "mlx-metal",
            "On macOS, configure and build the MLX Metal backends "
            "(`cmake --preset 'MLX Metal' && cmake --build --preset 'MLX Metal'`)",
        ),
        Item(
            "mlx-cuda",
            "Build the `MLX CUDA 13` backend as CI does (`cmake -S . -B build/local-superbuild-mlx-cuda_v13 "
            "-DOLLAMA_MLX_BACKENDS=cuda_v13`, then `cmake --build build/local-superbuild-mlx-cuda_v13 "
            "--target ollama-mlx-cuda_v13`)",
        ),
        Item(
            "mlx-bindings",
            "Refresh the vendored mlx-c headers (`cmake --build build --target "
            "ollama-mlx-vendor-headers`) and regenerate the Go bindings (`go generate` in the package holding the "
            "bindings: `./x/mlxrunner/mlx`, or `./mlx` after the move); commit what changed",
        ),
    ]


def _llama_cpp_steps(report: Report, changed: list[str]) -> list[Item]:
    steps = [
        Item(
            "configure",
            "Configure (`cmake -S llama/server --preset cpu`), then run "
            "`python -m bot verify-source` to confirm that "
            "`build/llama-server-cpu/_deps/llama_cpp-src` is the pinned ref with the "
            "carried patches applied in order",
        )
    ]
    if _touches_build(changed, report):
        steps.append(
            Item(
                "build-cpu",
                "Build the CPU target (`cmake --build build/llama-server-cpu --target llama-server`)",
            )
        )
    return steps


_ATTENTION = (  # status, noun for one, noun for several, what to do with one, with several
    (
        "regenerated",
        "rebuilt",
        "rebuilt",
        "`{prefix} regenerate-patches` commits it",
        "`{prefix} regenerate-patches` commits them",
    ),
    ("fuzzy", "fuzzy", "fuzzy", "review it", "review them"),
    ("conflict", "conflict", "conflicts", "rebase it by hand", "rebase them by hand"),
    ("upstreamed", "obsolete", "obsolete", "drop it", "drop them"),
    ("error", "unusable", "unusable", "fix the patch file", "fix the patch files"),
)


def verdict(
    pins: list[PinReport], failed: list[PinReport], review_counts: Mapping[str, int], prefix: str
) -> str:
    """One sentence: what the maintainer must do, from the patches, the review items and the failed pins."""
    if not pins and not failed:
        return "This change touches no pinned upstream: nothing to check."
    patches = [p for pin in pins for p in pin.patches]
    parts = []
    if failed:
        parts.append("Could not check " + ", ".join(f"**{pin.name}**" for pin in failed) + " (see below)")
    needing = [p for p in patches if p.status not in APPLIES]
    if needing:
        kinds = []
        for status, one, many, do_one, do_many in _ATTENTION:
            count = sum(1 for p in needing if p.status == status)
            if count == 1:
                kinds.append(f"1 {one} ({do_one.format(prefix=prefix)})")
            elif count:
                kinds.append(f"{count} {many} ({do_many.format(prefix=prefix)})")
        parts.append(f"{len(needing)} of {len(patches)} patches need attention: {', '.join(kinds)}")
    questions = sum(1 for p in patches if p.status in APPLIES for h in p.hunks if h.detail)
    if not needing and patches and (failed or questions or any(review_counts.values())):
        parts.append("every patch applies as it is")
    if questions:
        parts.append(f"{_plural(questions, 'question')} about where a patch hooks (see the patch details)")
    items = [f"{review_counts[s]} {s}" for s in ("high", "medium") if review_counts.get(s)]
    if items:
        total = sum(review_counts.get(s, 0) for s in ("high", "medium"))
        parts.append(f"{' and '.join(items)} review item{'' if total == 1 else 's'} to check")
    if not parts:
        if not patches:
            return "Nothing to do: there are no carried patches and the review found nothing that affects Ollama."
        return "Nothing to do: every patch applies and the review found nothing that affects Ollama."
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:] + "."


SEVERITY_HEADINGS = {
    "high": "High: Ollama breaks or behaves differently unless it changes",
    "medium": "Medium: Ollama must decide",
}


def consequence(f: Finding) -> str:
    """The first sentence of a finding's text: what the change does to Ollama."""
    first = f.detail.strip().split("\n", 1)[0]
    end = first.find(". ")
    return (first[: end + 1] if end != -1 else first).strip()


def after_consequence(f: Finding) -> Finding:
    """The finding with its text after the first sentence: what its checklist line already says is not
    said twice in the details under it."""
    said = consequence(f)
    detail = f.detail.strip()
    return replace(f, detail=detail[len(said) :].lstrip() if said and detail.startswith(said) else detail)


_env.filters["after_consequence"] = after_consequence


def review_item(f: Finding) -> str:
    """A review item's one line: severity, title, consequence and the first place in Ollama it touches."""
    text = f"**{f.severity}** {f.title}"
    said = consequence(f)
    if said and not said.startswith("Where:"):
        text += f": {said}"
    if f.local_refs:
        first = f.local_refs[0]
        more = f", +{len(f.local_refs) - 1} more" if len(f.local_refs) > 1 else ""
        text += f" (Ollama: `{first.path}:{first.line}`{more})"
    return text


def platform_items(rows: list[dict], report: Report) -> list[Item]:
    """A box per platform: per dispatched platform's row (ticked by a successful run of the head), else the
    platforms that build what the bump changed; and the integration tests."""
    items = [
        Item(
            f"platform-{row['name']}",
            row.get("label") or PLATFORM_LABELS.get(row["name"], row["name"]),
            row.get("conclusion") == "success" and not row.get("stale"),
        )
        for row in rows
    ] or _default_platforms(report)
    return [*items, Item("integration-tests", "Integration tests")]


def render_platforms(rows: list[dict], report: Report, prefix: str, ticked: Iterable[str] = ()) -> str:
    """The checklist's platform section alone, between its tags, as the whole checklist renders it: what a
    workflow run's update puts in place of the old one."""
    items = platform_items(rows, report)
    for item in items:
        item.ticked = item.id in set(ticked)
    return render_template("_platforms.md.j2", rows=rows, items=items, prefix=prefix)


def build_checklist(
    report: Report,
    changed_paths: Iterable[str],
    ticked: Iterable[str] = (),
    platforms: list[dict] | None = None,
    max_findings: int | None = None,
    prefix: str = "/llama",
    patch_dirs: Mapping[str, str] | None = None,
) -> Checklist:
    """Which items the PR needs, and which are already done (by the bot or by a person)."""
    ticked = set(ticked)
    changed = list(changed_paths)
    steps = _steps(report, changed)
    findings = sorted(
        (f for pin in report.pins for f in review_findings(pin)), key=lambda f: SEVERITY_ORDER[f.severity]
    )
    actionable = [f for f in findings if f.severity != "info"]
    counts = {s: sum(1 for f in actionable if f.severity == s) for s in ("high", "medium")}
    folded = 0
    if max_findings is not None and len(actionable) > max_findings:
        folded = len(actionable) - max_findings
        actionable = actionable[:max_findings]
    sections: dict[str, list[tuple[Item, Finding]]] = {}
    for f in actionable:
        sections.setdefault(SEVERITY_HEADINGS[f.severity], []).append(
            (Item(finding_id(f), review_item(f)), f)
        )
    info = [f for f in findings if f.severity == "info"] if max_findings is None or not folded else []
    rows = platforms or []
    items = platform_items(rows, report)
    failed = list(report.failed)
    views = [pin_view(pin, prefix, (patch_dirs or {}).get(pin.name)) for pin in report.pins]
    checklist = Checklist(
        views,
        failed,
        verdict(report.pins, failed, counts, prefix),
        steps,
        list(sections.items()),
        info,
        items,
        rows,
        folded,
    )
    for item in [*steps, *[i for _, listed in checklist.review for i, _ in listed], *items]:
        item.ticked = item.id in ticked
    return checklist


def ticked_ids(body: str) -> set[str]:
    """Ids of the boxes ticked in an existing comment."""
    return set(_TICKED.findall(body or ""))


def render_markdown(
    report: Report,
    changed_paths: Iterable[str],
    *,
    head_sha: str | None = None,
    ran_at: str | None = None,
    ticked: Iterable[str] = (),
    platforms: list[dict] | None = None,
    marker: bool = False,
    limit: int = COMMENT_LIMIT,
    prefix: str = "/llama",
    patch_dirs: Mapping[str, str] | None = None,
) -> str:
    """The checklist; past `limit` characters the least important findings fold into one line.

    `patch_dirs` (pin name -> its patch directory) lets a pin without patches name where it looked.
    """
    changed = list(changed_paths)
    total = sum(1 for pin in report.pins for f in review_findings(pin) if f.severity != "info")
    for keep in [None, *range(total, -1, -1)]:
        checklist = build_checklist(report, changed, ticked, platforms, keep, prefix, patch_dirs)
        text = _env.get_template("checklist.md.j2").render(
            c=checklist,
            head_sha=head_sha,
            ran_at=ran_at,
            marker=MARKER if marker else "",
            prefix=prefix,
        )
        if len(text) <= limit:
            return text
    return text[: limit - 200] + "\n\n… (truncated: see the check runs for the full report)\n"


def render_comment(
    report: Report,
    changed_paths: Iterable[str],
    *,
    head_sha: str,
    ran_at: str,
    prefix: str,
    ticked: Iterable[str] = (),
    platforms: list[dict] | None = None,
    patch_dirs: Mapping[str, str] | None = None,
) -> str:
    return render_markdown(
        report,
        changed_paths,
        head_sha=head_sha,
        ran_at=ran_at,
        ticked=ticked,
        platforms=platforms,
        marker=True,
        limit=COMMENT_LIMIT - BANNER_ROOM,
        prefix=prefix,
        patch_dirs=patch_dirs,
    )


def render_progress(head_sha: str, since: str, fetching: str | None = None) -> str:
    """The comment of a first run under way; `fetching` names the upstream whose mirror it is fetching."""
    return _env.get_template("progress.md.j2").render(
        marker=MARKER, running=RUNNING, head_sha=head_sha, since=since, fetching=fetching
    )


def results_of(body: str | None) -> tuple[str, str] | None:
    """(commit, text) of the finished checklist a comment holds, banner excluded; None when it holds none."""
    found = _RESULTS.search(body or "")
    return (found[1], body[found.start() :]) if found and body else None


def under_banner(results: str, banner: str, running: bool) -> str:
    """The finished checklist `results` (from `results_of`, ticks included) under a one-line banner."""
    return _env.get_template("checklist_banner.md.j2").render(
        marker=MARKER, running=RUNNING if running else "", banner=banner, results=results.rstrip()
    )


def rechecking_banner(head_sha: str, since: str, results_sha: str, fetching: str | None = None) -> str:
    """The banner over the last checklist while a run is under way; `fetching` names the upstream whose
    mirror it is fetching, which on a cold start is most of the wait."""
    doing = f", fetching upstream {fetching}" if fetching else ""
    return f"⏳ Re-checking `{head_sha[:12]}` since {since}{doing}; the results below are for `{results_sha[:12]}`."


def failed_banner(head_sha: str, ran_at: str, message: str, hint: str, results_sha: str) -> str:
    return (
        f"⛔ Could not check `{head_sha[:12]}` ({ran_at}): {message} {hint} "
        f"The results below are for `{results_sha[:12]}`."
    )


def patches_conclusion(patches: list[PatchResult]) -> str:
    statuses = {p.status for p in patches}
    if statuses & {"conflict", "error"}:
        return "failure"
    if statuses & {"regenerated", "fuzzy", "upstreamed"}:
        return "action_required"
    return "success"


def patch_annotations(pin: PinReport) -> list[dict]:
    """Check-run annotations on the patch files, at the hunks that need a look."""
    level = {"conflict": "failure", "relocated": "warning", "merged": "notice"}
    out = []
    for patch in pin.patches:
        if patch.status == "error":
            out.append(
                {
                    "path": patch.path,
                    "start_line": 1,
                    "end_line": 1,
                    "annotation_level": "failure",
                    "title": "error",
                    "message": patch.message,
                }
            )
            continue
        for hunk in patch.hunks:
            if hunk.status in level:
                line = max(1, hunk.patch_line)
                out.append(
                    {
                        "path": patch.path,
                        "start_line": line,
                        "end_line": line,
                        "annotation_level": level[hunk.status],
                        "title": f"{hunk.file}: {hunk.status}",
                        "message": hunk.detail or patch.message,
                    }
                )
    return out


def _clip(text: str, limit: int = CHECK_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 60] + "\n\n… (truncated)\n"


def check_run_outputs(pin: PinReport, prefix: str = "/llama") -> list[tuple[str, str, dict]]:
    """(name, conclusion, output) for `<pin>: patches` and `<pin>: upstream review`."""
    counts: dict[str, int] = {}
    for p in pin.patches:
        counts[p.status] = counts.get(p.status, 0) + 1
    title = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no carried patches"
    findings = review_findings(pin)
    patches_text = _env.get_template("check_patches.md.j2").render(v=pin_view(pin, prefix, None))
    review_text = _env.get_template("check_review.md.j2").render(pin=pin, findings=findings)
    high = sum(1 for f in findings if f.severity == "high")
    review_title = f"{_plural(len(findings), 'finding')} ({high} high)" if findings else "nothing found"
    return [
        (
            f"{pin.name}: patches",
            patches_conclusion(pin.patches),
            {
                "title": f"{pin.old_ref} → {pin.new_ref}: {title}",
                "summary": _clip(patches_text.split("\n\n## ")[0]),
                "text": _clip(patches_text),
                "annotations": patch_annotations(pin),
            },
        ),
        (
            f"{pin.name}: upstream review",
            "neutral" if findings else "success",
            {
                "title": review_title,
                "summary": _clip(review_text.split("\n\n## ")[0]),
                "text": _clip(review_text),
            },
        ),
    ]
