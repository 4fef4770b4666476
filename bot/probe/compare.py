"""What differs between two runs of llama-server, on something Ollama reads: each difference a finding with
the probe's check id, its severity by what Ollama does with it, and both answers as evidence. Pure."""

from __future__ import annotations

from dataclasses import replace

from bot.model import Finding, LocalRef
from bot.probe.plan import PROGRAM, Plan, Probe, ProgramRun
from bot.probe.session import Answer, Observation, Started, pattern_key
from bot.review.consumers.contracts.model import OutputPattern


def compare(before: Observation, after: Observation, plan: Plan) -> list[Finding]:
    """The findings of moving from `before`'s build to `after`'s."""
    if not after.started:
        return [
            _finding(
                "probe.launch",
                "high",
                "server",
                f"llama-server at {after.ref} does not start as Ollama starts it",
                after.failure,
            )
        ]
    if not before.started:
        return [
            _finding(
                "probe.launch",
                "info",
                "server",
                f"llama-server at {before.ref} did not start; nothing compared",
                before.failure,
            )
        ]
    found = [*_health(before, after), *_per_field(before, after, plan)]
    found += _patterns(before.matched, after.matched, plan, False, before.ref, after.ref)
    found += _patterns(before.listing_matched, after.listing_matched, plan, True, before.ref, after.ref)
    return [*found, *_launches(before, after, plan, found), *_program_runs(before, after, plan)]


def unbuilt(ref: str, why: str) -> Finding:
    """The finding of a new ref that does not build as Ollama builds it (`why`: the step and its output)."""
    return _finding(
        "probe.build", "high", "build", f"llama-server at {ref} does not build as Ollama builds it", why
    )


def _per_field(before: Observation, after: Observation, plan: Plan) -> list[Finding]:
    """The answers' findings, one per cause: the values of one field that are refused (or fail) now, on every
    endpoint, are one finding naming them all."""
    grouped: dict[tuple[str, str], list[tuple[Probe, Finding]]] = {}
    found: list[Finding] = []
    for probe in plan.probes:
        old, new = before.answers.get(probe.name), after.answers.get(probe.name)
        for f in _answers(probe, old, new, plan, before.ref, after.ref) if old and new else []:
            if probe.field and f.check in ("probe.refused", "probe.failed"):
                grouped.setdefault((f.check, probe.field), []).append((probe, f))
            else:
                found.append(f)
    return [*[_one_cause(field, pairs) for (_, field), pairs in grouped.items()], *found]


def _one_cause(field: str, pairs: list[tuple[Probe, Finding]]) -> Finding:
    """The findings of one field's values as one: the values and endpoints named, each answer kept."""
    first = pairs[0][1]
    if len(pairs) == 1:
        return first
    values = " and ".join(dict.fromkeys(p.value for p, _ in pairs))
    endpoints = " and ".join(dict.fromkeys(f"{p.method} {p.path}" for p, _ in pairs))
    verb = "refuses" if first.check == "probe.refused" else "fails on"
    refs = list(dict.fromkeys(r for _, f in pairs for r in f.local_refs))
    return replace(
        first,
        title=f"llama-server now {verb} {field} = {values} on {endpoints}, which Ollama can send",
        detail="\n".join(f.detail for _, f in pairs),
        local_refs=refs,
    )


def _launches(before: Observation, after: Observation, plan: Plan, said: list[Finding]) -> list[Finding]:
    """The server's other starts: one that started and now does not, and an answer to a base request that
    differs under it and not in the base start (said once, for the first start that shows it)."""
    found: list[Finding] = []
    seen = {(f.check, f.title) for f in said}
    for launch in plan.launches:
        old, new = before.launches.get(launch.name), after.launches.get(launch.name)
        if old is None or new is None or not old.started:
            continue
        refs = (launch.ref,) if launch.ref else ()
        if not new.started:
            title = f"llama-server at {after.ref} does not start with {launch.name}, which Ollama gives on some starts"
            found.append(_finding("probe.launch", "high", "server", title, new.failure, refs))
            continue
        for f in _launch_answers(plan, old, new, before.ref, after.ref):
            if (f.check, f.title) not in seen:
                seen.add((f.check, f.title))
                f.title = f"{f.title} (started with {launch.name})"
                f.local_refs = [*f.local_refs, *refs]
                found.append(f)
    return found


