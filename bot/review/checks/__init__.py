"""The review's checks: one module per check in this package's themed folders, each declaring an id, the
area its items usually fall in, the inputs it reads and `run`; `data/profiles.toml` lists the checks of each
review profile in the order their items are shown.

An input is something of the review a check reads (the upstream diff, upstream's CMake model, Ollama's build
model, its contract inventory, ...). Inputs are data too: which are heavy (parsed under the GIL: a second
process helps them), what a forked copy needs read beforehand in the review's process (the only one that may
ask the service for a file), and which check is the last to read the inventory's Go program, after which
the review lets it go. So the choice of what runs beside the others follows from the checks' declarations.
"""

from __future__ import annotations

import importlib
import pkgutil
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.consumers.contracts import WIRE_GROUPS

if TYPE_CHECKING:
    from bot.review.run import Run

PROFILES = Path(__file__).resolve().parent.parent / "data" / "profiles.toml"


@dataclass(frozen=True)
class Input:
    """Something of one review that checks read."""

    name: str
    heavy: bool = False  # parsing it keeps a CPU busy: its checks run beside the others when one is free
    prepare: Callable[[Run], object] | None = None  # what a forked copy needs read here first
    # what a forked copy is handed once this process has read it (the copy's checks that need it wait)
    handed: tuple[str, ...] = ()  # the inventory's groups
    releases_program: bool = False  # reads the inventory's Go program (let go after its last reader here)


def _read_ollama_build(run: Run) -> None:
    run.consumers  # noqa: B018 - read for what it reads
    run.pin_build_dirs  # noqa: B018 - read for what it reads
    run.ollama_settings  # noqa: B018 - read for what it reads


def _read_go_texts(run: Run) -> None:
    run.read_go_texts()


INPUTS = {
    i.name: i
    for i in (
        Input("diff"),  # the changed files, their hunks and texts at both refs
        Input("patches"),  # the carried patches
        Input("cmake", heavy=True),  # upstream's CMake files at both refs
        Input(
            "ollama-build", prepare=_read_ollama_build
        ),  # Ollama's build model and where it fetches the pin
        Input("ollama-code"),  # Ollama's tree, searched for names
        Input("mlx-build", prepare=lambda run: run.mlx_reading),  # Ollama's build of MLX, and MLX's CMake
        Input(
            "inventory", prepare=_read_go_texts, handed=("launch", "output_patterns"), releases_program=True
        ),  # the contract inventory (launches, flows, outputs)
        Input(
            "wire-groups", prepare=_read_go_texts, handed=(*WIRE_GROUPS, "passed_flags")
        ),  # the inventory's JSON groups
        Input("server-sources", heavy=True),  # llama-server's request and response code at both refs
        Input("prints", heavy=True),  # the print statements of upstream's changed functions, parsed
        Input("consumer-pins"),  # code of other pins that compiles against this upstream's headers
    )
}


@dataclass(frozen=True)
class Check:
    """One check of the review."""

    id: str
    area: str
    inputs: tuple[str, ...]
    run: Callable[[Run], list[Draft]]
    applies: Callable[[Run], bool]  # cheap: whether it has anything to read in this review
    kept: Callable[[Run], list[Draft] | None] | None = (
        None  # its items as a review of the same texts kept them
    )

    @property
    def heavy(self) -> bool:
        return any(INPUTS[name].heavy for name in self.inputs)

    def drafts(self, run: Run) -> list[Draft]:
        """Its items, each with its id."""
        return self.named(self.run(run))

    def named(self, drafts: list[Draft]) -> list[Draft]:
        """The drafts with this check's id, unless one names a finer one (a rule's)."""
        return [d if d.check else replace(d, check=self.id) for d in drafts]


_REGISTRY: dict[str, Check] = {}


