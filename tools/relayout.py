"""Moves bot/'s flat modules into one package per concern and rewrites every reference to them.

Run from the repository root, on a clean tree: `python tools/relayout.py`. Each move is a `git mv`, so
`git log --follow` reads through it; the references are rewritten after: Python imports through `ast`
(`import bot.x`, `from bot.x import ...`, `from bot import x, y` split by where each name now lives, and
`bot.x.attr` where the file imported `bot.x` plainly), then in Python strings and comments (tokenize) and
in the docs, templates and build files, `bot.x` and `bot/x.py` as text. A string that is exactly an old
module's name is a logger's name and is kept. The changed Python files are then sorted and formatted with
ruff. A second run finds nothing to move or rewrite and changes nothing.

It stops with exit status 2 and one line when a module of MOVES is neither at its old nor at its new
place, is at both, or bot/ holds a flat module MOVES and KEEP do not name.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

KEEP = {"__init__", "__main__", "model", "config", "commands", "times"}  # what spans all stays in bot/

PACKAGES = {
    "bot.cache": (
        "What analyses keep across runs: the content-addressed store of upstream facts under the data dir,\n"
        "keyed by blob ids and an extractor's version. Imports nothing of the bot."
    ),
    "bot.child": (
        "One analysis in a child process held to an address-space and a wall-time limit, and the step it is\n"
        "on. Imports only bot.model."
    ),
    "bot.lang": (
        "The source languages: tree-sitter for CMake, C/C++ and Go, every query declared at import, and what\n"
        "C/C++ and CMake text says. Imports nothing of the bot."
    ),
    "bot.repos": (
        "Upstream access: the mirrors the git CLI keeps, refs, fetches, blob reads, the history between two\n"
        "refs, and which patches Ollama's CMake applies to which upstream. Imports bot.child and bot.lang."
    ),
    "bot.patches": (
        "The patch format and its placement: parsing and safety, hunks found, relocated, merged or upstreamed,\n"
        "identifiers renamed, the patched tree and the real `git apply`. Pure functions over bot.repos' snapshots."
    ),
    "bot.decisions": (
        "The bot's decisions as pure functions over plain data: who may make it act on which commit, a bump's\n"
        "refs and branch, what platform validation dispatches. Imports bot.config and the layers below it."
    ),
    "bot.stores": (
        "The stores: the job queue (SQLite under the data dir, or PostgreSQL with `DATABASE_URL`, its schema in\n"
        "`migrations/`) and the validation dispatches. Imports bot.decisions and below."
    ),
    "bot.build": (
        "Ollama's build: CMake presets, what each Dockerfile stage copies and runs, and whether the carried\n"
        "patches reach every build. Imports bot.config and below."
    ),
    "bot.ollama": (
        "What Ollama's tree does with a pin: the code that compiles against it (other pins, Go bindings), its\n"
        "vendored copies and its 'Before merging' steps. Imports bot.review and below."
    ),
}

_FLAT = {
    "bot.cache": ["facts"],
    "bot.child": ["activity", "sandbox"],
    "bot.lang": ["syntax", "cpp", "cppvalues", "cmakelang"],
    "bot.repos": ["snapshot", "gitcli", "mirrors", "upstreamrefs", "history", "upstream", "buildpatches"],
    "bot.patches": [
        "patchfile",
        "patchheaders",
        "patchsafety",
        "binarypatch",
        "hunks",
        "enumentries",
        "merge",
        "obsolete",
        "obsolete_place",
        "obsolete_report",
        "identifiers",
        "gitapply",
    ],
    "bot.decisions": ["approval", "bump", "releases", "validation"],
    "bot.stores": ["jobs", "sqlitejobs", "pgstore", "validationstore"],
    "bot.build": ["dockerstages", "patchwiring", "presets"],
    "bot.ollama": ["crosspin", "gobindings", "buildsteps"],
    "bot.engine": ["verify"],
    "bot.gh": ["github", "retries", "rest"],
    "bot.worker": ["metrics"],
    "bot.service": ["app", "settings", "logs"],
}
PACKAGES["bot.service"] = (
    "The service's edge: the webhook app, the settings it reads from its environment and its JSON logs.\n"
    "The top of the service: imports the worker, the stores and everything below them."
)

# old module -> new module; the two moves out of existing packages are the pieces both sides of an import
# circle used (the patched tree the engine and crosspin share; the progress record gh and worker share).
MOVES = {f"bot.{name}": f"{package}.{name}" for package, names in _FLAT.items() for name in names}
MOVES["bot.engine.tree"] = "bot.patches.tree"
MOVES["bot.worker.progress"] = "bot.gh.progress"
DIRS = {"bot/migrations": "bot/stores/migrations"}  # data directories that move with their module

PYTHON_ROOTS = ("bot", "handlers", "tests", "bench", "tools")
TEXT_FILES = ("README.md", "Makefile", "pyproject.toml")
TEXT_ROOTS = ("docs", "templates", ".ci")
SELF = Path(__file__).resolve()


Edit = tuple[int, int, int, int, str]  # from (line, column) to (line, column), in UTF-8 bytes: the new text


class Refused(Exception):
    """A state the script must not guess about."""


def path_of(module: str) -> Path:
    return Path(*module.split(".")).with_suffix(".py")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def _place(old: str, new: str) -> bool:
    """Whether the module is still to move; refuses one at both places or at neither."""
    src, dst = path_of(old), path_of(new)
    if src.exists() and dst.exists():
        raise Refused(f"{old} is at both {src} and {dst}")
    if not src.exists() and not dst.exists():
        raise Refused(f"{old} is missing: neither {src} nor {dst} exists")
    return src.exists()


def _unknown_flat() -> list[str]:
    moved_flat = {old.split(".")[1] for old in MOVES if old.count(".") == 1}
    return sorted(p.name for p in Path("bot").glob("*.py") if p.stem not in KEEP | moved_flat)


def check_state() -> list[tuple[Path, Path]]:
    """The moves still to make; refuses a missing, doubled or unknown module."""
    todo = [(path_of(old), path_of(new)) for old, new in MOVES.items() if _place(old, new)]
    unknown = _unknown_flat()
    if unknown:
        raise Refused(f"unknown flat module(s) under bot/: {', '.join(unknown)}; add them to MOVES or KEEP")
    doubled = [f"{old} and {new}" for old, new in DIRS.items() if Path(old).exists() and Path(new).exists()]
    if doubled:
        raise Refused(f"{doubled[0]} both exist")
    return todo


def make_packages() -> list[Path]:
    made = []
    for package, doc in PACKAGES.items():
        init = path_of(package).with_suffix("") / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{doc}"""\n')
            git("add", str(init))
            made.append(init)
    return made