def _launch_answers(plan: Plan, old: Started, new: Started, was: str, now: str) -> list[Finding]:
    """What differs in the base requests' answers between two starts with the same extra flag."""
    asked = [p for p in plan.probes if not p.field and p.name in old.answers and p.name in new.answers]
    return [f for p in asked for f in _answers(p, old.answers[p.name], new.answers[p.name], plan, was, now)]


def _program_runs(before: Observation, after: Observation, plan: Plan) -> list[Finding]:
    """Another program Ollama starts that no longer builds, a run of it that worked and now fails (or writes
    nothing), and a pattern Ollama reads in its output that matched and now does not."""
    found: list[Finding] = []
    for program in plan.programs[1:]:
        runs = [r for r in plan.runs if r.program == program and r.name in before.programs]
        if not runs:
            continue
        if not any(r.name in after.programs for r in runs):
            found.append(
                _finding(
                    "probe.build",
                    "high",
                    "build",
                    f"{program} at {after.ref} does not build as Ollama builds it; Ollama runs it",
                    f"At {before.ref} it built and ran; at {after.ref} the build made no {program}.",
                )
            )
            continue
        found += [f for r in runs if (f := _program_run(r, before, after)) is not None]
        found += _program_patterns(program, runs, before, after, plan)
    return found


def _program_run(run: ProgramRun, before: Observation, after: Observation) -> Finding | None:
    old, new = before.programs[run.name], after.programs.get(run.name)
    if new is None or not old.ok or (new.ok and (new.wrote or not old.wrote)):
        return None
    what = f"exits {new.exit}" if not new.ok else "exits 0 but writes no output"
    return _finding(
        "probe.program",
        "high",
        "server",
        f"{run.program} now fails as Ollama runs it: {run.name}",
        f"`{' '.join((run.program, *run.args))}`: exit {old.exit}, output written at {before.ref}; at {after.ref} it "
        f"{what}. Ollama runs {run.program} with these arguments and fails when it does.",
        (run.ref,) if run.ref else (),
    )


def _program_patterns(
    program: str, runs: list[ProgramRun], before: Observation, after: Observation, plan: Plan
) -> list[Finding]:
    """A pattern Ollama reads in a program's output that some run's output matched and no run matches now."""
    found = []
    for pattern in plan.patterns:
        read = {s.split()[-1] for s in pattern.sources if s.split(" ", 1)[0] == program}
        was = _streams_matched(pattern, runs, before) & read
        if was and not _streams_matched(pattern, runs, after) & read:
            found.append(
                _finding(
                    "probe.pattern",
                    "high",
                    "server",
                    f"Ollama's {pattern.kind} {pattern.value!r} no longer matches {program}'s output",
                    f"At {before.ref} it matched lines on {', '.join(sorted(was))}; at {after.ref} none that Ollama "
                    f"reads ({', '.join(sorted(read))}).",
                    (pattern.ref, *pattern.used_at),
                )
            )
    return found


def _streams_matched(pattern: OutputPattern, runs: list[ProgramRun], seen: Observation) -> set[str]:
    """The streams a pattern matched on in any of the runs one build made."""
    key = pattern_key(pattern)
    return {
        stream
        for r in runs
        if r.name in seen.programs
        for stream in seen.programs[r.name].matched.get(key, [])
    }


def _finding(
    check: str, severity: str, area: str, title: str, detail: str, refs: tuple[LocalRef, ...] = ()
) -> Finding:
    return Finding(area, severity, title, detail, "", None, local_refs=list(refs), check=check)


def _health(before: Observation, after: Observation) -> list[Finding]:
    if before.health == after.health:
        return []
    return [
        _finding(
            "probe.health",
            "medium",
            "server",
            "llama-server's /health answers differently while it loads",
            f"At {before.ref}: {_statuses(before.health)}. At {after.ref}: {_statuses(after.health)}. Ollama waits on "
            "/health to know when the model is loaded.",
        )
    ]


def _statuses(statuses: list[int]) -> str:
    return " then ".join(str(s) for s in statuses) or "no answer"


