"""The ref each pin of a bump moves to, chosen where the analysis runs: in a child process held to the
analysis limits (`bot.child.sandbox`), since the upstream's tag listing and the configured `release_tags` pattern
matched against it are both outside input."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from bot.child.sandbox import Channel
from bot.config import Config, Pin, read_version
from bot.decisions.bump import BumpRequest, RefChoice, choose_ref, newest_release
from bot.markup import code_span
from bot.model import AnalysisError
from bot.repos.mirrors import rewrite_url
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstreamrefs import advertised_tags

_COMMIT = re.compile(r"[0-9a-f]{40}")


def _not_a_tag(pin: Pin, requested: str, tags: list[str], prefix: str | None) -> str:
    """Why a named ref is refused, naming it as the person gave it, with the nearest tags that exist."""
    given = code_span(requested) if prefix is not None else f"--ref {requested}"
    near = difflib.get_close_matches(requested, tags, n=2, cutoff=0.6)
    newest = newest_release(tags, pin.release_tags) if pin.release_tags else None
    offered = [code_span(t) for t in dict.fromkeys([*near, *([newest] if newest else [])])]
    hint = f"; {' or '.join(offered)}, perhaps" if offered else ""
    return f"{given} is not a tag of {pin.upstream} (give a tag or a 40-hex commit id){hint}."


@dataclass(frozen=True)
class ChooseRefs:
    """The refs of one bump: the version files at its base (path -> bytes, None when missing), the request,
    and where each upstream is listed (a local git directory by pin name, else its URL rewritten)."""

    config: Config
    request: BumpRequest
    versions: dict[str, bytes | None]
    url_instead_of: str | None = None
    local: dict[str, str] | None = None
    prefix: str | None = "/llama"  # the command the advice names; None: the command line's options

    def __call__(self, _channel: Channel | None = None) -> list[RefChoice]:
        return [self._choice(name) for name in self.request.pins]

    def _choice(self, name: str) -> RefChoice:
        pin = self.config.pin(name)
        assert pin is not None  # `parse_request` took only configured pins
        data = self.versions.get(pin.version_file)
        if data is None:
            return RefChoice(
                name,
                None,
                None,
                refusal=f"{code_span(pin.version_file)} does not exist: nothing pins {name}.",
            )
        try:
            current = read_version(MemorySnapshot({pin.version_file: data}), pin.version_file)
        except AnalysisError:
            current = None  # garbage in the version file: the bump repairs it
        requested = self.request.ref
        url = (self.local or {}).get(name) or rewrite_url(pin.upstream, self.url_instead_of)
        if requested is not None and _COMMIT.fullmatch(requested):
            return choose_ref(pin, current, requested, [], self.prefix)  # a commit: the analysis resolves it
        try:
            tags = advertised_tags(url, pin.upstream) if pin.release_tags or requested else []
        except AnalysisError as exc:
            return RefChoice(name, current, None, refusal=str(exc))
        if requested is not None and requested not in tags:
            return RefChoice(name, current, None, refusal=_not_a_tag(pin, requested, tags, self.prefix))
        return choose_ref(pin, current, requested, tags, self.prefix)
