"""The ref each pin of a bump moves to, chosen where the analysis runs: in a child process held to the
analysis limits (`bot.child.sandbox`), since the upstream's tag listing and the configured `release_tags` pattern
matched against it are both outside input."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from bot.child.sandbox import Channel
from bot.config import Config, Pin, read_version
from bot.decisions.bump import BumpRequest, RefChoice, ask_for, choose_ref, newest_release
from bot.markup import code_span
from bot.model import AnalysisError
from bot.repos.gitcli import is_commit_id
from bot.repos.mirrors import rewrite_url
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstreamrefs import advertised_refs


def _current(pin: Pin, data: bytes) -> str | None:
    """The ref the version file names; None for garbage in it (the bump repairs it)."""
    try:
        return read_version(MemorySnapshot({pin.version_file: data}), pin.version_file)
    except AnalysisError:
        return None


def _follows_branch(pin: Pin, current: str | None) -> bool:
    """Whether a pin moves to its branch's head: its version file holds a commit (or garbage, with no
    release pattern to go by), not a release tag."""
    if current is not None and is_commit_id(current):
        return True
    return current is None and pin.release_tags is None


def _unknown_ref(pin: Pin, requested: str, tags: list[str], heads: dict[str, str], prefix: str | None) -> str:
    """Why a named ref is refused, naming it as the person gave it, with the nearest tags and branches."""
    given = code_span(requested) if prefix is not None else f"--ref {requested}"
    near = difflib.get_close_matches(requested, [*tags, *heads], n=2, cutoff=0.6)
    newest = newest_release(tags, pin.release_tags) if pin.release_tags else None
    tracked = [pin.track] if pin.track in heads else []
    offered = [code_span(t) for t in dict.fromkeys([*near, *([newest] if newest else []), *tracked])]
    hint = f"; {' or '.join(offered)}, perhaps" if offered else ""
    return f"{given} is not a tag or branch of {pin.upstream} (give a tag, a branch or a 40-hex commit id){hint}."


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
        current = _current(pin, data)
        requested = self.request.ref
        if requested is not None and is_commit_id(requested):
            return choose_ref(pin, current, requested, [], self.prefix)  # a commit: the analysis resolves it
        try:
            tags, heads = self._listed(pin)
        except AnalysisError as exc:
            return RefChoice(name, current, None, refusal=str(exc))
        if requested is not None:
            return self._named(pin, current, requested, tags, heads)
        if pin.track and _follows_branch(pin, current):
            return self._tracked(pin, current, heads)
        return choose_ref(pin, current, None, [t for t in tags if t not in self.request.skipped], self.prefix)

    def _listed(self, pin: Pin) -> tuple[list[str], dict[str, str]]:
        """The upstream's tags and branch heads, when the choice needs them (nothing to list otherwise)."""
        if not (pin.release_tags or pin.track or self.request.ref):
            return [], {}
        url = (self.local or {}).get(pin.name) or rewrite_url(pin.upstream, self.url_instead_of)
        listed = advertised_refs(url, pin.upstream)
        return listed.tags, listed.heads

    def _named(
        self, pin: Pin, current: str | None, requested: str, tags: list[str], heads: dict[str, str]
    ) -> RefChoice:
        """A ref the person named: a tag as it is, a branch as its head commit (what the version file then
        names); anything else refused, naming what they gave."""
        if requested in tags:
            return choose_ref(pin, current, requested, tags, self.prefix)
        if requested in heads:
            return choose_ref(pin, current, heads[requested], tags, self.prefix)
        return RefChoice(
            pin.name, current, None, refusal=_unknown_ref(pin, requested, tags, heads, self.prefix)
        )

    def _tracked(self, pin: Pin, current: str | None, heads: dict[str, str]) -> RefChoice:
        """The head of the branch the pin tracks."""
        head = heads.get(pin.track or "")
        if head is not None and head in self.request.skipped:
            return RefChoice(
                pin.name,
                current,
                None,
                refusal=f"{code_span(head)} is skipped (`skip`): waiting for the next.",
            )
        if head is None:
            why = (
                f"{pin.upstream} has no branch {code_span(pin.track or '')} ({code_span(pin.name)}'s `track`)"
            )
            return RefChoice(
                pin.name,
                current,
                None,
                refusal=f"{why}: name the ref: {ask_for(self.prefix, pin.name, '<ref>')}.",
            )
        return RefChoice(pin.name, current, head)
