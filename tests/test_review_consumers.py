"""The consumer model: what of upstream llama.cpp Ollama builds, includes and calls.

Most tests read real excerpts of Ollama (commit fb30760) and of llama.cpp at the ref it pins (b10488),
committed under tests/data/consumers/ (SOURCE.md there says where each file came from); a few build
small trees to pin down one rule each; the last ones run on the real mirrors when they are there.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pygit2
import pytest

from bot.patches.patchfile import parse
from bot.repos.snapshot import GitSnapshot
from bot.review.consumers import SnapshotTexts, consumer_model, explain
from bot.review.consumers.contracts import Contracts, contract_inventory
from bot.review.source import code_text

DATA = Path(__file__).parent / "data" / "consumers"


class Tree(Mapping[str, str]):
    """A tree as the review hands it over: every path listed, a text read only when asked (and noted)."""

    def __init__(self, texts: dict[str, str], paths: list[str] | None = None):
        self.texts = texts
        self.paths = paths if paths is not None else sorted(texts)
        self.read: list[str] = []

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, path: str) -> str:
        self.read.append(path)
        if path not in self.texts:
            raise KeyError(path)
        return code_text(self.texts[path], path)


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for p in root.rglob("*")
        if p.is_file() and p.name not in ("SOURCE.md", "paths.txt")
    }


def _patches(tree: Mapping[str, str]) -> list:
    return [(p, parse(tree.texts[p].encode())) for p in sorted(tree.texts) if p.endswith(".patch")]


@pytest.fixture(scope="module")
def real():
    ollama = Tree(_files(DATA / "ollama"))
    upstream = Tree(_files(DATA / "upstream"), (DATA / "upstream" / "paths.txt").read_text().split())
    return consumer_model(ollama, upstream, _patches(ollama)), ollama, upstream


def _line(tree: Tree, ref) -> str:
    return tree.texts[ref.path].split("\n")[ref.line - 1]


def test_backends_are_those_some_preset_turns_on(real):
    model, ollama, _ = real
    assert {"cpu", "cuda", "hip", "vulkan", "metal"} <= model.backends
    assert not {"sycl", "openvino", "webgpu", "cann", "musa"} & model.backends
    assert not model.builds("ggml/src/ggml-sycl/ggml-sycl.cpp")
    assert not model.builds("ggml/include/ggml-sycl.h")
    assert model.builds("ggml/src/ggml-cuda/mmq.cu") and model.builds("ggml/src/ggml-vulkan/CMakeLists.txt")
    assert model.backend_of("ggml/src/ggml-sycl/x.cpp") == "sycl"
    assert model.backend_of("GGML_SYCL_F16") == "sycl" and model.backend_of("GGML_NATIVE") is None
    assert model.backend_of("GGML_CUDA_NO_PEER_COPY") == "cuda" and model.backend_of("src/llama.cpp") is None
    assert not model.built_option("GGML_SYCL_F16") and not model.built_option("GGML_OPENVINO_DEVICE")
    assert model.built_option("GGML_CUDA_NO_PEER_COPY") and model.built_option("GGML_METAL_EMBED_LIBRARY")
    (cuda, *_) = [s for s in model.options["GGML_CUDA"] if s.value == "ON"]
    assert cuda.ref.path == "llama/server/CMakePresets.json" and '"GGML_CUDA": "ON"' in _line(
        ollama, cuda.ref
    )
    # set through Ollama's own ollama_set_cache_default(NAME TYPE VALUE DOC) helper
    (peer_copy,) = model.options["GGML_CUDA_NO_PEER_COPY"]
    assert peer_copy.value == "ON" and "GGML_CUDA_NO_PEER_COPY" in _line(ollama, peer_copy.ref)


def test_directories_an_option_left_off_cuts_out(real):
    model, ollama, _ = real
    # tools/ui's sources are built by a -P script only under if(BUILD_UI), given -DBUILD_UI=${LLAMA_BUILD_UI}
    assert model.off_dirs["tools/ui"] == "LLAMA_BUILD_UI"
    assert (
        model.off_dirs["tests"] == "LLAMA_BUILD_TESTS"
        and model.off_dirs["examples"] == "LLAMA_BUILD_EXAMPLES"
    )
    assert model.off_dirs["tools/rpc"] == "GGML_RPC"  # upstream's default OFF, and Ollama leaves it
    assert not model.builds("tools/ui/src/lib/constants/settings-config.ts")
    assert model.builds("tools/server/server-context.cpp") and model.builds("tools/mtmd/clip.cpp")
    (ui,) = model.options["LLAMA_BUILD_UI"]
    assert ui.value == "OFF" and "set(LLAMA_BUILD_UI OFF CACHE BOOL" in _line(ollama, ui.ref)
    # read only in `if (LLAMA_BUILD_MTMD AND NOT (LLAMA_BUILD_COMMON AND LLAMA_BUILD_TOOLS))`: Ollama forces both ON
    assert not model.built_option("LLAMA_BUILD_MTMD")


def test_headers_compat_sources_include_transitively(real):
    model, _, upstream = real
    # llama-ollama-compat-util.cpp includes llama-model-loader.h, which includes llama-hparams.h
    assert {"src/llama-model-loader.h", "src/llama-hparams.h", "src/llama-impl.h"} <= model.headers
    assert not any(h.startswith("llama/") for h in model.headers)  # Ollama's own headers are no upstream's
    assert not any(p.startswith(("tools/ui/src/", "ggml/src/ggml-sycl/ggml-sycl")) for p in upstream.read)


def test_names_are_uses_never_parameters_or_own_functions(real):
    model, ollama, _ = real
    assert "key" not in model.names  # the parameter of has_key() and the inject_*_if_missing helpers
    assert "has_key" not in model.names  # defined by the compat util itself
    assert "gguf_find_key" in model.names and "gguf_set_val_u32" in model.names
    hparams = model.names["hparams"]  # `ctx->model.hparams.projection_dim` in the clip.cpp hook
    assert any("model.hparams" in _line(ollama, r) for r in hparams)
    assert all(r.path.endswith(".patch") for r in hparams)


def _contracts_tree() -> dict[str, str]:
    """The excerpts of Ollama the contract inventory's tests read (tests/data/contracts/, whole packages)."""
    root = Path(__file__).parent / "data" / "contracts" / "ollama"
    return {
        path: code_text(gzip.decompress(file.read_bytes()).decode(), path)
        for file in root.rglob("*.gz")
        if (path := file.relative_to(root).as_posix().removesuffix(".gz"))
    }


