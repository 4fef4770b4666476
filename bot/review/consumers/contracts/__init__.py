"""The contract inventory: everything of upstream's behaviour Ollama's code at one revision relies on, each with
its Ollama file and line.

Read from Ollama's tree alone (path -> comment-free text, read lazily): the constants its Go code compares with
what an upstream program prints or answers (`outputs`, over the values `flow` traces to a program's output or
an HTTP response), the flags and environment it starts the program with (`arguments`, over the commands and
requests `launches` finds), the JSON it sends and decodes (`wire`), the sampler, tokenizer and template
behaviours among those (`behaviours`), and what its build configuration relies on (`build`).
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.model import LocalRef
from bot.review.consumers.contracts.arguments import launch_settings
from bot.review.consumers.contracts.behaviours import behaviours
from bot.review.consumers.contracts.build import build_items, installed_programs
from bot.review.consumers.contracts.flow import Flow
from bot.review.consumers.contracts.gocode import GoProgram
from bot.review.consumers.contracts.launches import find_commands, find_requests
from bot.review.consumers.contracts.model import GROUPS, Inventory
from bot.review.consumers.contracts.outputs import output_patterns
from bot.review.consumers.contracts.resolve import Resolver
from bot.review.consumers.contracts.wire import request_fields, response_fields

__all__ = ["GROUPS", "Inventory", "contract_inventory"]


def contract_inventory(ollama: Mapping[str, str]) -> Inventory:
    """The inventory of one Ollama tree (path -> comment-free text)."""
    paths = list(ollama)
    resolver = Resolver(GoProgram(ollama, paths))
    commands = find_commands(resolver.program, resolver, installed_programs(ollama, paths))
    requests = find_requests(commands, resolver)
    flow = Flow(resolver, commands, requests)
    settings = launch_settings(commands, resolver)
    sent = request_fields(requests, resolver)
    received = response_fields(flow, requests)
    endpoints = [(r.label, LocalRef(r.func.path, r.node.start_point[0] + 1)) for r in requests]
    streamed = frozenset(f.endpoint for f in received if f.direction == "stream")
    return Inventory(
        output_patterns=tuple(output_patterns(flow)),
        launch=tuple(settings),
        request_fields=tuple(sent),
        response_fields=tuple(received),
        behaviours=tuple(behaviours(settings, sent, endpoints, streamed)),
        build=tuple(build_items(ollama, paths)),
    )
