"""What a job already posted, saved with the job so that a resumed job edits instead of posting again."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class JobProgress:
    """A job's record of its posts; stored as a JSON object whose keys are these field names."""

    comment_id: int | None = None  # the checklist comment, once found or made
    replies: int = 0  # reply comments posted, the next one's key
    checks_sha: str | None = None  # the commit whose analysis check runs this job started
    check_runs: dict[str, int] = field(default_factory=dict)  # their ids by name
    refused: bool = False  # a command author without write access was answered
    commands_done: int = 0  # commands of the comment already run
    approved_head: str | None = None  # the head the comment's commands act on, once approved
    validation: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )  # scope -> platform -> outcome

    @classmethod
    def from_dict(cls, saved: dict) -> JobProgress:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in saved.items() if k in known})

    def to_dict(self) -> dict:
        """The fields that differ from a new job's."""
        fresh = JobProgress()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(fresh, f.name)
        }