def test_the_go_codes_endpoints_fields_and_flags_are_the_inventorys(real):
    """What the Go code relies on of llama-server is no part of the model: the contract inventory reads it, and
    the explanation shows it from there."""
    model, ollama, _ = real
    assert not any(path.endswith(".go") for path in ollama.read)
    text = explain(model, contract_inventory(_contracts_tree()))
    assert "POST /completion (llm/llama_server.go:" in text and "GET /health (llm/llama_server.go:" in text
    sent = text.split("JSON fields Ollama sends: ")[1].split("\n")[0].split(", ")
    read = text.split("JSON fields Ollama reads: ")[1].split("\n")[0].split(", ")
    assert {"prompt", "n_predict", "cache_prompt"} <= set(sent) and "stop_type" not in sent
    assert {"content", "stop_type", "timings.prompt_n", "status"} <= set(read) and "n_predict" not in read
    flags = text.split("llama-server flags Ollama passes: ")[1].split("\n")[0].split(", ")
    assert {"--no-webui", "--offline", "--flash-attn", "--log-verbosity", "--port", "--lora"} <= set(flags)


def test_explain_says_what_is_built_and_from_where(real):
    text = explain(real[0], contract_inventory(real[1]))
    assert text.endswith("Flags Ollama starts upstream programs with: none\n")  # the excerpt starts none
    assert "  cuda: GGML_CUDA=ON at llama/server/CMakePresets.json:" in text
    assert "  cpu: always built" in text
    assert "tools/ui/ (needs LLAMA_BUILD_UI: Ollama sets it OFF at llama/server/CMakeLists.txt:" in text
    assert "sycl" in text.split("Backends not built")[1].split("\n")[0]
    assert "src/llama-hparams.h" in text


