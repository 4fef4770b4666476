"""Where Ollama's build applies a pin's carried patches, said as the tree says it: the `PATCH_COMMAND` of the
fetch that gets the pin, or none (then where one would have to be wired in), and whether every Docker stage
that runs that CMake file also copies the patches it applies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.build import dockerstages
from bot.config import Pin
from bot.markup import code_span
from bot.model import Finding, LocalRef
from bot.repos import buildpatches
from bot.repos.snapshot import Snapshot


@dataclass(frozen=True)
class Gap:
    """A Docker stage that runs a CMake file whose PATCH_COMMAND applies patches the stage never copied."""

    stage: dockerstages.Stage
    fetch: buildpatches.BuildPatches
    missing: tuple[str, ...]


def _where(path: str, line: int) -> str:
    return code_span(f"{path}:{line}")


def _stage_chains(snapshot: Snapshot) -> list[tuple[dockerstages.Stage, list[dockerstages.Stage]]]:
    """Every Docker stage with the stages it starts from (within its Dockerfile)."""
    all_stages = dockerstages.read_stages(snapshot)
    chains = []
    for path in {s.dockerfile for s in all_stages}:
        by_name = {s.name: s for s in all_stages if s.dockerfile == path}
        chains += [(s, dockerstages.lineage(s, by_name)) for s in all_stages if s.dockerfile == path]
    return sorted(chains, key=lambda c: (c[0].dockerfile, c[0].line))


def _builds(
    chain: list[dockerstages.Stage], ctx: dockerstages.Context, cmake_file: str, version_file: str
) -> bool:
    """Whether a stage fetches the pin through `cmake_file`: it copies that file and the version file its
    fetch reads the ref from (without it the configure fails), and runs CMake."""
    return (
        dockerstages.copied(cmake_file, chain, ctx)
        and dockerstages.copied(version_file, chain, ctx)
        and dockerstages.runs(chain, "cmake")
    )


def building_stages(snapshot: Snapshot, cmake_file: str, version_file: str) -> list[dockerstages.Stage]:
    """The Docker stages that fetch the pin of `version_file` through `cmake_file`."""
    ctx = dockerstages.context(snapshot)
    return [
        stage for stage, chain in _stage_chains(snapshot) if _builds(chain, ctx, cmake_file, version_file)
    ]


def docker_gaps(snapshot: Snapshot, version_file: str) -> list[Gap]:
    """Each Docker stage that runs a CMake file patching the pin without copying every patch it applies."""
    fetches = [
        f for f in buildpatches.build_patches(snapshot) if f.version_file == version_file and f.patches
    ]
    if not fetches:
        return []
    ctx = dockerstages.context(snapshot)
    chains = _stage_chains(snapshot)
    return [gap for fetch in fetches for gap in _fetch_gaps(fetch, chains, ctx)]


def _fetch_gaps(
    fetch: buildpatches.BuildPatches,
    chains: list[tuple[dockerstages.Stage, list[dockerstages.Stage]]],
    ctx: dockerstages.Context,
) -> list[Gap]:
    """The stages that fetch through this PATCH_COMMAND's CMake file, each with the patches it lacks."""
    gaps = []
    for stage, chain in chains:
        if _builds(chain, ctx, fetch.cmake_file, fetch.version_file):
            missing = tuple(p for p in fetch.patches if not dockerstages.copied(p, chain, ctx))
            if missing:
                gaps.append(Gap(stage, fetch, missing))
    return gaps


def gap_findings(snapshot: Snapshot, pin: Pin) -> list[Finding]:
    """One high finding per Docker stage that the pin's carried patches do not reach."""
    return [_gap_finding(pin, gap) for gap in docker_gaps(snapshot, pin.version_file)]


def _gap_finding(pin: Pin, gap: Gap) -> Finding:
    stage, fetch = gap.stage, gap.fetch
    listed = ", ".join(code_span(p) for p in gap.missing)
    return Finding(
        "build",
        "high",
        f"Docker stage {code_span(stage.name)} builds {pin.name} without its carried patch"
        f"{'es' if len(gap.missing) > 1 else ''}: {listed} not copied",
        f"{code_span(f'{stage.dockerfile}:{stage.line}')} (stage {code_span(stage.name)}) copies {code_span(fetch.cmake_file)}, whose "
        f"PATCH_COMMAND (line {fetch.line}) applies {listed} to {pin.name}, and runs CMake, but it never "
        f"copies {'them' if len(gap.missing) > 1 else 'it'} from the build context: the patch step fails "
        f"in that stage. Copy the patch{'es' if len(gap.missing) > 1 else ''} into the stage (a `COPY` of "
        "their directory) before it configures.",
        fetch.cmake_file,
        None,
        local_refs=[LocalRef(stage.dockerfile, stage.line), LocalRef(fetch.cmake_file, fetch.line)],
        check="build.patch-wiring",
    )


def _stages_text(snapshot: Snapshot, cmake_files: list[str], version_file: str) -> str:
    stages = {
        (s.dockerfile, s.name, s.line)
        for f in cmake_files
        for s in building_stages(snapshot, f, version_file)
    }
    if not stages:
        return ""
    listed = ", ".join(
        f"{code_span(name)} ({code_span(f'{path}:{line}')})" for path, name, line in sorted(stages)
    )
    return f", and copy it into the Docker stage{'s' if len(stages) > 1 else ''} {listed}, which run{'' if len(stages) > 1 else 's'} that CMake"


