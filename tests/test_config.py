"""Repository configuration and version-file validation."""

import re

import pytest

from bot.config import parse_config, read_version, validate_ref
from bot.model import AnalysisError
from bot.snapshot import MemorySnapshot


def test_defaults_fit_ollama():
    config = parse_config(None)
    assert [p.name for p in config.pins] == ["llama.cpp", "mlx", "mlx-c"]
    llama = config.pin("llama.cpp")
    assert llama.watches("LLAMA_CPP_VERSION") and llama.watches("llama/compat/models/x.patch")
    assert llama.watches("llama/server/CMakeLists.txt") and not llama.watches("README.md")
    assert [p.name for p in config.platforms] == ["metal", "cuda", "rocm", "vulkan", "windows"]
    assert config.command_prefix == "/llama" and config.cancel_superseded is False


def test_repository_file_overrides_pins():
    config = parse_config('[[pin]]\nname = "x"\nversion_file = "X_VERSION"\npatches = "x/compat/"\nupstream = "u"\n')
    assert [(p.name, p.patches) for p in config.pins] == [("x", "x/compat")]


@pytest.mark.parametrize("text, words", [
    ("command_prefix = 3", "command_prefix: expected str"),
    ('command_prefix = "llama-bot"', "command_prefix 'llama-bot' must be `/` or `!` and a word"),
    ('command_prefix = "/llama bot"', "command_prefix '/llama bot' must be"),
    ("[[pin]]\nname = 'x'\n", "pin[0]: missing key 'version_file'"),
    ("[platforms]\nmetal = { inputs = {} }", "platforms.metal: missing key 'workflow'"),
    ("this is = = not toml", "not valid TOML"),
])
def test_malformed_config_names_the_file_and_key(text, words):
    with pytest.raises(AnalysisError, match=re.escape(words)) as info:
        parse_config(text)
    assert ".github/llama-bot.toml" in str(info.value)


@pytest.mark.parametrize("ref", ["b10488", "v0.29.0", "0123456789abcdef0123456789abcdef01234567"])
def test_valid_refs(ref):
    assert validate_ref(ref, "LLAMA_CPP_VERSION") == ref


@pytest.mark.parametrize("ref", ["--upload-pack=evil", "a..b", "has space", "x" * 101, "refs/heads/", "@{1}", "-b1"])
def test_refs_that_never_reach_git(ref):
    with pytest.raises(AnalysisError, match="LLAMA_CPP_VERSION"):
        validate_ref(ref, "LLAMA_CPP_VERSION")


def test_version_file_with_two_lines_or_binary_is_rejected():
    with pytest.raises(AnalysisError, match="2 lines"):
        read_version(MemorySnapshot({"V": b"b1\nb2\n"}), "V")
    with pytest.raises(AnalysisError, match="not text"):
        read_version(MemorySnapshot({"V": b"\xff\xfe"}), "V")
    assert read_version(MemorySnapshot({"V": b"  b10488  \n\n"}), "V") == "b10488"
    assert read_version(MemorySnapshot({}), "V") is None