def _answers(probe: Probe, old: Answer, new: Answer, plan: Plan, was: str, now: str) -> list[Finding]:
    refs = (probe.ref,) if probe.ref else ()
    asked = f"{probe.method} {probe.path}" + (
        f" with {probe.field} = {probe.value} ({probe.why})" if probe.field else ""
    )
    if _ok(old.status) and not _ok(new.status):
        failed = new.status >= 500  # an error while generating, not the request refused
        return [
            _finding(
                "probe.failed" if failed else "probe.refused",
                "medium" if failed else "high",
                "server",
                f"llama-server now {'fails on' if failed else 'refuses'} {probe.name}, which Ollama can send",
                f"{asked}: {old.status} at {was}; {new.status} at {now} ({new.error or 'no message'}).",
                refs,
            )
        ]
    if 400 <= old.status < 500 and _ok(new.status):
        detail = f"{asked}: {old.status} at {was} ({old.error or 'no message'}); {new.status} at {now}."
        return [
            _finding(
                "probe.accepted", "info", "server", f"llama-server now accepts {probe.name}", detail, refs
            )
        ]
    if not _ok(new.status):
        return []
    return [*_fields(probe, old, new, plan, was, now), *_frames(probe, old, new, was, now)]


def _ok(status: int) -> bool:
    return 200 <= status < 300


def _read_paths(plan: Plan, probe: Probe) -> set[str]:
    """The fields Ollama decodes from this endpoint's answer, as `shape` names them."""
    endpoint = f"{probe.method} {probe.path}"
    direction = "stream" if probe.stream else "response"
    return {f.path for f in plan.decoded if f.endpoint == endpoint and f.direction == direction}


def _fields(probe: Probe, old: Answer, new: Answer, plan: Plan, was: str, now: str) -> list[Finding]:
    """A field Ollama decodes that is gone, or has another type, in the answer (a stream: in its first or
    last chunk)."""
    found = []
    for path in sorted(_read_paths(plan, probe)):
        for key in [f"first:{path}", f"last:{path}"] if probe.stream else [path]:
            before, after = old.fields.get(key), new.fields.get(key)
            if before is None or before == after:
                continue
            where = f" ({key.split(':')[0]} chunk)" if probe.stream else ""
            what = "is gone" if after is None else f"is now {after} (was {before})"
            found.append(
                _finding(
                    "probe.field",
                    "high",
                    "streaming" if probe.stream else "server",
                    f"Field {path} of {probe.name}{where} {what}; Ollama decodes it",
                    f"At {was} the answer held {path} as {before}; at {now} {what.removeprefix('is ')}.",
                )
            )
    return found


def _frames(probe: Probe, old: Answer, new: Answer, was: str, now: str) -> list[Finding]:
    new_kinds = [k for k in dict.fromkeys(new.frames) if k not in old.frames]
    if not probe.stream or not new_kinds:
        return []
    return [
        _finding(
            "probe.frames",
            "high",
            "streaming",
            f"The stream of {probe.name} has new kinds of frames: {', '.join(new_kinds)}",
            f"Frames at {was}: {' '.join(old.frames)}. At {now}: {' '.join(new.frames)}. Ollama's stream reader "
            "must take every frame it is sent.",
        )
    ]


def _read_streams(pattern: OutputPattern, listing: bool) -> set[str]:
    """The streams Ollama reads the pattern's lines from, in the listing or while serving: its sources'
    last word (`llama-server stderr`, `llama-server --list-devices stdout+stderr`)."""
    streams: set[str] = set()
    for source in pattern.sources:
        words = source.split()
        if words and words[0] == PROGRAM and ("--list-devices" in words) == listing:
            streams.update(words[-1].split("+"))
    return streams & {"stdout", "stderr"}


def _patterns(
    old: dict[str, list[str]], new: dict[str, list[str]], plan: Plan, listing: bool, was: str, now: str
) -> list[Finding]:
    """A pattern Ollama looks for that matched a stream it reads and no longer matches any it reads."""
    found = []
    when = "in the device listing" if listing else "while serving"
    for pattern in plan.patterns:
        read = _read_streams(pattern, listing)
        key = pattern_key(pattern)
        before, after = set(old.get(key, [])) & read, set(new.get(key, []))
        if not before or after & read:
            continue
        elsewhere = f" (it matches on {', '.join(sorted(after))} now)" if after else ""
        found.append(
            _finding(
                "probe.pattern",
                "high",
                "server",
                f"Ollama's {pattern.kind} {pattern.value!r} no longer matches llama-server's output {when}",
                f"At {was} it matched lines on {', '.join(sorted(before))}; at {now} none that Ollama reads "
                f"({', '.join(sorted(read))}){elsewhere}.",
                (pattern.ref, *pattern.used_at),
            )
        )
    return found
