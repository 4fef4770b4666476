"""The checklist's platform section: a partial of its own between two tags, so a workflow run's update
renders it alone and puts it in place with one substitution, and the rest of the comment stays as the
analysis wrote it."""

from __future__ import annotations

from collections.abc import Iterable

from bot.model import Report
from bot.render.env import render_template
from bot.render.items import Item, tick
from bot.render.steps import bumped

PLATFORM_LABELS = {
    "metal": "Metal on macOS arm64",
    "cuda": "CUDA on Linux and Windows",
    "rocm": "ROCm on Linux and Windows",
    "vulkan": "Vulkan on Linux and Windows",
    "windows": "Windows (CPU and GPU runners)",
    "mlx-metal": "MLX Metal on macOS arm64",
    "mlx-cuda": "MLX CUDA on Linux",
}


def _default_platforms(report: Report) -> list[Item]:
    """Before anything was dispatched: the platforms that build what the bump changed."""
    llama_cpp, mlx = bumped(report)
    return [
        Item(f"platform-{name}", label)
        for name, label in PLATFORM_LABELS.items()
        if (mlx if name.startswith("mlx-") else llama_cpp)
    ]


def platform_items(rows: list[dict], report: Report) -> list[Item]:
    """A box per platform: per dispatched platform's row (ticked by a successful run of the head), else the
    platforms that build what the bump changed; and the integration tests."""
    items = [
        Item(
            f"platform-{row['name']}",
            row.get("label") or PLATFORM_LABELS.get(row["name"], row["name"]),
            row.get("conclusion") == "success" and not row.get("stale"),
        )
        for row in rows
    ] or _default_platforms(report)
    return [*items, Item("integration-tests", "Integration tests")]


def render_platforms(rows: list[dict], report: Report, prefix: str, ticked: Iterable[str] = ()) -> str:
    """The platform section alone, tags included, exactly as the whole checklist renders it. `report` only
    chooses the default boxes, which show while `rows` is empty (nothing dispatched yet)."""
    items = platform_items(rows, report)
    tick(items, ticked)
    return render_template("_platforms.md.j2", rows=rows, items=items, prefix=prefix)
