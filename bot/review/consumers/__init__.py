"""What of upstream llama.cpp Ollama builds, includes and calls: the review's notion of "can affect Ollama".

An upstream change matters to Ollama only when it lands in something Ollama compiles (a backend some
build turns on, a directory no option Ollama leaves OFF cuts out), in a header its compat sources
include, or in a name they use. This package reads that from plain texts (one module per source:
`settings`, `upstream_build`, `compat_sources`): Ollama's presets, CMake files, Dockerfile and
workflows, its compat C/C++ sources and carried patches; and upstream's CMake files and
headers. Everything here is a pure function over path -> text mappings (read lazily: only the files a
question needs are read). The `contracts` subpackage reads, from Ollama's tree alone, the inventory of
everything its code relies on of upstream, the llama-server interface its Go code talks to among it
(endpoints, JSON fields, flags; `python -m bot contracts` prints it).
"""

from __future__ import annotations

import pickle
import posixpath
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from bot.cache import facts
from bot.model import LocalRef
from bot.repos.snapshot import MissingBlob, Snapshot, blob_id_of
from bot.review.consumers.compat_sources import compat_source_texts, compat_uses, included_headers
from bot.review.consumers.contracts.model import Inventory
from bot.review.consumers.settings import ollama_options
from bot.review.consumers.shared import (
    BACKEND_ROOT,
    SETTABLE,
    OptionSetting,
    remembered_readings,
    truth_of,
)
from bot.review.consumers.upstream_build import shared_backend_dirs, upstream_build
from bot.review.source import code_text


@dataclass(frozen=True)
class Consumers:
    """What of an upstream Ollama's build compiles and Ollama's code uses: the review's notion of 'can
    affect Ollama'."""

    backends: frozenset[str]  # ggml backends some Ollama build turns on, lower-case; cpu always
    options: Mapping[str, tuple[OptionSetting, ...]]  # CMake variables Ollama sets, each place it does
    # upstream directory -> the option Ollama leaves or forces OFF that cuts it out
    off_dirs: Mapping[str, str]
    headers: frozenset[str]  # upstream headers (new ref) the compat sources include, transitively
    names: Mapping[str, tuple[LocalRef, ...]]  # upstream identifiers the compat sources use
    strings: Mapping[str, tuple[LocalRef, ...]]  # string literals of the compat sources
    upstream_backends: frozenset[str] = frozenset()  # every ggml/src/ggml-<name>/ directory upstream has
    shared_dirs: Mapping[str, frozenset[str]] = field(
        default_factory=dict
    )  # backend dir -> backends compiling it
    dead_options: frozenset[str] = frozenset()  # upstream options read only where Ollama's build never goes
    option_homes: Mapping[str, str] = field(
        default_factory=dict
    )  # upstream option -> the CMake file declaring it
    compat_sources: tuple[str, ...] = ()  # the files `names`/`headers` were read from

    def backend_of(self, path_or_option: str) -> str | None:
        """The ggml backend a path (`ggml/src/ggml-sycl/x.cpp`, `ggml/include/ggml-sycl.h`) or a cache
        variable (`GGML_SYCL_F16`) belongs to; None for what belongs to no single backend."""
        if "/" in path_or_option or "." in path_or_option:
            return self._path_backend(path_or_option)
        return self._option_backend(path_or_option)

    def _path_backend(self, path: str) -> str | None:
        """The backend whose directory under ggml/src/ holds the file, or whose ggml/include/ header it is."""
        name = _backend_named_in(path)
        return name if name in self.upstream_backends else None

    def _option_backend(self, option: str) -> str | None:
        """The backend a `GGML_<BACKEND>[_...]` variable is named after; the longest name on a tie."""
        if not option.startswith("GGML_"):
            return None
        rest = option[5:].lower()
        found = [b for b in self.upstream_backends if (rest + "_").startswith(b.replace("-", "_") + "_")]
        return max(found, key=len) if found else None

    def _of_unbuilt_backend(self, path_or_option: str) -> bool:
        """Whether a path or option belongs to a backend whose directory no Ollama build compiles (neither
        the backend nor one that shares the directory is turned on)."""
        backend = self.backend_of(path_or_option)
        if backend is None:
            return False
        users = self.shared_dirs.get(backend, frozenset()) | {backend}
        return not users & self.backends

    def builds(self, upstream_path: str) -> bool:
        """False for a file of a backend no Ollama build turns on, or under a directory an option Ollama
        leaves OFF cuts out of the build; True otherwise."""
        return not self._of_unbuilt_backend(upstream_path) and self.off_dir(upstream_path) is None

    def off_dir(self, upstream_path: str) -> str | None:
        """The directory of `off_dirs` that holds `upstream_path`, if any."""
        for directory in self.off_dirs:
            if upstream_path == directory or upstream_path.startswith(directory + "/"):
                return directory
        return None

    def built_option(self, option: str) -> bool:
        """False for an option of a backend no build turns on, one declared under a directory Ollama's build
        cuts out, or one upstream reads only in conditions that are false for Ollama's build."""
        if option in self.options:
            return True
        if self._of_unbuilt_backend(option):
            return False
        home = self.option_homes.get(option)
        if home is not None and self.off_dir(posixpath.dirname(home)) is not None:
            return False
        return option not in self.dead_options


