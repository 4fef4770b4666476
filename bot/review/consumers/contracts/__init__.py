"""The contract inventory: everything of upstream's behaviour Ollama's code at one revision relies on, each with
its Ollama file and line.

Read from Ollama's tree alone (path -> comment-free text, read lazily): the constants its Go code compares with
what an upstream program prints or answers (`outputs`, over the values `flow` traces to a program's output or
an HTTP response), the flags and environment it starts the program with (`arguments`, over the commands and
requests `launches` finds), the JSON it sends and decodes (`wire`), the sampler, tokenizer and template
behaviours among those (`behaviours`), and what its build configuration relies on (`build`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property

from bot.model import LocalRef
from bot.review.consumers.contracts.arguments import launch_settings
from bot.review.consumers.contracts.behaviours import behaviours
from bot.review.consumers.contracts.build import build_items, installed_programs
from bot.review.consumers.contracts.flow import Flow
from bot.review.consumers.contracts.gocode import GoProgram
from bot.review.consumers.contracts.launches import Command, Request, find_commands, find_requests
from bot.review.consumers.contracts.model import GROUPS, Inventory, LaunchSetting, OutputPattern, WireField
from bot.review.consumers.contracts.outputs import output_patterns
from bot.review.consumers.contracts.resolve import Resolver
from bot.review.consumers.contracts.wire import request_fields, response_fields

__all__ = ["GROUPS", "Contracts", "Inventory", "contract_inventory", "contracts_of"]


class _Reads(Mapping[str, str]):
    """A tree's texts, each one read kept (None for a path that is not there): another tree whose listing
    and those texts are the same gives the same inventory."""

    def __init__(self, texts: Mapping[str, str]):
        self.texts = texts
        self.read: dict[str, str | None] = {}

    def __getitem__(self, path: str) -> str:
        try:
            text = self.texts[path]
        except KeyError:
            self.read[path] = None
            raise
        self.read[path] = text
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)


class Contracts:
    """The inventory of one Ollama tree (path -> comment-free text), each group read on first use: a review
    asks for the few it checks, and the program's commands, requests and data flow are read once for all."""

    def __init__(self, ollama: Mapping[str, str]):
        self.ollama = _Reads(ollama)
        self.paths = list(ollama)

    def same_input(self, ollama: Mapping[str, str]) -> bool:
        """Whether another tree has the same files and the same text in each file read so far."""
        return list(ollama) == self.paths and all(ollama.get(p) == t for p, t in self.ollama.read.items())

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
    def flow(self) -> Flow:
        return Flow(self.resolver, self.commands, self.requests)

    @cached_property
    def launch(self) -> tuple[LaunchSetting, ...]:
        return tuple(launch_settings(self.commands, self.resolver))

    @cached_property
    def request_fields(self) -> tuple[WireField, ...]:
        return tuple(request_fields(self.requests, self.resolver))

    @cached_property
    def response_fields(self) -> tuple[WireField, ...]:
        return tuple(response_fields(self.flow, self.requests))

    @cached_property
    def output_patterns(self) -> tuple[OutputPattern, ...]:
        return tuple(output_patterns(self.flow))

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
