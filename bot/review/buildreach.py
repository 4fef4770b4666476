"""What of upstream's build Ollama's build reaches: the CMake files it reads and the tools those files run.

A bump that changes one of them changes how Ollama's build configures, compiles or generates code, which
no reading of the diff settles: a build does.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence

from bot.review import generators
from bot.review.changes import Draft


def read_by_build(path: str, cmake_texts: Mapping[str, str], builds: Callable[[str], bool]) -> bool:
    """Whether Ollama's build reads a CMake file: a CMakeLists.txt where it builds (`builds`), a script where
    a built CMake file names it (`include()`, `cmake -P`): a script only an excluded directory runs never
    runs."""
    name = posixpath.basename(path)
    if name == "CMakeLists.txt":
        return builds(path)
    naming = re.compile(rf"(?<![\w.-]){re.escape(name)}\b")
    users = [p for p, text in cmake_texts.items() if p != path and name in text and naming.search(text)]
    return any(builds(p) for p in users) if users else builds(path)


def changed_build_files(
    cmake_changed: Iterable[str],
    steps: Iterable[generators.Step],
    sources: Mapping[str, set[str]],
    changed: Container[str],
    reads: Callable[[str], bool],
) -> list[str]:
    """The changed CMake files (`cmake_changed`) that Ollama's build reads (`reads`), and the changed code
    (`changed`) of the tools and generators those files run (`steps`, in-tree targets' `sources`), sorted."""
    files = {path for path in cmake_changed if reads(path)}
    tools = {path for s in steps if reads(s.path) for path in generators.changed_code(s, sources, changed)}
    return sorted(files | tools)


def reached_by_build(d: Draft, unbuilt: Mapping[str, Sequence[tuple[int, int]]]) -> bool:
    """Whether some line the draft is about can run in Ollama's build: not every one of them sits in a
    command of a CMake branch that Ollama's option values never take (`unbuilt`: per file, the commands'
    first and last lines). A draft with no line is kept."""
    spans = unbuilt.get(d.path)
    lines = d.blame or (((d.line, d.line),) if d.line else ())
    if not spans or not lines:
        return True
    return not all(any(a <= start and end <= b for a, b in spans) for start, end in lines)
