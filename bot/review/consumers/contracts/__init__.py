"""The contract inventory: everything of upstream's behaviour Ollama's code at one revision relies on, each with
its Ollama file and line.

Read from Ollama's tree alone (path -> comment-free text, read lazily): the constants its Go code compares with
what an upstream program prints or answers (`outputs`, over the values `flow` traces to a program's output or
an HTTP response), the flags and environment it starts the program with (`arguments`, over the commands and
requests `launches` finds), the JSON it sends and decodes (`wire`), the sampler, tokenizer and template
behaviours among those (`behaviours`), and what its build configuration relies on (`build`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TypeVar

from bot.cache import facts
from bot.model import LocalRef
from bot.review.consumers.contracts.arguments import flag_places, launch_settings, passed_flags
from bot.review.consumers.contracts.behaviours import behaviours
from bot.review.consumers.contracts.build import build_items, installed_programs
from bot.review.consumers.contracts.flow import Flow
from bot.review.consumers.contracts.gocode import GoProgram
from bot.review.consumers.contracts.launches import (
    Command,
    Request,
    endpoint_places,
    find_commands,
    find_requests,
)
from bot.review.consumers.contracts.model import GROUPS, Inventory, LaunchSetting, OutputPattern, WireField
from bot.review.consumers.contracts.outputs import output_patterns
from bot.review.consumers.contracts.resolve import Resolver
from bot.review.consumers.contracts.wire import request_fields, response_fields
from bot.review.consumers.shared import TextsRead, text_id_in

__all__ = ["GROUPS", "Contracts", "Inventory", "contract_inventory", "contracts_of"]

# What the inventory reads depends only on the texts of Ollama's tree it reads and on this code, so the groups a
# review asks for are kept with the ids of those texts: a re-check, another push that leaves them as they were,
# or a second pull request on the same Ollama tree finds them instead of reading the Go program again.
INVENTORY = facts.Extractor("contract-inventory", 2, __name__)
WIRE_GROUPS = ("calls_upstream", "endpoints", "request_fields", "response_fields", "output_patterns")
KEPT = ("launch", "passed_flags", *WIRE_GROUPS)
_PROGRAM = ("resolver", "commands", "requests", "flow")  # what the groups are read from
T = TypeVar("T")


class Contracts:
    """The inventory of one Ollama tree (path -> comment-free text), each group looked up in the facts store
    or read on first use: a review asks for the few it checks, and the program's commands, requests and data
    flow are read once for all."""

    def __init__(self, ollama: Mapping[str, str]):
        self.ollama = TextsRead(ollama)
        self.paths = list(ollama)
        self._loaded: set[str] = set()  # the groups found in the facts store
        self._looked_up: set[str] = set()

    def _key(self, group: str) -> tuple[str, ...]:
        return facts.text_id("\n".join(self.paths)), group

    def _stored(self, group: str) -> bool:
        """Whether an analysis of a tree with the same files kept the group, every text read for it reading
        the same here (it is then this tree's too): it is then the group's value. Looked up on first use
        only, once: a review that asks for one group costs no look-up of the others."""
        if group in self._looked_up:
            return False
        self._looked_up.add(group)
        found, kept = facts.get(INVENTORY, self._key(group))
        if found and all(text_id_in(self.ollama, path) == read for path, read in kept[0].items()):
            self.__dict__[group] = kept[1]  # the cached property's value, as if computed
            self._loaded.add(group)
            return True
        return False

    def _kept_or(self, group: str, read: Callable[[], T]) -> T:
        """The group as the facts store kept it, else read."""
        return self.__dict__[group] if self._stored(group) else read()

    def settle(self, wire: bool = True) -> None:
        """Reads the wire check's groups unless `wire` is False (cheap once the Go program is read; False
        when the wire check runs in a process of its own), keeps every group read in the facts store when
        it lacked it, with the ids of every text read so far, and lets go of the Go program (its syntax
        trees and what was resolved in them, a review's largest holding). A group or program part asked
        for later is read again."""
        if wire:
            self.read_wire_groups()
        if facts.in_use():  # else nothing is kept, and a later review with a store keeps them then
            read = dict(self.ollama.read)
            for group in KEPT:
                if group in self.__dict__ and group not in self._loaded:
                    facts.put(INVENTORY, self._key(group), (read, self.__dict__[group]))
            self._loaded = {g for g in KEPT if g in self.__dict__}
        for name in _PROGRAM:
            self.__dict__.pop(name, None)

    def take(self, groups: Mapping[str, object]) -> None:
        """Groups another process read of this same tree, as if read here; not kept in the facts store
        from here (that process keeps them, with the texts it read for them)."""
        self.__dict__.update(groups)
        self._loaded |= set(groups)

    def holds(self, groups: tuple[str, ...]) -> bool:
        """Whether these groups are at hand (kept, or read already): asking for them reads nothing."""
        return all(group in self.__dict__ or self._stored(group) for group in groups)

    def read_wire_groups(self) -> None:
        """The groups the wire check reads, read now."""
        for name in WIRE_GROUPS:
            getattr(self, name)

    def same_input(self, ollama: Mapping[str, str]) -> bool:
        """Whether another tree has the same files and the same text in each file read so far."""
        return list(ollama) == self.paths and all(
            text_id_in(ollama, path) == read for path, read in self.ollama.read.items()
        )

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(GoProgram(self.ollama, self.paths))

    @cached_property
    def commands(self) -> list[Command]:
        return find_commands(
            self.resolver.program, self.resolver, installed_programs(self.ollama, self.paths)
        )

    @cached_property
    def requests(self) -> list[Request]:
        return find_requests(self.commands, self.resolver)

    @cached_property
    def calls_upstream(self) -> bool:
        """Whether Ollama's code sends an upstream program any request."""
        return self._kept_or("calls_upstream", lambda: bool(self.requests))

    @cached_property
    def flow(self) -> Flow:
        return Flow(self.resolver, self.commands, self.requests)

    @cached_property
    def launch(self) -> tuple[LaunchSetting, ...]:
        return self._kept_or("launch", lambda: tuple(launch_settings(self.commands, self.resolver)))

    @cached_property
    def passed_flags(self) -> dict[str, tuple[LocalRef, ...]]:
        """The flags Ollama starts an upstream program with, each with every line that passes it: from the
        launch group when it is at hand, else from the argument lists alone (a fraction of its cost)."""
        if "launch" in self.__dict__:
            return flag_places((s.name, s.refs) for s in self.launch if s.kind == "flag")
        return self._kept_or("passed_flags", lambda: passed_flags(self.commands, self.resolver))

    @cached_property
    def endpoints(self) -> dict[str, tuple[LocalRef, ...]]:
        """The HTTP endpoints Ollama calls on the programs it starts ("POST /completion"), each with where
        its path is spelled and the request made."""
        return self._kept_or("endpoints", lambda: endpoint_places(self.requests))

    @cached_property
    def request_fields(self) -> tuple[WireField, ...]:
        return self._kept_or("request_fields", lambda: tuple(request_fields(self.requests, self.resolver)))

    @cached_property
    def response_fields(self) -> tuple[WireField, ...]:
        return self._kept_or("response_fields", lambda: tuple(response_fields(self.flow, self.requests)))

    @cached_property
    def output_patterns(self) -> tuple[OutputPattern, ...]:
        return self._kept_or("output_patterns", lambda: tuple(output_patterns(self.flow)))

    def inventory(self) -> Inventory:
        endpoints = [(r.label, LocalRef(r.func.path, r.node.start_point[0] + 1)) for r in self.requests]
        streamed = frozenset(f.endpoint for f in self.response_fields if f.direction == "stream")
        return Inventory(
            output_patterns=self.output_patterns,
            launch=self.launch,
            request_fields=self.request_fields,
            response_fields=self.response_fields,
            behaviours=tuple(behaviours(list(self.launch), list(self.request_fields), endpoints, streamed)),
            build=tuple(build_items(self.ollama, self.paths)),
        )


_LAST: list[Contracts] = []  # the inventory of the tree last asked about, kept for the next review


def contracts_of(ollama: Mapping[str, str]) -> Contracts:
    """The inventory of a tree, the last one's when the tree reads the same (consecutive reviews of one
    Ollama tree, or of heads that differ in files the inventory never read): it then goes on reading from
    the new tree."""
    if _LAST and _LAST[0].same_input(ollama):
        _LAST[0].ollama.texts = ollama
        return _LAST[0]
    _LAST[:] = [Contracts(ollama)]
    return _LAST[0]


def contract_inventory(ollama: Mapping[str, str]) -> Inventory:
    """The inventory of one Ollama tree (path -> comment-free text)."""
    return Contracts(ollama).inventory()
