"""What every job a delivery asks for carries first: the App installation and the repository."""

from __future__ import annotations


def repository_payload(data: dict) -> dict | None:
    """The installation and repository a job's payload starts with; None without an installation, since
    the App cannot act for a delivery that names none."""
    installation = (data.get("installation") or {}).get("id")
    if installation is None:
        return None
    repository = data["repository"]
    return {
        "installation_id": installation,
        "owner": repository["owner"]["login"],
        "repo": repository["name"],
    }