UPSTREAM = {
    "CMakeLists.txt": 'option(LLAMA_BUILD_X "x" ON)\noption(LLAMA_BUILD_Y "y" ON)\n'
    "if (LLAMA_BUILD_X)\n    add_subdirectory(x)\nendif()\n"
    "if (LLAMA_BUILD_Y)\n    add_subdirectory(y)\nendif()\n"
    "add_subdirectory(y)\n"
    "if (NOT LLAMA_BUILD_Y)\n    add_subdirectory(z)\nendif()\n",
    "x/CMakeLists.txt": "add_library(x x.cpp)\n",
    "x/x.cpp": "int x;\n",
    "y/CMakeLists.txt": "add_library(y y.cpp)\n",
    "z/CMakeLists.txt": "add_library(z z.cpp)\n",
    "ggml/src/ggml-sycl/ggml-sycl.cpp": "",
    "ggml/src/ggml-cuda/CMakeLists.txt": "",
    "ggml/src/ggml-hip/CMakeLists.txt": 'file(GLOB SRCS "../ggml-cuda/*.cu")\n',
    "src/llama-model.h": '#include "llama-hparams.h"\n',
    "src/llama-hparams.h": "struct llama_hparams { int n_layer; };\n",
}


def _model(ollama: dict[str, str], upstream: dict[str, str] = UPSTREAM, patches=()):
    return consumer_model(Tree(ollama), Tree(upstream), list(patches))


def test_a_directory_is_off_only_when_every_build_leaves_its_option_off():
    forced = _model({"llama/server/CMakeLists.txt": 'set(LLAMA_BUILD_X OFF CACHE BOOL "" FORCE)\n'})
    assert forced.off_dirs["x"] == "LLAMA_BUILD_X" and not forced.builds("x/x.cpp")
    assert "x" not in _model({}).off_dirs  # upstream's default is ON
    # a preset sets it OFF for one build; the others take the default
    preset = '{"configurePresets": [{"name": "a", "cacheVariables": {"LLAMA_BUILD_X": "OFF"}}]}'
    assert "x" not in _model({"CMakePresets.json": preset}).off_dirs
    # y is also added unconditionally; z only under NOT LLAMA_BUILD_Y, which Ollama forces ON
    forced_y = _model({"CMakeLists.txt": "set(LLAMA_BUILD_Y OFF)\n"})
    assert "y" not in forced_y.off_dirs and "z" in _model({}).off_dirs


def test_upstreams_build_walk_is_kept_with_the_texts_it_read_and_walked_again_when_one_changes(
    tmp_path, monkeypatch
):
    import sys

    from bot.cache import facts

    walks = sys.modules["bot.review.consumers.upstream_build"]  # the package exports its function's name
    forced = {"llama/server/CMakeLists.txt": 'set(LLAMA_BUILD_X OFF CACHE BOOL "" FORCE)\n'}
    with facts.using(facts.FactStore(tmp_path / "facts")):
        first = _model(forced)
        walk = walks._cmake_tree
        monkeypatch.setattr(walks, "_cmake_tree", lambda *args: pytest.fail("walked again"))
        assert _model(forced) == first and first.off_dirs["x"] == "LLAMA_BUILD_X"
        monkeypatch.setattr(walks, "_cmake_tree", walk)
        top = UPSTREAM["CMakeLists.txt"].replace("add_subdirectory(x)", "add_subdirectory(w)")
        assert (
            "x" not in _model(forced, {**UPSTREAM, "CMakeLists.txt": top}).off_dirs
        )  # a text it read changed


def test_a_backend_is_built_when_a_visible_preset_turns_it_on_through_inherits():
    presets = (
        '{"configurePresets": ['
        '{"name": "base", "hidden": true, "cacheVariables": {"GGML_SYCL": "ON", "GGML_HIP": true}},'
        '{"name": "orphan", "hidden": true, "cacheVariables": {"GGML_CUDA": "ON"}},'
        '{"name": "sycl", "inherits": ["base"], "cacheVariables": {"GGML_HIP": false}}]}'
    )
    model = _model({"llama/server/CMakePresets.json": presets})
    assert model.backends == {"cpu", "sycl"}
    assert model.builds("ggml/src/ggml-sycl/ggml-sycl.cpp") and not model.builds("ggml/src/ggml-cuda/x.cu")
    # HIP compiles ggml-cuda's kernels: a build with HIP builds that directory
    on_the_command_line = _model({"Dockerfile": "RUN cmake -B build -DGGML_HIP=ON\n"})
    assert "hip" in on_the_command_line.backends and on_the_command_line.builds("ggml/src/ggml-cuda/x.cu")


