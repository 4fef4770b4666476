"""The patch engine: check every carried patch of a pin against the new upstream ref.

Patches are processed in the order the build applies them, each against the new upstream tree with the
earlier ones (regenerated where needed) applied (`pins`). A patch (`patch`) is first weighed for what
upstream already provides, then placed file by file (`placing`): exactly, else by the rebuilders in
`placing.REBUILDERS`' order (`strategies`: a three-way merge edit by edit, then tolerant relocation); a
result is never called good when it collides with what upstream added at the same place, and the whole
stack is verified with the real `git apply` at the end. Imports bot.ollama, bot.review and the layers below
them, never the service's packages.
"""

from bot.engine.context import OpenUpstream, PinContext
from bot.engine.patch import check_patch
from bot.engine.pins import analyse, check_pin, patch_order, pin_stack
from bot.patches.tree import NoFit, Tree, apply_exact, reverse_applies

__all__ = [
    "NoFit",
    "OpenUpstream",
    "PinContext",
    "Tree",
    "analyse",
    "apply_exact",
    "check_patch",
    "check_pin",
    "patch_order",
    "pin_stack",
    "reverse_applies",
]
