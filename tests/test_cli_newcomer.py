"""What a newcomer meets in the CLI: help, what was compared, bad pins, where the data goes."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from bot.cli.parser import build_parser
from tests import demo
from tests.fixtures import RepoBuilder
from tests.test_cli import bot

MLX_CONFIG = """
[[pin]]
name = "llama.cpp"
version_file = "LLAMA_CPP_VERSION"
patches = "llama/compat"
upstream = "https://github.com/ggml-org/llama.cpp"

[[pin]]
name = "mlx"
version_file = "MLX_VERSION"
patches = "mlx/compat"
upstream = "https://github.com/ml-explore/mlx"
"""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return demo.build(tmp_path_factory.mktemp("demo"), commits_between=20)


def _ollama(tmp_path: Path, base: dict, head: dict) -> Path:
    repo = RepoBuilder(tmp_path / "ollama", bare=False)
    repo.commit("base", base)
    repo.commit("change", head)
    return tmp_path / "ollama"


def _check(path: Path, scenario, *extra: str) -> subprocess.CompletedProcess:
    return bot(
        "check",
        "--repo",
        str(path),
        "--base",
        "HEAD~1",
        "--upstream-dir",
        f"llama.cpp={scenario.upstream}",
        *extra,
    )


def _options(parser):
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):  # the subcommands
            for name, sub in action.choices.items():
                yield from ((f"{name} {o}", a) for o, a in _options(sub))
        elif (
            action.option_strings
            and action.dest != "help"
            or not action.option_strings
            and action.dest != "help"
        ):
            yield (action.option_strings or [action.dest])[0], action


def test_every_option_of_every_command_has_help():
    undocumented = [name for name, action in _options(build_parser()) if not action.help]
    assert undocumented == []


def test_help_lists_the_exit_codes_and_serve_the_env_vars_it_needs():
    for args in ([], ["check"], ["regenerate"]):
        text = bot(*args, "--help").stdout
        assert "exit status" in text and "2  the analysis could not run" in text, args
    verify = bot("verify-source", "--help").stdout
    assert "exit status:" in verify and "1  it is not: each differing file is listed" in verify
    serve = bot("serve", "--help", env={**os.environ, "PORT": "abc"})  # PORT is read only when serving
    assert serve.returncode == 0
    assert all(
        name in serve.stdout for name in ("GITHUB_APP_ID", "GITHUB_WEBHOOK_SECRET", "GITHUB_PRIVATE_KEY")
    )
    upstream_dir = bot("check", "--help").stdout
    assert (
        "upstream of pin NAME (a pin name" in " ".join(upstream_dir.split()) and "repeat it" in upstream_dir
    )


def test_an_untouched_pin_says_what_was_compared_and_how_to_choose_another_base(tmp_path, scenario):
    path = _ollama(tmp_path, {"LLAMA_CPP_VERSION": "b100\n"}, {"README.md": "hi\n"})
    result = _check(path, scenario, "--format", "json")
    assert result.returncode == 0 and json.loads(result.stdout)["pins"] == []
    assert "(--base HEAD~1) .. " in result.stderr and "(HEAD)" in result.stderr
    assert "choose another base with --base REV" in result.stderr


def test_a_repository_without_any_version_file_is_asked_if_it_is_an_ollama_checkout(tmp_path, scenario):
    path = _ollama(tmp_path, {"README.md": "a\n"}, {"README.md": "b\n"})
    result = _check(path, scenario)
    assert result.returncode == 2 and result.stdout == ""
    assert (
        "none of the pinned version files (LLAMA_CPP_VERSION, MLX_VERSION, MLX_C_VERSION) exists"
        in result.stderr
    )
    assert f"is {path}/ an Ollama checkout?" in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_base_ref_the_upstream_lacks_is_exit_2_naming_it(tmp_path, scenario):
    path = _ollama(tmp_path, {"LLAMA_CPP_VERSION": "b99999\n"}, {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n"})
    result = _check(path, scenario, "--format", "json")
    assert result.returncode == 2
    assert "LLAMA_CPP_VERSION at the base revision names 'b99999'" in result.stderr
    (pin,) = json.loads(result.stdout)["pins"]  # the report still comes, with the error in it
    assert (pin["old_ref"], pin["new_ref"], pin["patches"]) == ("b99999", demo.NEW_TAG, [])
    assert "b99999" in pin["error"]


def test_a_garbage_base_version_file_is_checked_against_the_new_ref_alone(tmp_path, scenario):
    path = _ollama(
        tmp_path, {"LLAMA_CPP_VERSION": "not a ref at all\n"}, {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n"}
    )
    result = _check(path, scenario, "--format", "json")
    assert result.returncode == 0, result.stderr
    (pin,) = json.loads(result.stdout)["pins"]
    assert (pin["old_ref"], pin["new_ref"], pin["error"]) == (demo.NEW_TAG, demo.NEW_TAG, None)


def test_one_bad_pin_does_not_hide_the_good_one(tmp_path, scenario):
    base = {
        ".github/llama-bot.toml": MLX_CONFIG,
        "LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n",
        "MLX_VERSION": "v0.1\n",
        **demo.carried_patches(),
    }
    path = _ollama(tmp_path, base, {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n", "MLX_VERSION": "\x00garbage\n"})
    result = _check(path, scenario, "--format", "json")
    assert result.returncode == 2
    good, bad = json.loads(result.stdout)["pins"]
    assert (good["name"], good["error"], len(good["patches"])) == (
        "llama.cpp",
        None,
        len(demo.carried_patches()),
    )
    assert (bad["name"], bad["patches"], bad["findings"], bad["new_commit"]) == ("mlx", [], [], None)
    assert "MLX_VERSION holds" in bad["error"]
    assert result.stderr.strip().splitlines()[-1].startswith("llama-bot: mlx: MLX_VERSION holds")


def test_a_deleted_version_file_is_reported_not_nothing_to_check(tmp_path, scenario):
    path = _ollama(tmp_path, {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n"}, {"LLAMA_CPP_VERSION": None})
    result = _check(path, scenario, "--format", "json")
    assert result.returncode == 2
    (pin,) = json.loads(result.stdout)["pins"]
    assert pin["error"].startswith(
        "this change deletes LLAMA_CPP_VERSION: the build would no longer pin llama.cpp"
    )


def test_a_configured_patch_directory_at_neither_revision_is_named(tmp_path, scenario):
    config = (
        '[[pin]]\nname = "llama.cpp"\nversion_file = "LLAMA_CPP_VERSION"\npatches = "llama/compats"\n'
        'upstream = "https://github.com/ggml-org/llama.cpp"\n'
    )
    path = _ollama(
        tmp_path,
        {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n", ".github/llama-bot.toml": config},
        {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n"},
    )
    result = _check(path, scenario)
    assert (
        "llama-bot: warning: llama.cpp: llama/compats/ exists at neither revision, so no patch was checked "
        "(is `patches` right in .github/llama-bot.toml?)"
    ) in result.stderr
    assert "No carried patches: no `*.patch` file below `llama/compats/`." in result.stdout


def test_a_default_patch_directory_a_repository_does_not_use_is_no_warning(tmp_path, scenario):
    """The defaults name the directories of every layout (mlx/compat/mlx before the move exists nowhere)."""
    path = _ollama(
        tmp_path, {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n"}, {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n"}
    )
    result = _check(path, scenario)
    assert "warning" not in result.stderr
    assert "No carried patches: no `*.patch` file below `llama/compat/`." in result.stdout


def test_uncommitted_patch_edits_are_named_on_stderr(tmp_path, scenario):
    patches = demo.carried_patches()
    path = _ollama(
        tmp_path,
        {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n", **patches},
        {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n"},
    )
    edited = min(patches)
    (path / edited).write_text("edited by hand\n")
    result = _check(path, scenario, "--format", "json")
    assert f"llama-bot: note: uncommitted changes to {edited} are not checked" in result.stderr
    assert json.loads(result.stdout)["pins"][0]["error"] is None  # the committed patches were checked


def test_a_bare_clone_copied_without_its_config_has_no_working_tree(tmp_path, scenario):
    """libgit2 takes a git directory without `core.bare` for a working tree's (its parent); git takes it
    for bare, and so does llama-bot: no note about uncommitted changes, and nothing to regenerate into."""
    patches = demo.carried_patches()
    work = _ollama(
        tmp_path,
        {"LLAMA_CPP_VERSION": f"{demo.OLD_TAG}\n", **patches},
        {"LLAMA_CPP_VERSION": f"{demo.NEW_TAG}\n"},
    )
    copied = tmp_path / "copy" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(copied)], check=True)
    (copied / "config").unlink()
    result = _check(copied, scenario, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    assert "uncommitted" not in result.stderr
    regenerate = bot(
        "regenerate",
        "--repo",
        str(copied),
        "--base",
        "HEAD~1",
        "--upstream-dir",
        f"llama.cpp={scenario.upstream}",
    )
    assert regenerate.returncode == 2
    assert f"--repo {copied}: a bare repository has no working tree to rewrite" in regenerate.stderr


def test_the_default_data_directory_is_the_user_cache_not_the_checkout(tmp_path, scenario):
    mirrors = tmp_path / "srv" / "ggml-org"
    mirrors.mkdir(parents=True)
    (mirrors / "llama.cpp").symlink_to(scenario.upstream)
    home = tmp_path / "home"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "LLAMA_BOT_URL_INSTEADOF": f"{tmp_path}/srv/=https://github.com/",
    }
    result = bot("check", "--repo", ".", "--format", "json", cwd=scenario.ollama, env=env)
    assert result.returncode in (0, 1), result.stderr
    assert not (scenario.ollama / "var").exists()
    (mirror,) = (home / ".cache" / "llama-bot" / "mirrors").iterdir()
    assert (
        f"llama-bot: creating a mirror of {tmp_path}/srv/ggml-org/llama.cpp for llama.cpp in {mirror}: "
        f"fetching {demo.OLD_TAG}, {demo.NEW_TAG}"
    ) in result.stderr
    again = bot("check", "--repo", ".", "--format", "json", cwd=scenario.ollama, env=env)
    assert "creating a mirror" not in again.stderr
    xdg = bot(
        "check",
        "--repo",
        ".",
        "--format",
        "json",
        cwd=scenario.ollama,
        env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
    )
    assert xdg.returncode in (0, 1) and list((tmp_path / "xdg" / "llama-bot" / "mirrors").iterdir())


@pytest.mark.parametrize(
    "value, words",
    [
        ("nonsense", "LLAMA_BOT_URL_INSTEADOF item 'nonsense': expected NEW=OLD"),
        (
            "/no/such/dir/=https://github.com/",
            "rewrites https://github.com/ggml-org/llama.cpp to a path that does not exist",
        ),
    ],
)
def test_a_bad_url_rewrite_is_named(tmp_path, scenario, value, words):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLAMA_BOT_URL_INSTEADOF": value}
    result = bot("check", "--repo", str(scenario.ollama), env=env)
    assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_an_internal_error_is_exit_2_with_one_line_not_a_traceback(monkeypatch, capsys, tmp_path, scenario):
    from bot import cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("bot.engine.analyse", broken)
    path = _ollama(tmp_path, {"LLAMA_CPP_VERSION": "b100\n"}, {"LLAMA_CPP_VERSION": "b350\n"})
    code = cli.main(["check", "--repo", str(path), "--base", "HEAD~1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "internal error (ZeroDivisionError: division by zero); this is a bug in llama-bot" in err
    monkeypatch.setenv("LLAMA_BOT_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["check", "--repo", str(path), "--base", "HEAD~1"])
