"""`python -m bot verify-source` on real checkouts made the way CMake's FetchContent and apply-patch.cmake
make them: a git clone of the upstream at the pinned ref, the carried patches put on with the real git."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.cli import main
from tests.gitutil import make_patch, upstream_pair

GGML_V1 = "void ggml_init(void) {\n    setup();\n    run();\n}\n"
GGML_V2 = GGML_V1.replace("run();", "run(GGML_FAST);")
LLAMA = "".join(f"int step_{i}(void) {{ return {i}; }}\n" for i in range(20))
LLAMA_V2 = "// upstream moved things down\n" * 4 + LLAMA
HOOKED = LLAMA_V2.replace(
    "step_7(void) { return 7; }\n", "step_7(void) { return 7; }\nvoid ollama_hook(void);\n"
)
GGML_HOOKED = GGML_V2.replace("setup();\n", "setup();\n    ollama_ggml_hook();\n")
COMPAT_HEADER = "#pragma once\nvoid ollama_hook(void);\n"

HOOKS = "llama/compat/0001-hooks.patch"
GGML_HOOK = "llama/compat/0002-ggml-hook.patch"
HEADER = "llama/compat/models/0003-compat-header.patch"
PATCHES = {
    HOOKS: make_patch(LLAMA_V2, HOOKED, "src/llama.cpp"),
    GGML_HOOK: make_patch(GGML_V2, GGML_HOOKED, "ggml/ggml.c"),
    HEADER: (
        b"diff --git a/src/ollama-compat.h b/src/ollama-compat.h\nnew file mode 100644\n"
        b"--- /dev/null\n+++ b/src/ollama-compat.h\n@@ -0,0 +1,2 @@\n"
        + b"".join(b"+" + line.encode() + b"\n" for line in COMPAT_HEADER.splitlines())
    ),
}
SOURCE = Path("build/llama-server-cpu/_deps/llama_cpp-src")


def git(*args: str | Path) -> str:
    return subprocess.run(["git", *map(str, args)], check=True, capture_output=True, text=True).stdout


@dataclass
class Setup:
    upstream: Path
    ollama: Path
    v2: str  # the commit id of tag v2

    @property
    def source(self) -> Path:
        return self.ollama / SOURCE


def cmake_apply(checkout: Path, patches: list[Path]) -> None:
    """apply-patch.cmake: skip a patch that reverse-applies, else `git apply` it."""
    for patch in patches:
        reverse = subprocess.run(
            ["git", "-C", str(checkout), "apply", "--reverse", "--check", str(patch)],
            capture_output=True,
            check=False,
        )
        if reverse.returncode != 0:
            git("-C", checkout, "apply", "--whitespace=nowarn", patch)


def fetch_source(setup: Setup, ref: str, patches: list[str], *clone_options: str) -> None:
    """What `cmake -S llama/server --preset cpu` leaves in _deps/: the clone at `ref`, the patches applied."""
    git("clone", "-q", *clone_options, f"file://{setup.upstream}", setup.source)
    git("-C", setup.source, "-c", "advice.detachedHead=false", "checkout", "-q", ref)
    cmake_apply(setup.source, [setup.ollama / p for p in patches])


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    """A mirror fetch would go to a directory that does not exist, never to the network."""
    monkeypatch.setenv("LLAMA_BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LLAMA_BOT_URL_INSTEADOF", f"{tmp_path}/nowhere/=https://github.com/")


@pytest.fixture
def setup(tmp_path) -> Setup:
    up = upstream_pair(
        tmp_path,
        {"src/llama.cpp": LLAMA, "ggml/ggml.c": GGML_V1, "README.md": "llama\n", ".gitignore": "*.o\n"},
        {"src/llama.cpp": LLAMA_V2, "ggml/ggml.c": GGML_V2},
    )
    ollama = tmp_path / "ollama"
    for path, data in {**PATCHES, "LLAMA_CPP_VERSION": b"v2\n"}.items():
        (ollama / path).parent.mkdir(parents=True, exist_ok=True)
        (ollama / path).write_bytes(data)
    git("init", "-q", ollama)
    return Setup(up.path, ollama, git("-C", up.path, "rev-parse", "v2^{commit}").strip())


def verify(capsys, *args: str | Path) -> tuple[int, str, str]:
    code = main(["verify-source", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_checkout_made_by_cmake_matches(setup, capsys):
    fetch_source(setup, "v2", list(PATCHES))
    code, out, err = verify(capsys, "--repo", setup.ollama)
    assert (code, err) == (0, "")
    assert out == (
        f"llama.cpp: {setup.source} matches LLAMA_CPP_VERSION: v2 ({setup.v2[:12]}) "
        "with 3 carried patches applied, no other change.\n"
    )


def test_a_full_commit_id_in_any_case_names_the_checkout_and_build_dir_may_be_the_checkout(setup, capsys):
    (setup.ollama / "LLAMA_CPP_VERSION").write_text(setup.v2.upper() + "\n")
    fetch_source(setup, setup.v2, list(PATCHES))
    code, out, _ = verify(capsys, "--repo", setup.ollama, "--build-dir", setup.source)
    assert code == 0 and f"matches LLAMA_CPP_VERSION: {setup.v2} with 3 carried patches" in out


def test_an_old_checkout_says_where_it_is_and_where_it_should_be(setup, capsys, monkeypatch, tmp_path):
    fetch_source(setup, "v1", list(PATCHES)[:1], "--depth", "1", "--branch", "v1")
    # The shallow v1 clone lacks v2: the pin's mirror is fetched (from a local stand-in for github.com).
    (tmp_path / "srv" / "ggml-org").mkdir(parents=True)
    (tmp_path / "srv" / "ggml-org" / "llama.cpp").symlink_to(setup.upstream)
    monkeypatch.setenv("LLAMA_BOT_URL_INSTEADOF", f"{tmp_path}/srv/=https://github.com/")
    code, out, _ = verify(capsys, "--repo", setup.ollama)
    v1 = git("-C", setup.upstream, "rev-parse", "v1^{commit}").strip()
    assert code == 1
    assert (
        f"HEAD is at v1 ({v1[:12]}), but LLAMA_CPP_VERSION names v2 ({setup.v2[:12]}): an old checkout" in out
    )
    assert any((tmp_path / "data" / "mirrors").glob("llama.cpp*.git"))


def test_a_file_edited_by_hand_is_named_with_its_diff_and_its_patch(setup, capsys):
    fetch_source(setup, "v2", list(PATCHES))
    llama = setup.source / "src" / "llama.cpp"
    llama.write_text(llama.read_text().replace("void ollama_hook(void);", "void ollama_hook(int debug);"))
    (setup.source / "README.md").write_text("llama, patched by hand\n")
    code, out, _ = verify(capsys, "--repo", setup.ollama, "--upstream-dir", f"llama.cpp={setup.upstream}")
    assert code == 1
    assert f"HEAD is v2 ({setup.v2[:12]}) as it should be, but:\n" in out
    assert f"- src/llama.cpp differs from v2 with {HOOKS} applied:\n" in out
    assert "    -void ollama_hook(void);\n    +void ollama_hook(int debug);\n" in out
    assert "- README.md differs from v2 (no carried patch touches it):\n" in out
    assert "    +llama, patched by hand\n" in out
    assert "ggml" not in out and "ollama-compat.h" not in out


def test_patches_left_out_and_a_file_deleted_by_hand_are_named(setup, capsys):
    fetch_source(setup, "v2", [HOOKS])
    (setup.source / "README.md").unlink()
    code, out, _ = verify(capsys, "--repo", setup.ollama)
    assert code == 1
    assert f"- ggml/ggml.c differs from v2 with {GGML_HOOK} applied:\n" in out
    assert "    -    ollama_ggml_hook();\n" in out
    assert f"- src/ollama-compat.h is missing: v2 with {HEADER} applied has it:\n" in out
    assert "- README.md is missing: v2 has it (no carried patch touches it):\n" in out
    assert "llama.cpp differs" not in out


def test_a_patch_that_does_not_apply_to_the_pinned_ref_is_named(setup, capsys):
    stale = "llama/compat/0004-stale.patch"
    (setup.ollama / stale).write_bytes(
        make_patch(LLAMA, LLAMA.replace("step_3", "step_three"), "src/llama.cpp")
    )
    fetch_source(setup, "v2", list(PATCHES))  # apply-patch.cmake stops at 0004
    code, out, _ = verify(capsys, "--repo", setup.ollama)
    assert code == 1
    assert f"- {stale} does not apply to v2: hunk 1 of src/llama.cpp does not match" in out
    assert "differs" not in out  # the other three are in place as they should be


def test_a_patch_already_upstream_is_skipped_as_cmake_skips_it(setup, capsys):
    upstreamed = "llama/compat/0000-fast.patch"
    (setup.ollama / upstreamed).write_bytes(make_patch(GGML_V1, GGML_V2, "ggml/ggml.c"))
    fetch_source(setup, "v2", [upstreamed, *PATCHES])
    code, out, _ = verify(capsys, "--repo", setup.ollama)
    assert code == 0
    assert f"3 carried patches applied, no other change.\n- note: {upstreamed} is already in v2" in out


def test_an_extra_untracked_file_is_named_but_ignored_files_are_not(setup, capsys):
    fetch_source(setup, "v2", list(PATCHES))
    (setup.source / "tools").mkdir()
    (setup.source / "tools" / "notes.txt").write_text("".join(f"note {i}\n" for i in range(30)))
    (setup.source / "ggml" / "ggml.o").write_bytes(b"\0object")  # *.o is in upstream's .gitignore
    code, out, _ = verify(capsys, "--repo", setup.ollama)
    assert code == 1
    assert (
        "- tools/notes.txt is an extra file, untracked and not ignored (no carried patch touches it):" in out
    )
    assert "    --- /dev/null\n    +++ checkout/tools/notes.txt\n" in out
    assert "    +note 0\n" in out and "more diff lines)" in out and "note 29" not in out
    assert "ggml.o" not in out


def test_a_pin_is_looked_for_under_its_fetchcontent_name(setup, capsys):
    """Ollama declares mlx-c as `mlx-c`: FetchContent puts it in _deps/mlx-c-src."""
    (setup.ollama / "MLX_C_VERSION").write_text("v1\n")
    source = setup.ollama / "build" / "mlx" / "_deps" / "mlx-c-src"
    git("clone", "-q", f"file://{setup.upstream}", source)
    git("-C", source, "-c", "advice.detachedHead=false", "checkout", "-q", "v1")
    code, out, _ = verify(
        capsys,
        "--repo",
        setup.ollama,
        "--pin",
        "mlx-c",
        "--build-dir",
        setup.ollama / "build" / "mlx",
        "--upstream-dir",
        f"mlx-c={setup.upstream}",
    )
    assert code == 0 and "mlx-c: " in out and "MLX_C_VERSION: v1" in out and "0 carried patches" in out


@pytest.mark.parametrize(
    "case, words",
    [
        ("no build dir", "--build-dir {tmp}/nothing: no such directory"),
        (
            "not configured",
            "{ollama}/build/llama-server-cpu/_deps/llama_cpp-src: no such directory; has CMake",
        ),
        ("not a checkout", "{ollama}/build/llama-server-cpu/_deps/llama_cpp-src: not a git checkout"),
        ("unknown pin", "--pin llama: no pin has that name (pins: llama.cpp, mlx, mlx-c)"),
        ("no version file", "{ollama}/LLAMA_CPP_VERSION: no such file; is --repo an Ollama checkout?"),
        ("garbage version file", "LLAMA_CPP_VERSION holds '--upload-pack=x', which is not an upstream tag"),
        ("unknown ref", "LLAMA_CPP_VERSION names 'b99999', which is not a tag or commit"),
        ("no repo", "--repo {tmp}/missing: no such directory"),
        ("bad upstream dir", "--upstream-dir 'llama.cpp': expected NAME=GITDIR"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(setup, capsys, tmp_path, case, words):
    args = ["--repo", str(setup.ollama)]
    if case != "not configured":
        fetch_source(setup, "v2", list(PATCHES))
    if case == "no build dir":
        args += ["--build-dir", str(tmp_path / "nothing")]
    elif case == "not a checkout":
        subprocess.run(["rm", "-rf", str(setup.source / ".git")], check=True)
    elif case == "not configured":
        (setup.ollama / "build" / "llama-server-cpu").mkdir(parents=True)
    elif case == "unknown pin":
        args += ["--pin", "llama"]
    elif case == "no version file":
        (setup.ollama / "LLAMA_CPP_VERSION").unlink()
    elif case == "garbage version file":
        (setup.ollama / "LLAMA_CPP_VERSION").write_text("--upload-pack=x\n")
    elif case == "unknown ref":
        (setup.ollama / "LLAMA_CPP_VERSION").write_text("b99999\n")
        args += ["--upstream-dir", f"llama.cpp={setup.upstream}"]
    elif case == "no repo":
        args = ["--repo", str(tmp_path / "missing")]
    elif case == "bad upstream dir":
        args += ["--upstream-dir", "llama.cpp"]
    code, out, err = verify(capsys, *args)
    assert (code, out) == (2, "")
    assert err.startswith("llama-bot: ") and len(err.splitlines()) == 1
    assert words.format(tmp=tmp_path, ollama=setup.ollama) in err