MODEL = facts.Extractor("consumer-model", 1, __name__)


def remembered_model(
    ollama: Mapping[str, str],
    upstream: Mapping[str, str],
    patches: Iterable[tuple[str, object]] = (),
    compat_dir: str = "",
) -> Consumers:
    """The consumer model, from the facts store when both trees list the same files, the carried patches
    are the same, and every text the model was read from reads the same in its tree now (Ollama's files are
    read again, not parsed again); else read, and kept."""
    patch_list = list(patches)
    key = (
        facts.text_id("\n".join(ollama)),
        facts.text_id("\n".join(upstream)),
        facts.bytes_id(pickle.dumps(patch_list, protocol=5)),
        compat_dir,
    )
    return remembered_readings(
        MODEL, key, (ollama, upstream), lambda o, u: consumer_model(o, u, patch_list, compat_dir)
    )


def consumer_model(
    ollama: Mapping[str, str],
    upstream: Mapping[str, str],
    patches: Iterable[tuple[str, object]] = (),
    compat_dir: str = "",
) -> Consumers:
    """The consumer model of one Ollama tree (path -> comment-free text) against one upstream ref (path ->
    text); `patches` are (path, bot.patches.patchfile.PatchFile) of the carried patches, `compat_dir` the
    pin's patch directory (where its compat sources are when it carries no patch)."""
    patch_list = list(patches)
    ollama_paths = list(ollama)
    upstream_paths = list(upstream)
    options, preset_backends = ollama_options(ollama, ollama_paths)
    upstream_backends = _upstream_backends(upstream_paths)
    backends = _built_backends(options, preset_backends, upstream_backends)
    build = upstream_build(upstream, upstream_paths, options)
    shared = shared_backend_dirs(upstream, upstream_backends, frozenset(backends))
    sources = compat_source_texts(ollama, ollama_paths, patch_list, compat_dir)
    uses = compat_uses(sources)
    return Consumers(
        backends=frozenset(backends),
        options=options,
        off_dirs=build.off_dirs,
        headers=included_headers(sources, ollama, ollama_paths, upstream, upstream_paths),
        names=uses.names,
        strings=uses.strings,
        upstream_backends=upstream_backends,
        shared_dirs=shared,
        dead_options=build.dead_options - set(options),
        option_homes=build.option_homes,
        compat_sources=tuple(sorted({path for path, _, _ in sources})),
    )


def _upstream_backends(upstream_paths: list[str]) -> frozenset[str]:
    """Every backend upstream has a ggml/src/ggml-<name>/ directory for."""
    return frozenset(
        p.split("/")[2][5:]
        for p in upstream_paths
        if p.startswith(BACKEND_ROOT + "ggml-") and p.count("/") >= 3
    )


def _built_backends(
    options: Mapping[str, tuple[OptionSetting, ...]],
    preset_backends: Iterable[str],
    upstream_backends: frozenset[str],
) -> set[str]:
    """The backends some Ollama build turns on: cpu, and each upstream backend whose GGML_<NAME> a preset
    names or a setting outside the presets turns ON."""
    backends = {"cpu"}
    for name, settings in options.items():
        backend = name[5:].lower() if name.startswith("GGML_") else ""
        if backend in upstream_backends and (backend in preset_backends or _set_on_outside_presets(settings)):
            backends.add(backend)
    return backends


def _set_on_outside_presets(settings: tuple[OptionSetting, ...]) -> bool:
    """Whether a setting outside the presets (a CMake file, a Dockerfile, a workflow) turns the variable ON;
    presets count through the backends their visible presets turn on."""
    return any(truth_of(s.value) is True and not s.ref.path.endswith("CMakePresets.json") for s in settings)


def _backend_named_in(path: str) -> str | None:
    """The <name> of a path under ggml/src/ggml-<name>/, or of a header ggml/include/ggml-<name>.h."""
    parts = path.split("/")
    if path.startswith(BACKEND_ROOT) and len(parts) > 3 and parts[2].startswith("ggml-"):
        return parts[2][5:]
    stem = posixpath.splitext(parts[-1])[0]
    return stem[5:] if parts[:2] == ["ggml", "include"] and stem.startswith("ggml-") else None


class SnapshotTexts(Mapping[str, str]):
    """A snapshot's files as comment-free texts, read on first use; a file a partial clone lacks is absent
    (KeyError), so the model simply does without it."""

    def __init__(self, snapshot: Snapshot):
        self._snapshot = snapshot
        self._texts: dict[str, str] = {}
        self._ids: dict[str, str | None] = {}

    @cached_property
    def _paths(self) -> list[str]:
        return self._snapshot.files("")

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __getitem__(self, path: str) -> str:
        if path not in self._texts:
            data = self._read(path)
            if data is None:
                raise KeyError(path)
            self._texts[path] = code_text(data.decode("utf-8", "replace"), path)
        return self._texts[path]

    def source_id(self, path: str) -> str | None:
        """The content address of the file's bytes (None: not there), from the snapshot's listing where it
        has one, nothing read: its text is a function of them and its path."""
        if path not in self._ids:
            try:
                self._ids[path] = blob_id_of(self._snapshot, path)
            except MissingBlob:
                self._ids[path] = None
        return self._ids[path]

    def _read(self, path: str) -> bytes | None:
        try:
            data = self._snapshot.read(path)
        except MissingBlob:
            data = None
        self._ids[path] = None if data is None else facts.bytes_id(data)
        return data


