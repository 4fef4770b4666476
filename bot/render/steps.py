"""The checklist's "Before merging" boxes: what the bump's builds need checked before the PR merges."""

from __future__ import annotations

from dataclasses import replace

from bot.decisions.validation import AutoValidation
from bot.model import Report
from bot.render.builditem import build_item
from bot.render.items import Item, box_id
from bot.render.markdown import code, plain
from bot.render.patches import APPLIES

MLX_PINS = ("mlx", "mlx-c")  # the platform validations a bump of only these offers (bot/render/platforms.py)

_CONFIGURE = Item(
    "configure",
    "Configure (`cmake -S llama/server --preset cpu`), then run "
    "`python -m bot verify-source` to confirm that "
    "`build/llama-server-cpu/_deps/llama_cpp-src` is the pinned ref with the "
    "carried patches applied in order",
)
_GO_TEST = Item("go-test", "Run `go test ./...`")


def bumped(report: Report) -> tuple[bool, bool]:
    """(llama.cpp, MLX): which builds the report's pins concern; a report of no pin concerns llama.cpp."""
    mlx = any(pin.name in MLX_PINS for pin in report.pins)
    return not mlx or any(pin.name not in MLX_PINS for pin in report.pins), mlx


def _patch_steps(report: Report) -> list[Item]:
    """A box per pin with patches, ticked by the bot alone: it checked that they apply."""
    return [
        Item(
            box_id(f"patches-apply-{pin.name}"),
            f"The committed {plain(pin.name)} patches apply to {code(pin.new_ref or '')} in apply order "
            "(checked by llama-bot)",
            done=all(p.status in APPLIES for p in pin.patches),
            by_bot=True,
        )
        for pin in report.pins
        if pin.patches
    ]


def _llama_cpp_steps(
    report: Report, changed: list[str], auto: AutoValidation | None, prefix: str | None
) -> list[Item]:
    """Configure and verify the source, then build: the build's box says what makes it worth running."""
    return [_CONFIGURE, build_item(report, changed, auto, prefix)]


def _derived_steps(report: Report) -> list[Item]:
    """The steps the engine read from the tree for the pins whose build it defines, each once."""
    found = {sid: text for pin in report.pins for sid, text in pin.build_steps or ()}
    return [Item(box_id(sid), plain(text)) for sid, text in found.items()]


def merge_steps(
    report: Report, changed: list[str], auto: AutoValidation | None = None, prefix: str | None = "/llama"
) -> list[Item]:
    """The boxes under "Before merging", fresh ones each time (ticks are set on them afterwards); `auto`
    is what became of the `auto` platforms for this head, which the build's box tells."""
    derived = [pin for pin in report.pins if pin.build_steps is not None]
    llama_cpp = not derived or len(derived) < len(report.pins)
    steps = [
        *_patch_steps(report),
        *(_llama_cpp_steps(report, changed, auto, prefix) if llama_cpp else []),
        *_derived_steps(report),
        _GO_TEST,
    ]
    return [replace(s) for s in steps]  # the constant boxes are copied: ticking one must not tick them all
