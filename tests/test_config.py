"""Repository configuration and version-file validation."""

import re

import pytest

from bot.config import parse_config, read_version, validate_ref
from bot.model import AnalysisError
from bot.repos.snapshot import MemorySnapshot


def test_defaults_fit_ollama():
    config = parse_config(None)
    assert [p.name for p in config.pins] == ["llama.cpp", "mlx", "mlx-c"]
    llama = config.pin("llama.cpp")
    assert llama.watches("LLAMA_CPP_VERSION") and llama.watches("llama/compat/models/x.patch")
    assert llama.watches("llama/server/CMakeLists.txt") and not llama.watches("README.md")
    assert [p.name for p in config.platforms] == [
        "metal",
        "cuda",
        "rocm",
        "vulkan",
        "windows",
        "mlx-metal",
        "mlx-cuda",
        "contract-probe",
    ]
    mlx, mlx_c = config.pin("mlx"), config.pin("mlx-c")
    assert (llama.review, mlx.review, mlx_c.review) == ("llama.cpp", "mlx", "mlx-c")
    # today's layout (one mlx-c patch directly in mlx/compat) and the planned one (a directory per upstream)
    assert mlx_c.watches("mlx/compat/0001-mlx-c-regen-0.32.1.patch") and mlx_c.watches(
        "mlx/compat/mlx-c/0001-a.patch"
    )
    assert not mlx_c.watches("mlx/compat/mlx/0001-a.patch") and mlx.watches("mlx/compat/mlx/0001-a.patch")
    assert config.command_prefix == "/llama" and config.cancel_superseded is False


def test_repository_file_overrides_pins():
    config = parse_config(
        '[[pin]]\nname = "x"\nversion_file = "X_VERSION"\npatches = "x/compat/"\nupstream = "u"\n'
    )
    assert [(p.name, p.patches) for p in config.pins] == [("x", "x/compat")]


@pytest.mark.parametrize(
    "text, words",
    [
        ("command_prefix = 3", "command_prefix: expected str"),
        ('command_prefix = "llama-bot"', "command_prefix 'llama-bot' must be `/` or `!` and a word"),
        ('command_prefix = "/llama bot"', "command_prefix '/llama bot' must be"),
        ("[[pin]]\nname = 'x'\n", "pin[0]: missing key 'version_file'"),
        ("[platforms]\nmetal = { inputs = {} }", "platforms.metal: missing key 'workflow'"),
        ("this is = = not toml", "not valid TOML"),
    ],
)
def test_malformed_config_names_the_file_and_key(text, words):
    with pytest.raises(AnalysisError, match=re.escape(words)) as info:
        parse_config(text)
    assert ".github/llama-bot.toml" in str(info.value)


@pytest.mark.parametrize("ref", ["b10488", "v0.29.0", "0123456789abcdef0123456789abcdef01234567"])
def test_valid_refs(ref):
    assert validate_ref(ref, "LLAMA_CPP_VERSION") == ref


@pytest.mark.parametrize(
    "ref", ["--upload-pack=evil", "a..b", "has space", "x" * 101, "refs/heads/", "@{1}", "-b1"]
)
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


_PIN = '[[pin]]\nname = "{name}"\nversion_file = "X_VERSION"\npatches = "{patches}"\nupstream = "u"\n'


@pytest.mark.parametrize(
    "text, words",
    [
        (_PIN.format(name="x", patches=""), "pin[0].patches: must name a directory"),
        (_PIN.format(name="x", patches="/"), "pin[0].patches: must name a directory"),
        (
            _PIN.format(name="x", patches="a") + _PIN.format(name="x", patches="b"),
            "pin[1].name: a pin named 'x' is already configured",
        ),
    ],
)
def test_empty_patch_directory_and_duplicate_pins_are_rejected(text, words):
    with pytest.raises(AnalysisError, match=re.escape(words)) as info:
        parse_config(text)
    assert str(info.value).startswith(".github/llama-bot.toml: ")


def test_rules_type_error_starts_with_the_file_name():
    with pytest.raises(AnalysisError) as info:
        parse_config("[rules]\nmy-rule = 3\n")
    assert str(info.value).startswith(".github/llama-bot.toml: rules.my-rule: expected dict")


def test_upper_case_commit_id_is_normalised():
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert validate_ref(sha.upper(), "LLAMA_CPP_VERSION") == sha
    assert read_version(MemorySnapshot({"V": sha.upper().encode() + b"\n"}), "V") == sha


def test_also_watch_can_be_left_out():
    llama = parse_config(None).pin("llama.cpp")
    assert llama.watches("llama/server/CMakeLists.txt")  # the service's default
    assert not llama.watches("llama/server/CMakeLists.txt", also_watch=False)
    assert llama.watches("LLAMA_CPP_VERSION", also_watch=False)
    assert llama.watches("llama/compat/x.patch", also_watch=False)


@pytest.mark.parametrize(
    "text, message",
    [
        ('comand_prefix = "/llama"\n', r"comand_prefix: unknown key \(did you mean `command_prefix`\?\)"),
        (
            '[[pin]]\nname = "x"\nversion_file = "X"\npatches = "p"\nupstream = "u"\nalso_wacth = []\n',
            r"pin\[0\]\.also_wacth: unknown key \(did you mean `also_watch`\?\)",
        ),
        ('[[pins]]\nname = "x"\n', r"pins: unknown key \(did you mean `pin`\?\)"),
        (
            '[platforms]\nmetal = { workflow = "a.yaml", input = {} }\n',
            r"platforms\.metal\.input: unknown key \(did you mean `inputs`\?\)",
        ),
        (
            'colour = "red"\n',
            "colour: unknown key \\(known keys: cancel_superseded, command_prefix, dashboard, pin, platforms, rules\\)",
        ),
    ],
)
def test_a_misspelt_key_is_named_with_the_nearest_valid_one(text, message):
    with pytest.raises(AnalysisError, match=message):
        parse_config(text)
