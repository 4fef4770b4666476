"""What code a module runs: the llama-bot modules it imports, transitively, and the installed packages
among their imports, read from their sources (nothing is imported). A kept fact names the module that
computes it, and its fingerprint covers all of that: no list of files to keep by hand."""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # bot/
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)|import[ \t]+([^\n#]+))", re.MULTILINE
)


@cache
def code_of(module: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The source files (relative to bot/) of `module` and of every llama-bot module it imports,
    transitively, and the top-level names of the other packages they import (the standard library's
    aside)."""
    files: set[str] = set()
    packages: set[str] = set()
    todo = [module]
    while todo:
        path = _source(todo.pop())
        if path is None or path in files:
            continue
        files.add(path)
        for name in _imported(_text(path)):
            top = name.split(".")[0]
            if top == "bot":
                todo.append(name)
            elif top not in sys.stdlib_module_names and top != "__future__":
                packages.add(top)
    return tuple(sorted(files)), tuple(sorted(packages))


@cache
def _text(path: str) -> str:
    return (ROOT / path).read_text()


def _imported(text: str) -> list[str]:
    """The modules a source imports: `from a.b import c` names `a.b.c` when that is a module of its own,
    else `a.b`."""
    found = []
    for m in _IMPORT.finditer(text):
        if m[3]:
            found += [part.split()[0] for part in m[3].split(",") if part.strip()]
            continue
        base = m[1]
        names = [part.split()[0] for part in m[2].strip("()").replace("\n", " ").split(",") if part.strip()]
        submodules = [f"{base}.{n}" for n in names if _source(f"{base}.{n}") is not None]
        found += submodules if len(submodules) == len(names) else [base, *submodules]
    return found


@cache
def _source(module: str) -> str | None:
    """A llama-bot module's source file, relative to bot/; None for another package's."""
    parts = module.split(".")
    if parts[0] != "bot":
        return None
    base = ROOT.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return str(path.relative_to(ROOT))
    return None