def test_compat_names_exclude_locals_and_own_declarations_and_follow_patches():
    source = (
        '#include "llama-model.h"\n'
        "static int own_helper(int n) { return n; }\n"
        "void translate(const llama_model & model) {\n"
        '    auto key = "general.architecture";\n'
        "    int count = own_helper(model.hparams.n_layer);\n"
        "    llm_graph_input::set_input(count, LLAMA_MAX_LAYERS);\n"
        "}\n"
    )
    hook = (
        "--- a/src/llama-context.cpp\n+++ b/src/llama-context.cpp\n@@ -1,1 +1,3 @@\n"
        ' #include "llama.h"\n+#include "llama-model.h"\n+    llama_ollama_hook(ctx->cparams);\n'
    )
    model = _model(
        {"llama/compat/compat.cpp": source, "llama/compat/hook.patch": hook},
        patches=[("llama/compat/hook.patch", parse(hook.encode()))],
    )
    assert {
        "hparams",
        "n_layer",
        "llama_model",
        "LLAMA_MAX_LAYERS",
        "llm_graph_input::set_input",
        "set_input",
    } <= set(model.names)
    assert not {"key", "count", "own_helper", "translate", "model"} & set(model.names)
    assert model.strings["general.architecture"][0].path == "llama/compat/compat.cpp"
    # the hunk's added line, shown where it stands in the patch file
    (hook_ref,) = model.names["cparams"]
    assert (hook_ref.path, hook_ref.line) == ("llama/compat/hook.patch", 6)
    assert model.headers == {"src/llama-model.h", "src/llama-hparams.h"}


def test_snapshot_texts_read_a_commit_lazily(tmp_path):
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    builder = repo.TreeBuilder()
    builder.insert(
        "CMakeLists.txt",
        repo.create_blob(b'# comment\nset(LLAMA_BUILD_X OFF CACHE BOOL "" FORCE)\n'),
        pygit2.GIT_FILEMODE_BLOB,
    )
    sig = pygit2.Signature("t", "t@example.com")
    commit = repo.create_commit(None, sig, sig, "c", builder.write(), [])
    texts = SnapshotTexts(GitSnapshot(repo, repo[commit]))
    assert list(texts) == ["CMakeLists.txt"] and texts["CMakeLists.txt"].startswith(" " * 9 + "\nset(")
    with pytest.raises(KeyError):
        texts["missing.txt"]
    model = consumer_model(texts, Tree(UPSTREAM), [])
    assert model.off_dirs["x"] == "LLAMA_BUILD_X"


REAL_OLLAMA = os.environ.get("LLAMA_BOT_REAL_OLLAMA")
REAL_LLAMA_CPP = os.environ.get("LLAMA_BOT_REAL_LLAMA_CPP")


@pytest.mark.skipif(
    not (REAL_OLLAMA and REAL_LLAMA_CPP),
    reason="set LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP to the real bare repositories",
)
def test_on_the_real_trees():
    from bot.repos.buildpatches import patch_stack
    from tests.real.extract import RefResolver

    ollama_repo = pygit2.Repository(REAL_OLLAMA)
    head = GitSnapshot(ollama_repo, ollama_repo.revparse_single("HEAD").peel(pygit2.Commit))
    ref = (head.read("LLAMA_CPP_VERSION") or b"").decode().strip()
    upstream_repo = pygit2.Repository(REAL_LLAMA_CPP)
    new = GitSnapshot(upstream_repo, RefResolver(Path(REAL_LLAMA_CPP)).resolve(ref))
    paths = patch_stack(head, "LLAMA_CPP_VERSION", ["llama/compat"]).paths
    ollama = SnapshotTexts(head)
    model = consumer_model(ollama, SnapshotTexts(new), [(p, parse(head.read(p) or b"")) for p in paths])
    assert {"cpu", "cuda", "hip", "vulkan", "metal"} <= model.backends and "sycl" not in model.backends
    assert not model.builds("ggml/src/ggml-sycl/ggml-sycl.cpp") and "src/llama-hparams.h" in model.headers
    assert "key" not in model.names
    assert {"--load-mode", "--model", "--port", "--flash-attn"} <= set(Contracts(ollama).passed_flags)


