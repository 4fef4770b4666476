"""Small phrases several texts share: a counted noun and a duration short enough for a table cell."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 patch`, `2 patches`: the count with its noun."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def rebuilt_advice(prefix: str | None, many: bool = False) -> str:
    """What makes rebuilt patches the branch's: the pull request's command (`prefix`), or with None the
    command line's."""
    them = "them" if many else "it"
    if prefix is None:
        return f"`llama-bot regenerate` writes {them} in place"
    return f"`{prefix} regenerate-patches` commits {them}"


def format_duration(seconds: float) -> str:
    """'12m 03s', '1h 02m 03s' or '45s': short enough for a table cell."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"
