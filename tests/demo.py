"""`make demo`: an offline llama.cpp-like upstream, an Ollama-like PR bumping it, and the checklist.

The same scenario backs the end-to-end tests: every patch status appears once. The sample
repositories live in a temporary directory, removed at the end unless --keep; the regenerated
patches go to ./demo-out, where a newcomer can read them after the run.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.cli.parser import Parser
from tests.fixtures import RepoBuilder

OLD_TAG, NEW_TAG = "b100", "b350"


def _numbered(prefix: str, count: int) -> str:
    return "".join(f"{prefix} {i};\n" for i in range(count))


def _clip(extra_helpers: int = 0, renamed: bool = False, nested: bool = False) -> str:
    helpers = "".join(
        f"static int clip_helper_{i}(int x) {{\n    return x + {i};\n}}\n\n" for i in range(extra_helpers)
    )
    projector = (
        (
            "    if (ctx->has_projector) {\n"
            "        ctx->proj_type = clip_projector_type(ctx);\n"
            "        ctx->n_patches = clip_n_patches(ctx);\n"
            "        ctx->n_embd = clip_n_mmproj_embd(ctx);\n"
            "    }\n"
        )
        if nested
        else (
            "    ctx->proj_type = clip_projector_type(ctx);\n"
            "    ctx->n_patches = clip_n_patches(ctx);\n"
            "    ctx->n_embd = clip_n_mmproj_embd(ctx);\n"
        )
    )
    warmup = "    clip_warmup_graph(ctx, WARMUP_DEFAULT);\n" if renamed else "    clip_warmup(ctx);\n"
    return (
        '#include "clip.h"\n\n'
        + helpers
        + "struct clip_ctx * clip_init(const char * fname, struct clip_context_params params) {\n"
        "    struct clip_ctx * ctx = new clip_ctx(params);\n"
        "    load_tensors(ctx, fname);\n" + projector + "    ctx->image_size = 336;\n"
        "    ctx->patch_size = 14;\n"
        "    ctx->max_nodes = 8192;\n" + warmup + "    return ctx;\n"
        "}\n\n"
        "void clip_free(struct clip_ctx * ctx) {\n"
        "    delete ctx;\n"
        "}\n"
    )


def _vocab(lines_above: int = 0, tweak: bool = False) -> str:
    return (
        '#include "llama-vocab.h"\n\n'
        + _numbered("static const int vocab_table_entry =", lines_above)
        + "int llama_vocab::n_tokens() const {\n"
        "    return (int) id_to_token.size();\n"
        "}\n\n"
        "llama_token llama_vocab::token_bos() const {\n"
        f"    return special_bos_id;{' // beginning of sequence' if tweak else ''}\n"
        "}\n\n"
        "llama_token llama_vocab::token_eos() const {\n"
        "    return special_eos_id;\n"
        "}\n\n"
        "const std::string & llama_vocab::token_get_text(llama_token id) const {\n"
        "    return id_to_token.at(id).text;\n"
        "}\n"
    )


def _arch_h(extra: list[str]) -> str:
    entries = [
        "LLM_ARCH_LLAMA = 0",
        "LLM_ARCH_GEMMA = 1",
        "LLM_ARCH_QWEN = 2",
        "LLM_ARCH_MISTRAL = 53",
        *extra,
    ]
    return (
        "#pragma once\n\nenum llm_arch {\n"
        + "".join(f"    {e},\n" for e in entries)
        + "    LLM_ARCH_UNKNOWN,\n};\n"
    )


def _sampling(upstreamed: bool) -> str:
    body = (
        '#include "sampling.h"\n\n'
        "float common_sampler_temp(const common_params_sampling & p) {\n"
        "    return p.temp;\n"
        "}\n"
    )
    if upstreamed:
        body += "\nfloat common_sampler_min_p(const common_params_sampling & p) {\n    return p.min_p;\n}\n"
    return body


def _cmake(subprocess_option: bool) -> str:
    return (
        "cmake_minimum_required(VERSION 3.14)\nproject(llama.cpp C CXX)\n\n"
        'option(LLAMA_BUILD_TESTS "llama: build tests" OFF)\n'
        'option(LLAMA_BUILD_SERVER "llama: build server example" ON)\n'
        + (
            'option(LLAMA_SUBPROCESS "llama: run model loading in a subprocess" ON)\n'
            if subprocess_option
            else ""
        )
        + 'option(GGML_CUDA "ggml: use CUDA" OFF)\n\nadd_subdirectory(src)\n'
    )


def _server(renamed_flag: bool) -> str:
    flag = '"--flash-attn-mode"' if renamed_flag else '"-fa", "--flash-attn"'
    return (
        '#include "arg.h"\n\nvoid common_params_parser_init(common_params & params) {\n'
        '    add_opt(common_arg({"-c", "--ctx-size"}, "N", "size of the prompt context"));\n'
        f'    add_opt(common_arg({{{flag}}}, "FA", "set Flash Attention use"));\n'
        '    add_opt(common_arg({"-ngl", "--n-gpu-layers"}, "N", "number of layers to store in VRAM"));\n'
        "}\n"
    )


def build_upstream(path: Path, commits_between: int = 250) -> RepoBuilder:
    """A llama.cpp-like history: tag OLD_TAG, then enough commits to move things, then NEW_TAG."""
    up = RepoBuilder(path)
    up.commit(
        "Initial import",
        {
            "CMakeLists.txt": _cmake(False),
            "tools/mtmd/clip.cpp": _clip(),
            "src/llama-vocab.cpp": _vocab(),
            "src/llama-arch.h": _arch_h([]),
            "common/sampling.cpp": _sampling(False),
            "common/arg.cpp": _server(False),
            "ggml/src/ggml.c": '#include "ggml.h"\n\nint ggml_version(void) {\n    return 1;\n}\n',
            "README.md": "# llama.cpp\n",
        },
    )
    up.tag(OLD_TAG)
    for i in range(commits_between):
        # Most commits are unrelated churn; a few make the changes the carried patches have to survive.
        changes: dict[str, str | None] = {f"docs/notes/{i % 40}.md": f"note {i}\n"}
        if i == 10:
            changes["src/llama-vocab.cpp"] = _vocab(lines_above=12)
        if i == 40:
            changes["tools/mtmd/clip.cpp"] = _clip(extra_helpers=6)
        if i == 60:
            changes["tools/mtmd/clip.cpp"] = _clip(extra_helpers=6, renamed=True)
        if i == 90:
            changes["common/sampling.cpp"] = _sampling(True)
        if i == 120:
            changes["CMakeLists.txt"] = _cmake(True)
        if i == 150:
            changes["src/llama-arch.h"] = _arch_h(["LLM_ARCH_OLMO = 54"])
        if i == 170:
            changes["common/arg.cpp"] = _server(True)
        if i == 200:
            changes["tools/mtmd/clip.cpp"] = _clip(extra_helpers=6, renamed=True, nested=True)
        subject = {
            10: "vocab : add lookup table (#9101)",
            40: "mtmd : split helpers (#9140)",
            60: "mtmd : rename clip warmup (#9160)",
            90: "sampling : add min_p accessor (#9190)",
            120: "build : add LLAMA_SUBPROCESS (#9220)",
            150: "model : add OLMO (#9250)",
            170: "server : rename --flash-attn (#9270)",
            200: "mtmd : load projector only when present (#9300)",
        }
        up.commit(subject.get(i, f"docs : update note {i % 40}"), changes)
    up.tag(NEW_TAG)
    return up


def _patch(old: str, new: str, path: str, subject: str) -> bytes:
    # Both buffers must stay referenced while the patch's text is read: libgit2 points into them.
    before, after = old.encode(), new.encode()
    body = pygit2.Patch.create_from(before, after, path, path, context_lines=3).data
    return (
        (
            f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            f"From: Ollama Maintainers <maintainers@ollama.invalid>\nSubject: [PATCH] {subject}\n\n---\n"
        ).encode()
        + body
        + b"-- \n2.43.0\n\n"
    )


def carried_patches() -> dict[str, bytes]:
    """Patches written against OLD_TAG in stack order, one per status the demo shows."""
    clip0, vocab, arch = _clip(), _vocab(), _arch_h([])
    clip1 = clip0.replace(
        "    ctx->image_size = 336;\n", "    ctx->image_size = 336;\n    ollama_clip_hook(ctx);\n"
    )
    clip2 = clip1.replace(
        "    ctx->n_patches = clip_n_patches(ctx);\n",
        "    ctx->n_patches = clip_n_patches(ctx);\n    ollama_clip_embd(ctx);\n",
    )
    clip3 = clip2.replace(
        "    clip_warmup(ctx);\n", "    if (!params.no_warmup) {\n        clip_warmup(ctx);\n    }\n"
    )
    ggml = '#include "ggml.h"\n\nint ggml_version(void) {\n    return 1;\n}\n'
    return {
        "llama/compat/0001-ggml-version.patch": _patch(
            ggml,
            ggml + "\nint ggml_ollama_abi(void) {\n    return 7;\n}\n",
            "ggml/src/ggml.c",
            "ggml: expose the ABI level",
        ),
        "llama/compat/0002-vocab-bos.patch": _patch(
            vocab,
            vocab.replace(
                "    return special_bos_id;\n",
                "    if (add_bos_override) {\n"
                "        return bos_override;\n    }\n    return special_bos_id;\n",
            ),
            "src/llama-vocab.cpp",
            "vocab: allow a BOS override",
        ),
        "llama/compat/0003-clip-hooks.patch": _patch(
            clip0, clip1, "tools/mtmd/clip.cpp", "mtmd: call the Ollama hook"
        ),
        "llama/compat/0004-clip-embd.patch": _patch(
            clip1, clip2, "tools/mtmd/clip.cpp", "mtmd: report embedding size"
        ),
        "llama/compat/0005-clip-warmup.patch": _patch(
            clip2, clip3, "tools/mtmd/clip.cpp", "mtmd: make warmup optional"
        ),
        "llama/compat/0006-sampling-min-p.patch": _patch(
            _sampling(False), _sampling(True), "common/sampling.cpp", "sampling: min_p accessor"
        ),
        "llama/compat/models/0007-laguna.patch": _patch(
            arch,
            arch.replace(
                "    LLM_ARCH_MISTRAL = 53,\n", "    LLM_ARCH_MISTRAL = 53,\n    LLM_ARCH_LAGUNA = 54,\n"
            )
            + "\n#define OLLAMA_LAGUNA_ARCH_ID 54  // the id Ollama's converter writes\n",
            "src/llama-arch.h",
            "model: add laguna",
        ),
    }


# Ollama's Go code starting the llama-server its build installs, with the flags it passes in for FLAGS
SERVER_GO_STARTING = """package llm

