"""Ollama's real MLX bumps (tests/data/mlx-real/, extracted by tests/real/extract_mlx.py) as repositories.

MLX and mlx-c become small git repositories holding only the extracted files: MLX with one commit per ref,
mlx-c with one commit at its pin. Ollama's version files are rewritten to name those commits (the real ids
are in each case.toml); every other file is Ollama's as it was.
"""

from __future__ import annotations

import gzip
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bot.config import parse_config
from bot.engine import analyse
from bot.model import Report
from bot.render.checklist import render_markdown
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder

DATA = Path(__file__).resolve().parent / "data" / "mlx-real"


def _files(top: Path) -> dict[str, bytes]:
    found = {}
    for p in sorted(top.rglob("*")):
        if p.is_file():
            path = p.relative_to(top).as_posix()
            found[path.removesuffix(".gz")] = (
                gzip.decompress(p.read_bytes()) if path.endswith(".gz") else p.read_bytes()
            )
    return found


@dataclass
class MlxCase:
    name: str
    meta: dict
    mlx: RepoBuilder
    mlx_c: RepoBuilder
    old: str  # the fixture's MLX commit ids
    new: str
    pin: str  # the fixture's mlx-c commit id

    def ollama(self, side: str) -> dict[str, bytes]:
        """Ollama's files at the base, at the head (the bump commit), or at the first push (the base with only
        the version files changed), the version files naming the fixture's commits."""
        base = _files(DATA / self.name / "ollama" / "base")
        head = {**base, **_files(DATA / self.name / "ollama" / "head")}
        for path in self.meta["head_deletes"]:
            head.pop(path, None)
        files = {"base": base, "head": head, "first-push": {**base, "MLX_VERSION": head["MLX_VERSION"]}}[side]
        mlx_ref = self.old if files["MLX_VERSION"].strip().decode() == self.meta["mlx_old"] else self.new
        return {**files, "MLX_VERSION": f"{mlx_ref}\n".encode(), "MLX_C_VERSION": f"{self.pin}\n".encode()}

    def check(self, base: dict[str, bytes], head: dict[str, bytes]) -> Report:
        """The report of a PR from `base` to `head`, for the pins whose files differ."""
        changed = sorted(p for p in set(base) | set(head) if base.get(p) != head.get(p))
        repos = {"mlx": self.mlx, "mlx-c": self.mlx_c}
        return analyse(
            parse_config(None),
            MemorySnapshot(base),
            MemorySnapshot(head),
            lambda pin, refs: Upstream(repos[pin.name].repo, pin.upstream),
            changed,
        )

    @staticmethod
    def checklist(report: Report, base: dict[str, bytes], head: dict[str, bytes]) -> str:
        changed = sorted(p for p in set(base) | set(head) if base.get(p) != head.get(p))
        return render_markdown(report, changed, head_sha="0" * 40)


def mlx_case(tmp: Path, name: str) -> MlxCase:
    top = DATA / name
    meta = tomllib.loads((top / "case.toml").read_text())
    mlx = RepoBuilder(tmp / f"{name}-mlx.git")
    old_files, new_files = _files(top / "mlx" / "old"), _files(top / "mlx" / "new")
    old = str(mlx.commit("MLX at the old pin", old_files))
    new = str(mlx.commit("MLX at the new pin", {**{p: None for p in old_files}, **new_files}))
    mlx_c = RepoBuilder(tmp / f"{name}-mlx-c.git")
    pin = str(mlx_c.commit("mlx-c at its pin", _files(top / "mlx-c")))
    return MlxCase(name, meta, mlx, mlx_c, old, new, pin)