def test_check_explains_the_consumer_model_and_still_checks(tmp_path):
    import subprocess
    import sys

    from tests import demo

    scenario = demo.build(tmp_path / "demo", commits_between=30)

    def check(*extra: str) -> subprocess.CompletedProcess:
        command = [
            "check",
            "--repo",
            str(scenario.ollama),
            "--upstream-dir",
            f"llama.cpp={scenario.upstream}",
        ]
        return subprocess.run(
            [sys.executable, "-m", "bot", *command, *extra], capture_output=True, text=True, check=False
        )

    plain, explained = check(), check("--explain-consumers")
    assert (explained.returncode, explained.stdout) == (plain.returncode, plain.stdout)  # the same check
    assert f"### llama.cpp: `{demo.OLD_TAG}` → `{demo.NEW_TAG}`" in explained.stdout
    assert "llama-bot: llama.cpp: what Ollama (" in explained.stderr
    assert f"of {demo.NEW_TAG} (" in explained.stderr and "what Ollama" not in plain.stderr
    assert "  cpu: always built\n" in explained.stderr
    assert "llama-server flags Ollama passes: --ctx-size, --flash-attn, --n-gpu-layers\n" in explained.stderr
    assert "  GGML_CUDA=OFF (llama/server/CMakeLists.txt:2)\n" in explained.stderr


def test_the_model_is_kept_and_read_again_only_where_a_text_it_read_changed(tmp_path, monkeypatch):
    """A re-check reads Ollama's files again but builds the model from them only when one it was built from
    reads otherwise, a path appears or goes, or a carried patch changes."""
    from bot.cache import facts
    from bot.review import consumers

    def trees(**ollama_edits: str) -> tuple[Tree, Tree]:
        ollama = Tree({**_files(DATA / "ollama"), **ollama_edits})
        upstream = Tree(_files(DATA / "upstream"), (DATA / "upstream" / "paths.txt").read_text().split())
        return ollama, upstream

    def remembered(ollama: Tree, upstream: Tree) -> consumers.Consumers:
        return consumers.remembered_model(ollama, upstream, _patches(ollama))

    store = facts.FactStore(tmp_path / "facts")
    with facts.using(store):
        first = remembered(*trees())
        assert first == consumer_model(*trees(), _patches(trees()[0]))
        build = consumers.consumer_model
        monkeypatch.setattr(consumers, "consumer_model", lambda *a: pytest.fail("built again"))
        ollama, upstream = trees()
        assert remembered(ollama, upstream) == first
        assert "CMakePresets.json" in ollama.read  # read again, to compare
        unread = [p for p in ollama.paths if p not in ollama.read]
        assert unread  # files the model does not read ...
        assert remembered(*trees(**{unread[0]: "changed\n"})) == first  # ... change nothing
        monkeypatch.setattr(consumers, "consumer_model", build)
        presets = ollama.texts["CMakePresets.json"].replace(
            '"CMAKE_BUILD_TYPE": "Release"', '"CMAKE_BUILD_TYPE": "Debug"'
        )
        edited = trees(**{"CMakePresets.json": presets})
        assert remembered(*edited) == consumer_model(*edited, _patches(edited[0]))
        assert remembered(*edited).options["CMAKE_BUILD_TYPE"][0].value == "Debug"
        added = trees(**{"llama/compat/extra.cpp": "int ggml_extra_use() { return ggml_nbytes(0); }\n"})
        assert remembered(*added).names.keys() - first.names.keys() == {"ggml_nbytes"} - first.names.keys()
        assert "llama/compat/extra.cpp" in {
            r.path for refs in remembered(*added).names.values() for r in refs
        }