def move_files(todo: list[tuple[Path, Path]]) -> None:
    for src, dst in todo:
        dst.parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(src), str(dst))
    for old, new in DIRS.items():
        if Path(old).exists():
            git("mv", old, new)


def new_name(module: str) -> str:
    """The module's name after the moves (a module below a moved one follows it)."""
    for old, new in MOVES.items():
        if module == old or module.startswith(old + "."):
            return new + module[len(old) :]
    return module


# --- Python imports -------------------------------------------------------------------------------------


def _alias(a: ast.alias) -> str:
    return a.name if a.asname is None else f"{a.name} as {a.asname}"


def _from_import(node: ast.ImportFrom) -> str | None:
    """The statement's new text, one `from` line per module its names now come from; None if unchanged."""
    if node.level or not node.module or not (node.module == "bot" or node.module.startswith("bot.")):
        return None
    groups: dict[str, list[str]] = {}
    for a in node.names:
        moved = MOVES.get(f"{node.module}.{a.name}")
        source = moved.rpartition(".")[0] if moved else new_name(node.module)
        groups.setdefault(source, []).append(_alias(a))
    if list(groups) == [node.module]:
        return None
    return "\n".join(f"from {module} import {', '.join(names)}" for module, names in groups.items())


def _import(node: ast.Import) -> str | None:
    names = [ast.alias(new_name(a.name), a.asname) for a in node.names]
    if [a.name for a in names] == [a.name for a in node.names]:
        return None
    return "import " + ", ".join(_alias(a) for a in names)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _attribute_edits(tree: ast.Module, plain: set[str]) -> list[Edit]:
    """`bot.x.attr` in code, where the file imported `bot.x` with a plain `import`."""
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _dotted(node) in plain:
            edits.append((*_span(node), new_name(_dotted(node) or "")))
    return edits


def python_edits(source: str) -> str:
    tree = ast.parse(source)
    edits: list[Edit] = []
    plain = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            text = _from_import(node)
        elif isinstance(node, ast.Import):
            text = _import(node)
            plain |= {a.name for a in node.names if a.asname is None and new_name(a.name) != a.name}
        else:
            continue
        if text is not None:
            edits.append((*_span(node), text.replace("\n", "\n" + " " * node.col_offset)))
    edits += _attribute_edits(tree, plain)
    return _apply(source, edits)


def _span(node: ast.stmt | ast.expr) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0