def explain(c: Consumers, inventory: Inventory) -> str:
    """The model as text for a person: what is built and why, from where; what the compat code relies on;
    and, from the contract inventory, what the Go code relies on of the upstream programs it starts."""
    lines = [line for section in _EXPLAINED for line in section(c)]
    return "\n".join([*lines, *_explain_programs(inventory)]) + "\n"


def _where(refs: Iterable[LocalRef], limit: int = 3) -> str:
    refs = list(refs)
    shown = ", ".join(f"{r.path}:{r.line}" for r in refs[:limit])
    return shown + (f" (+{len(refs) - limit} more)" if len(refs) > limit else "")


def _listed(items: Iterable[str]) -> str:
    """The items comma-separated, or "none": every list of the explanation says so when it is empty."""
    return ", ".join(items) or "none"


def _explain_backends(c: Consumers) -> Iterator[str]:
    """The backends built, and where Ollama turns each on."""
    yield "Backends built:"
    for backend in sorted(c.backends):
        settings = c.options.get(f"GGML_{backend.upper()}", ())
        on = [s.ref for s in settings if truth_of(s.value) is True]
        yield f"  {backend}: " + (f"GGML_{backend.upper()}=ON at {_where(on)}" if on else "always built")


def _explain_unbuilt(c: Consumers) -> Iterator[str]:
    """The backends no build turns on, and the directories of such backends a built one compiles."""
    not_built = sorted(
        b for b in c.upstream_backends - c.backends if not c.shared_dirs.get(b, frozenset()) & c.backends
    )
    yield "Backends not built (no Ollama build turns them on): " + _listed(not_built)
    shared = {d: sorted(u) for d, u in c.shared_dirs.items() if d not in c.backends}
    for directory, users in sorted(shared.items()):
        yield f"  ggml/src/ggml-{directory}/ is compiled by {', '.join(users)} too"


def _explain_off_dirs(c: Consumers) -> Iterator[str]:
    """The directories cut out of the build, with the option that cuts each and why it is off."""
    yield "Upstream directories cut out of Ollama's build:"
    for directory, option in c.off_dirs.items():
        settings = c.options.get(option, ())
        how = (
            f"Ollama sets it {settings[0].value} at {_where([s.ref for s in settings])}"
            if settings
            else "upstream's default is OFF and Ollama does not set it"
        )
        yield f"  {directory}/ (needs {option}: {how})"
    if not c.off_dirs:
        yield "  none"


def _explain_options(c: Consumers) -> Iterator[str]:
    """The cache variables Ollama sets, with their values and where."""
    yield f"Cache variables Ollama sets: {len(c.options)}"
    for name, settings in c.options.items():
        if SETTABLE.fullmatch(name):
            values = ", ".join(dict.fromkeys(s.value for s in settings))
            yield f"  {name}={values} ({_where([s.ref for s in settings], 2)})"


def _explain_compat(c: Consumers) -> Iterator[str]:
    """What the compat sources read of upstream: headers, names, strings."""
    yield f"Compat sources read: {_listed(c.compat_sources)}"
    yield f"Upstream headers they include ({len(c.headers)}): " + _listed(sorted(c.headers))
    yield (
        f"Upstream names they use ({len(c.names)}): "
        + ", ".join(sorted(c.names)[:60])
        + (" ..." if len(c.names) > 60 else "")
    )
    yield f"String literals they hold: {len(c.strings)}"


def _explain_programs(inventory: Inventory) -> Iterator[str]:
    """What Ollama's Go code relies on of the upstream programs it starts: endpoints, JSON fields, flags."""
    endpoints: dict[str, LocalRef] = {}
    for wire in (*inventory.request_fields, *inventory.response_fields):
        endpoints.setdefault(wire.endpoint, wire.ref)
    yield "Endpoints Ollama requests: " + _listed(f"{e} ({_where([r], 1)})" for e, r in endpoints.items())
    yield "JSON fields Ollama sends: " + _listed(dict.fromkeys(f.path for f in inventory.request_fields))
    yield "JSON fields Ollama reads: " + _listed(dict.fromkeys(f.path for f in inventory.response_fields))
    flags: dict[str, set[str]] = {}
    for setting in inventory.launch:
        if setting.kind == "flag":
            flags.setdefault(setting.program, set()).add(setting.name)
    if not flags:
        yield "Flags Ollama starts upstream programs with: none"
    for program, names in flags.items():
        yield f"{program} flags Ollama passes: " + _listed(sorted(names))


_EXPLAINED = (
    _explain_backends,
    _explain_unbuilt,
    _explain_off_dirs,
    _explain_options,
    _explain_compat,
)
