"""What the readers of the consumer model share: the option names, path globs and patterns, and small helpers."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.source import globs

BACKEND_ROOT = "ggml/src/"


CPP_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc", ".cu", ".cuh", ".m", ".mm")


OLLAMA_CMAKE = globs("CMakeLists.txt", "**/CMakeLists.txt", "cmake/*.cmake", "llama/**/*.cmake")


OLLAMA_COMMAND_LINES = globs(
    "Dockerfile",
    "Dockerfile.*",
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    "scripts/*",
)


OLLAMA_SERVER_CLIENTS = globs(
    "llm/*.go",
)


DEFAULT_COMPAT_DIR = "llama/compat/"


PARTIAL_SETTERS = (
    "CMakePresets.json",
    ".yml",
    ".yaml",
    "Dockerfile",
)  # files setting a value for some builds only


ON_VALUES = {"ON", "TRUE", "YES", "Y", "1"}


_OFF = {"OFF", "FALSE", "NO", "N", "0", "", "IGNORE", "NOTFOUND"}


SETTABLE = re.compile(r"(?:GGML|LLAMA)_[A-Z0-9_]+")


DEFINE = re.compile(r"(?<![\w-])-D([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s\"'\\]*)")


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


FLAG_IN_STRING = re.compile(r"(?:^|(?<=\s))(--?[A-Za-z][\w-]*)")


FLAG_HINT = re.compile(r"[\"`\s]--?[A-Za-z]")


URL_PATH = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s]*(/[^\s?#\"]*)")


BARE_PATH = re.compile(r"^/[A-Za-z0-9_.{}%-]+(?:/[A-Za-z0-9_.{}%-]+)*$")


REQUEST_CALL = re.compile(r"(?:Request\w*|\.(?:Get|Post|Head|PostForm|JoinPath))$")


JSON_TAG = re.compile(r'\bjson:"([^",]*)')


CMAKE_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\(|\)|[^\s()"]+')


@dataclass(frozen=True)
class OptionSetting:
    value: str
    ref: LocalRef


def go_string(node: Node) -> str:
    """The value of a Go string literal (interpreted or raw)."""
    text = node_text(node)
    if node.type == "raw_string_literal":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text[1:-1]


def text_of(files: Mapping[str, str], path: str) -> str | None:
    try:
        return files[path]
    except (KeyError, LookupError):
        return None


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def truth_of(value: str) -> bool | None:
    upper = value.strip().strip('"').upper()
    if upper in ON_VALUES:
        return True
    if upper in _OFF or upper.endswith("-NOTFOUND"):
        return False
    return None


Refs = dict[str, dict[LocalRef, None]]  # name -> its places, in order, each once


def add_ref(found: Refs, key: str, ref: LocalRef) -> None:
    found.setdefault(key, {})[ref] = None


def frozen_refs(found: Refs) -> dict[str, tuple[LocalRef, ...]]:
    return {k: tuple(v) for k, v in sorted(found.items())}
