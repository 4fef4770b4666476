"""The ref each pin of a bump moves to, chosen where the analysis runs: in a child process held to the
analysis limits (`bot.child.sandbox`), since the upstream's tag listing and the configured `release_tags` pattern
matched against it are both outside input."""

from __future__ import annotations

from dataclasses import dataclass

from bot.child.sandbox import Channel
from bot.config import Config, read_version
from bot.decisions.bump import BumpRequest, RefChoice, choose_ref
from bot.markup import code_span
from bot.model import AnalysisError
from bot.repos.mirrors import rewrite_url
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstreamrefs import advertised_tags


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
        if self.request.ref is not None:
            return choose_ref(pin, current, self.request.ref, [], self.prefix)
        url = (self.local or {}).get(name) or rewrite_url(pin.upstream, self.url_instead_of)
        try:
            tags = advertised_tags(url, pin.upstream) if pin.release_tags else []
        except AnalysisError as exc:
            return RefChoice(name, current, None, refusal=str(exc))
        return choose_ref(pin, current, None, tags, self.prefix)
