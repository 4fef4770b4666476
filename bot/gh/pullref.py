"""Which pull request a job works on."""

from __future__ import annotations

from dataclasses import dataclass

from bot.stores.jobs import pull_key


@dataclass(frozen=True)
class PullRef:
    """A repository and, once known, one of its pull requests."""

    owner: str
    repo: str
    number: int | None = None

    @property
    def names(self) -> dict:
        """The URL template variables of the pull request's endpoints."""
        return {"owner": self.owner, "repo": self.repo, "number": self.number}

    @property
    def pr_number(self) -> int:
        """The pull request's number, for the jobs about one pull request."""
        if self.number is None:
            raise ValueError(f"the job names no pull request of {self.full_name}")
        return self.number

    @property
    def key(self) -> str:
        """The key of the pull request's jobs and of its recorded heads."""
        return pull_key(self.owner, self.repo, self.pr_number)

    @property
    def full_name(self) -> str:
        """owner/name as the deliveries spell it: the key of the validation store."""
        return f"{self.owner}/{self.repo}"