def check(
    id: str,
    area: str,
    inputs: tuple[str, ...],
    applies: Callable[[Run], bool] = lambda run: True,
    kept: Callable[[Run], list[Draft] | None] | None = None,
) -> Callable[[Callable[[Run], list[Draft]]], Callable[[Run], list[Draft]]]:
    """Registers the decorated function as the check `id`."""
    unknown = [name for name in inputs if name not in INPUTS]
    if unknown or id in _REGISTRY:
        raise ValueError(
            f"check {id}: unknown inputs {unknown}" if unknown else f"check {id} registered twice"
        )

    def register(run: Callable[[Run], list[Draft]]) -> Callable[[Run], list[Draft]]:
        _REGISTRY[id] = Check(id, area, inputs, run, applies, kept)
        return run

    return register


@cache
def registry() -> dict[str, Check]:
    """Every check, by id (each module of this package imported once)."""
    for module in _check_modules():
        importlib.import_module(module)
    return dict(_REGISTRY)


def _check_modules() -> Iterator[str]:
    for found in pkgutil.walk_packages(__path__, f"{__name__}."):
        if not found.ispkg:
            yield found.name


@cache
def profile_checks(profile: str) -> tuple[Check, ...]:
    """The checks of a review profile, in the order their items are shown."""
    checks = registry()
    return tuple(checks[name] for name in _profiles()[profile]["checks"])


@cache
def profile_data(profile: str) -> dict:
    """A profile's settings beside its checks (upstream idioms its checks read)."""
    return {k: v for k, v in _profiles()[profile].items() if k != "checks"}


@cache
def _profiles() -> dict[str, dict]:
    return tomllib.loads(PROFILES.read_text())["profile"]


@dataclass(frozen=True)
class Plan:
    """Where each check of one review runs, decided from the checks' inputs: `kept` items a review of the same
    texts kept (not run again); the heavy checks `beside` the others, in a forked copy when `fork`; the rest
    `here`, the readers of the inventory's Go program first, the program let go after the last of them
    (`settle_after`, an index into `here`)."""

    kept: dict[str, list[Draft]]
    beside: tuple[Check, ...]
    here: tuple[Check, ...]
    fork: bool  # nothing heavy to run, or a re-check (a heavy check's items kept): what is left would not pay

    @property
    def settle_after(self) -> int:
        return max((i for i, c in enumerate(self.here) if _reads_program(c)), default=len(self.here) - 1)

    @property
    def wire_beside(self) -> bool:
        """Whether a check beside the others reads the inventory's JSON groups."""
        return any("wire-groups" in c.inputs for c in self.beside)

    def prepare(self, run: Run) -> None:
        """What the checks beside the others need read in this process before the fork, read (once per
        input)."""
        for prepare in dict.fromkeys(INPUTS[name].prepare for c in self.beside for name in c.inputs):
            if prepare is not None:
                prepare(run)

    def handed(self, run: Run) -> dict[str, object]:
        """The inventory's groups the checks beside the others read, read here to be handed to the copy."""
        names = (g for c in self.beside for name in c.inputs for g in INPUTS[name].handed)
        return run.inventory_groups(tuple(dict.fromkeys(names)))

    def waits(self, c: Check) -> bool:
        """Whether a check beside the others reads what the copy is handed."""
        return any(INPUTS[name].handed for name in c.inputs)


def plan(checks: list[Check], run: Run) -> Plan:
    kept = _kept(checks, run)
    beside = tuple(c for c in checks if c.heavy and c.id not in kept)
    here = tuple(sorted((c for c in checks if c.id not in kept and c not in beside), key=_program_last))
    return Plan(kept, beside, here, bool(beside) and not any(c.heavy for c in checks if c.id in kept))


def _kept(checks: list[Check], run: Run) -> dict[str, list[Draft]]:
    """The items of the checks a review of the same texts kept, by id."""
    found = {}
    for c in checks:
        kept = c.kept(run) if c.kept is not None else None
        if kept is not None:
            found[c.id] = c.named(kept)
    return found


def _program_last(c: Check) -> bool:
    """The sort key that runs the readers of the inventory's Go program first."""
    return not _reads_program(c)


def _reads_program(c: Check) -> bool:
    return any(INPUTS[name].releases_program for name in c.inputs)