def _apply(source: str, edits: list[Edit]) -> str:
    data = source.encode()
    starts = [0]
    for raw in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(raw))
    spans: list[tuple[int, int, bytes]] = []
    for line, column, end_line, end_column, text in edits:
        begin, end = starts[line - 1] + column, starts[end_line - 1] + end_column
        if b"#" in data[begin:end]:
            raise Refused(f"a comment inside the import at line {line}: rewrite it by hand")
        spans.append((begin, end, text.encode()))
    for begin, end, new in sorted(spans, reverse=True):
        data = data[:begin] + new + data[end:]
    return data.decode()


# --- text: strings, comments, docs ----------------------------------------------------------------------

_OLD = sorted(MOVES, key=len, reverse=True)
_DOTTED = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(m) for m in _OLD) + r")(?![\w])")
_PATHS = {str(path_of(old)): str(path_of(new)) for old, new in MOVES.items()} | DIRS
_PATH = re.compile(
    r"(?<![\w./-])(" + "|".join(re.escape(p) for p in sorted(_PATHS, key=len, reverse=True)) + r")(?!\w)"
)


def text_edits(text: str) -> str:
    text = _DOTTED.sub(lambda m: MOVES[m[1]], text)
    return _PATH.sub(lambda m: _PATHS[m[1]], text)


def _string_edit(token: str) -> str:
    """A string literal's text rewritten, unless it is exactly an old module's name (a logger's name)."""
    body = token.lstrip("rRbBuUfF")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    if body[len(quote) : -len(quote)] in MOVES:
        return token
    return text_edits(token)


def python_text_edits(source: str) -> str:
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = io.StringIO(source).readlines()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out, pos = [], 0
    for tok in tokens:
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        begin = starts[tok.start[0] - 1] + tok.start[1]
        end = starts[tok.end[0] - 1] + tok.end[1]
        new = _string_edit(tok.string) if tok.type == tokenize.STRING else text_edits(tok.string)
        out += [source[pos:begin], new]
        pos = end
    out.append(source[pos:])
    return "".join(out)


def python_files() -> list[Path]:
    tracked = git("ls-files", "-z", *PYTHON_ROOTS).split("\0")
    return [Path(p) for p in tracked if p.endswith(".py") and Path(p).exists() and Path(p).resolve() != SELF]


def text_files() -> list[Path]:
    tracked = git("ls-files", "-z", *TEXT_FILES, *TEXT_ROOTS).split("\0")
    return [Path(p) for p in tracked if p and Path(p).is_file()]


def rewrite() -> list[Path]:
    changed = []
    for path in python_files():
        old = path.read_text()
        new = python_text_edits(python_edits(old))
        if new != old:
            path.write_text(new)
            changed.append(path)
    for path in text_files():
        old = path.read_text()
        new = text_edits(old)
        if path.name == "pyproject.toml":
            new = _pyproject(new)
        if new != old:
            path.write_text(new)
            changed.append(path)
    return changed


def _pyproject(text: str) -> str:
    """The packages setuptools installs, as the tree has them; the moved data directories' globs."""
    packages = sorted(".".join(p.parent.parts) for p in Path("bot").rglob("__init__.py")) + ["handlers"]
    listed = "packages = [" + ", ".join(f'"{p}"' for p in packages) + "]"
    text = re.sub(r"(?m)^packages = \[.*\]$", lambda _: listed, text)
    for dst in DIRS.values():
        package, name = ".".join(Path(dst).parent.parts), Path(dst).name
        glob = f'"{name}/*.sql"'
        text = text.replace(f'bot = ["*.toml", {glob}]', f'bot = ["*.toml"]\n"{package}" = [{glob}]')
    return text


def tidy(paths: list[Path]) -> None:
    python = [str(p) for p in paths if p.suffix == ".py"]
    beside = Path(sys.executable).with_name("ruff")
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if ruff is None:
        raise Refused("ruff is not installed beside this python nor on PATH")
    if python:
        subprocess.run([ruff, "check", "-q", "--select", "I", "--fix", *python], check=True)
        subprocess.run([ruff, "format", "-q", *python], check=True)


def main() -> int:
    try:
        todo = check_state()
        made = make_packages()
        move_files(todo)
        changed = rewrite()
        tidy(changed)
    except Refused as refused:
        print(f"relayout: {refused}", file=sys.stderr)
        return 2
    if not (todo or made or changed):
        print("relayout: nothing to do")
        return 0
    print(f"relayout: {len(todo)} modules moved, {len(made)} packages made, {len(changed)} files rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