import (
	"os/exec"
	"path/filepath"
)

func serverPath(dir string) string {
	return filepath.Join(dir, "llama-server")
}

func start(dir string) error {
	params := []string{FLAGS}
	return exec.Command(serverPath(dir), params...).Start()
}
"""
# the demo's, with the flags the bump renames one of
SERVER_GO = SERVER_GO_STARTING.replace(
    "FLAGS", '"--ctx-size", "2048", "--flash-attn", "on", "--n-gpu-layers", "99"'
)


@dataclass
class Demo:
    root: Path
    upstream: Path
    ollama: Path


def build(root: Path, commits_between: int = 250) -> Demo:
    upstream = build_upstream(root / "llama.cpp.git", commits_between)
    ollama = RepoBuilder(root / "ollama", bare=False)
    ollama.commit(
        "Pin llama.cpp",
        {
            "LLAMA_CPP_VERSION": OLD_TAG + "\n",
            **carried_patches(),
            "llama/server/CMakeLists.txt": "set(LLAMA_BUILD_SERVER ON)\nset(GGML_CUDA OFF)\n"
            "install(TARGETS llama-server RUNTIME DESTINATION lib/ollama)\n",
            "llm/server.go": SERVER_GO,
        },
    )
    ollama.branch("main")
    ollama.commit(f"llama: update llama.cpp to {NEW_TAG}", {"LLAMA_CPP_VERSION": NEW_TAG + "\n"})
    ollama.branch("bump")
    ollama.repo.set_head("refs/heads/bump")
    ollama.repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
    main_commit = ollama.repo.revparse_single("HEAD~1")
    ollama.repo.references.create("refs/heads/main", main_commit.id, force=True)
    return Demo(root, upstream.path, ollama.path)


OUT_DIR = "demo-out"


def outcome(code: int, out: Path) -> str:
    """What an exit status of `python -m bot check` means, said after its checklist."""
    if code == 0:
        return "every patch applies as it is"
    if code == 1:
        return f"some patch needs a change; the rebuilt ones are in {out}, the others need a person"
    return "the check could not run (its one-line reason is above)"


def run(demo: Demo, out: Path) -> int:
    """Run `python -m bot check` on the sample repositories as a user would, and say what came out."""
    command = [
        sys.executable,
        "-m",
        "bot",
        "check",
        "--repo",
        str(demo.ollama),
        "--upstream-dir",
        f"llama.cpp={demo.upstream}",
        "--out",
        str(out),
    ]
    print(
        f"Sample repositories, built offline: an Ollama-like checkout {demo.ollama} whose branch `bump`\n"
        f"moves LLAMA_CPP_VERSION from {OLD_TAG} to {NEW_TAG}, and a llama.cpp-like upstream {demo.upstream}.\n"
        f"The checklist is the text the PR comment gets: its links and reproduce steps name\n"
        f"github.com/ggml-org/llama.cpp as for the real pin, but the demo's tags and commits exist only in the\n"
        f"sample upstream (--keep keeps it), and its /llama commands answer on a PR (locally,\n"
        f"`python -m bot regenerate` writes the rebuilt patches into the checkout instead).\n"
        f"Rebuilt patches (regenerated, fuzzy) go to {out}.\n\n"
        f"$ {shlex.join(command)}\n",
        flush=True,
    )
    code = subprocess.call(command)
    print(f"\npython -m bot check exited {code}: {outcome(code, out)}.", flush=True)
    return 0 if code in (0, 1) else code


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m tests.demo", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the sample repositories (to rerun the command on them) instead of removing them",
    )
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="llama-bot-demo-"))
    try:
        return run(build(root), Path(OUT_DIR).resolve())
    finally:
        if args.keep:
            print(f"The sample repositories stay in {root}: remove it when done.")
        else:
            shutil.rmtree(root)
            print(f"Removed the sample repositories ({root}); python -m tests.demo --keep keeps them.")


if __name__ == "__main__":
    raise SystemExit(main())