def test_a_kept_model_is_compared_with_a_snapshots_files_by_their_bytes(tmp_path, monkeypatch):
    """A re-check reads each file the model was read from again, and compares its bytes: no comment-free
    text is made of a file only compared; a file whose bytes changed makes the model read again."""
    from bot.cache import facts
    from bot.repos.snapshot import MemorySnapshot
    from bot.review import consumers

    def snapshots(**edits: str) -> tuple[SnapshotTexts, SnapshotTexts]:
        ollama = {p: t.encode() for p, t in {**_files(DATA / "ollama"), **edits}.items()}
        upstream = {p: t.encode() for p, t in _files(DATA / "upstream").items()}
        return SnapshotTexts(MemorySnapshot(ollama)), SnapshotTexts(MemorySnapshot(upstream))

    patches = _patches(Tree(_files(DATA / "ollama")))
    with facts.using(facts.FactStore(tmp_path / "facts")):
        first = consumers.remembered_model(*snapshots(), patches)
        made = []
        monkeypatch.setattr(consumers, "code_text", lambda *a: made.append(a) or code_text(*a))
        assert consumers.remembered_model(*snapshots(), patches) == first
        assert made == []
        presets = _files(DATA / "ollama")["CMakePresets.json"].replace('"Release"', '"Debug"', 1)
        again = consumers.remembered_model(*snapshots(**{"CMakePresets.json": presets}), patches)
    assert again.options["CMAKE_BUILD_TYPE"][0].value == "Debug" and made


def test_a_commits_files_are_compared_by_the_blob_ids_its_tree_lists(tmp_path, monkeypatch):
    """A snapshot of a commit gives a file's content address from its tree, nothing read; a file whose object
    the clone lacks reads as no file, as `read` has it."""
    from bot.cache import facts
    from bot.repos import snapshot

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    texts = {"CMakeLists.txt": b"set(LLAMA_BUILD_X OFF)\n", "lost.go": b"package lost\n"}
    builder = repo.TreeBuilder()
    for path, data in texts.items():
        builder.insert(path, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    sig = pygit2.Signature("t", "t@example.com")
    commit = repo[repo.create_commit(None, sig, sig, "c", builder.write(), [])]
    lost = facts.bytes_id(texts["lost.go"])
    (tmp_path / "r" / "objects" / lost[:2] / lost[2:]).unlink()  # a partial clone's missing blob
    monkeypatch.setattr(snapshot.BlobCache, "read", lambda *a: pytest.fail("a blob was read"))
    ids = SnapshotTexts(GitSnapshot(repo, commit))
    assert ids.source_id("CMakeLists.txt") == facts.bytes_id(texts["CMakeLists.txt"])
    assert ids.source_id("lost.go") is None and ids.source_id("none.go") is None
    monkeypatch.undo()
    read = SnapshotTexts(GitSnapshot(repo, commit))
    assert "lost.go" not in read and read.source_id("CMakeLists.txt") == ids.source_id("CMakeLists.txt")


def test_a_patchs_lines_see_the_headers_of_the_upstream_file_it_edits():
    """A patch's added lines compile inside the upstream file they edit: a member they use is declared in a
    header that file includes, which the patch never spells."""
    from bot.review.consumers.compat_sources import compat_source_texts, included_headers

    patch = parse(
        b"diff --git a/tools/mtmd/clip.cpp b/tools/mtmd/clip.cpp\n"
        b"--- a/tools/mtmd/clip.cpp\n+++ b/tools/mtmd/clip.cpp\n"
        b"@@ -1,2 +1,3 @@\n int clip_n_embd(const clip_ctx * ctx) {\n"
        b"+    return ctx->model.hparams.projection_dim;\n }\n"
    )
    upstream = {
        "tools/mtmd/clip.cpp": '#include "clip-model.h"\nint clip_n_embd(const clip_ctx * ctx) {\n}\n',
        "tools/mtmd/clip-model.h": '#include "ggml.h"\nstruct clip_hparams { int projection_dim = 0; };\n',
        "ggml/include/ggml.h": "struct ggml_tensor;\n",
        "tools/mtmd/other.h": "int unrelated;\n",
    }
    sources = compat_source_texts({}, [], [("llama/compat/001-hooks.patch", patch)])
    headers = included_headers(sources, {}, [], upstream, list(upstream))
    assert headers == {"tools/mtmd/clip-model.h", "ggml/include/ggml.h"}