def _overridden(snapshot: Snapshot, fetch: buildpatches.FetchSource) -> str | None:
    """The Ollama CMake file that hands a `FetchContent_Declare` its source through
    `FETCHCONTENT_SOURCE_DIR_<NAME>` (CMake then skips the fetch and its PATCH_COMMAND), else None."""
    if fetch.command != "fetchcontent_declare" or not fetch.name:
        return None
    variable = f"FETCHCONTENT_SOURCE_DIR_{fetch.name.upper()}"
    return next(
        (
            path
            for path in snapshot.files()
            if buildpatches.is_cmake_file(path)
            and path != fetch.cmake_file
            and variable.encode() in (snapshot.read(path) or b"")
        ),
        None,
    )


def _sites(snapshot: Snapshot, fetches: list[buildpatches.FetchSource]) -> str:
    """The fetches a PATCH_COMMAND would go on; one whose source another file hands it is said so."""
    direct, handed = [], []
    for f in fetches:
        by = _overridden(snapshot, f)
        if by is None:
            direct.append(_where(f.cmake_file, f.line))
        else:
            handed.append(
                f"{_where(f.cmake_file, f.line)} takes its source from {code_span(by)} through {code_span(f'FETCHCONTENT_SOURCE_DIR_{f.name.upper()}')}"
            )
    text = ", ".join(direct or [_where(f.cmake_file, f.line) for f in fetches])
    return text + (f" ({'; '.join(handed)})" if direct and handed else "")


def applied_where(snapshot: Snapshot, pin: Pin) -> str:
    """Where the build applies the pin's patches, or that it applies none and where one would be wired in:
    a clause that ends "(the build ...)"."""
    applying = [f for f in buildpatches.build_patches(snapshot) if f.version_file == pin.version_file]
    if applying:
        origins = "; ".join(f.origin for f in applying)
        return f"the build applies {pin.name}'s patches {origins}"
    fetches = buildpatches.fetch_sources(snapshot, pin.version_file)
    if not fetches:
        return (
            f"the build applies no {pin.name} patch, and no fetch of {code_span(pin.version_file)}'s ref was found in "
            "Ollama's CMake files to wire one into"
        )
    return (
        f"the build applies no {pin.name} patch yet: wire one in as the `PATCH_COMMAND` of the fetch at "
        f"{_sites(snapshot, fetches)}{_stages_text(snapshot, sorted({f.cmake_file for f in fetches}), pin.version_file)}"
    )


def unapplied_finding(snapshot: Snapshot, pin: Pin, carried: list[str]) -> Finding | None:
    """A high finding when patches are carried for the pin but the build, which fetches it, applies none."""
    if not carried or any(f.version_file == pin.version_file for f in buildpatches.build_patches(snapshot)):
        return None
    fetches = buildpatches.fetch_sources(snapshot, pin.version_file)
    if not fetches:
        return None
    listed = ", ".join(code_span(p) for p in carried)
    sites = ", ".join(_where(f.cmake_file, f.line) for f in fetches)
    return Finding(
        "build",
        "high",
        f"The build applies none of {pin.name}'s carried patches",
        f"{listed} {'are' if len(carried) > 1 else 'is'} carried for {pin.name}, but no `PATCH_COMMAND` of "
        f"the fetch that gets it ({sites}) applies {'them' if len(carried) > 1 else 'it'}: the build "
        "compiles the unpatched source. Wire the patches in as that fetch's `PATCH_COMMAND`.",
        pin.version_file,
        None,
        local_refs=[LocalRef(f.cmake_file, f.line) for f in fetches],
        check="build.patch-wiring",
    )


def no_patches_note(snapshot: Snapshot, pin: Pin, pins: Sequence[Pin]) -> str:
    """For a pin without carried patches: whether the build fetches it without a `PATCH_COMMAND`, and the
    patches beside its directory that the build applies to another pin; "" when the tree says neither."""
    return "; ".join([*_unpatched_fetch(snapshot, pin), *_patches_beside(snapshot, pin, pins)])


def _unpatched_fetch(snapshot: Snapshot, pin: Pin) -> list[str]:
    """That the build fetches the pin with no PATCH_COMMAND, when it does."""
    fetches = buildpatches.fetch_sources(snapshot, pin.version_file)
    if not fetches or any(f.version_file == pin.version_file for f in buildpatches.build_patches(snapshot)):
        return []
    sites = ", ".join(_where(f.cmake_file, f.line) for f in fetches)
    return [f"the build applies none to {pin.name} (its fetch at {sites} has no `PATCH_COMMAND`)"]


def _patches_beside(snapshot: Snapshot, pin: Pin, pins: Sequence[Pin]) -> list[str]:
    """The patches under the top directory of the pin's patch directory that the build applies to others."""
    names = {p.version_file: p.name for p in pins}
    top = pin.patches.split("/", 1)[0]
    said = []
    for fetch in buildpatches.build_patches(snapshot):
        beside = [p for p in fetch.patches if p.split("/", 1)[0] == top]
        if fetch.version_file != pin.version_file and beside:
            owner = names.get(fetch.version_file, f"the project {code_span(fetch.version_file)} pins")
            listed = ", ".join(code_span(p) for p in beside)
            said.append(f"{listed} {'are' if len(beside) > 1 else 'is'} {owner}'s, applied {fetch.origin}")
    return said
