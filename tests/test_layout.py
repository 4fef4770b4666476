"""The package layout: each package imports only from the packages below it in LAYERS.

Every import counts, wherever it is written: at the top, inside a function, or under `TYPE_CHECKING`, so
no import circle can form between packages, at import time or for the type checker.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bottom first: a module may import from its own layer and the layers before it. A layer is a package of
# bot/, one of the modules that span all and stay in bot/ itself, or the webhook's handlers/.
LAYERS = (
    "bot",
    "bot.model",
    "bot.times",
    "bot.commands",
    "bot.cache",
    "bot.child",
    "bot.lang",
    "bot.repos",
    "bot.patches",
    "bot.config",
    "bot.decisions",
    "bot.stores",
    "bot.build",
    "bot.review",
    "bot.ollama",
    "bot.engine",
    "bot.probe",
    "bot.render",
    "bot.gh",
    "bot.worker",
    "handlers",
    "bot.service",
    "bot.cli",
    "bot.__main__",
)
SPANNING = {"__init__", "__main__", "model", "markup", "config", "commands", "times"}  # bot/'s own modules


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    """The longest name in LAYERS the module is or is inside of."""
    found = [layer for layer in LAYERS if module == layer or module.startswith(layer + ".")]
    assert found, f"{module} is in no layer of LAYERS: place its package there"
    return max(found, key=len)


def imported(path: Path) -> list[tuple[int, str]]:
    """Each bot or handlers module the file imports, with its line: `from a import b` names `a.b` when
    that is a module, `a` when b is a name in it."""
    tree = ast.parse(path.read_text(), str(path))
    package = module_of(path) if path.name == "__init__.py" else module_of(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            for a in node.names:
                full = f"{base}.{a.name}"
                is_module = _exists(full)
                found.append((node.lineno, full if is_module else base))
    return [(line, name) for line, name in found if name.split(".")[0] in ("bot", "handlers")]


def _exists(module: str) -> bool:
    path = ROOT / Path(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def sources() -> list[Path]:
    return sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "handlers").rglob("*.py")])


def test_no_package_imports_from_a_package_above_it() -> None:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = set()
    for path in sources():
        mine = layer_of(module_of(path))
        for line, name in imported(path):
            theirs = layer_of(name)
            if rank[theirs] > rank[mine]:
                upward.add(f"{path.relative_to(ROOT)}:{line} ({mine}) imports {name} ({theirs}, above)")
    assert not upward, "\n".join(sorted(upward))


def test_bot_keeps_only_what_spans_all_and_every_package_says_what_it_is_for() -> None:
    flat = sorted(p.stem for p in (ROOT / "bot").glob("*.py") if p.stem not in SPANNING)
    assert not flat, f"modules directly under bot/ that belong in a package: {flat}"
    for init in (ROOT / "bot").rglob("__init__.py"):
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init.relative_to(ROOT)} has no docstring"
    packages = {module_of(p) for p in (ROOT / "bot").glob("*/__init__.py")}
    assert packages <= set(LAYERS), f"packages missing from LAYERS: {sorted(packages - set(LAYERS))}"
