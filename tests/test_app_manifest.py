"""bot/app.yml, the GitHub App manifest, asks for exactly what the bot uses."""

import re

from tests.conftest import ROOT


def test_manifest_permissions_and_events():
    text = (ROOT / "bot" / "app.yml").read_text()
    top = set(re.findall(r"^(\w+):", text, re.MULTILINE))
    assert {"name", "description", "url", "hook_attributes", "default_permissions", "default_events"} <= top
    permissions = dict(re.findall(r"^  (\w+): (read|write)\b", text, re.MULTILINE))
    assert permissions == {
        "checks": "write",
        "contents": "write",
        "pull_requests": "write",
        "issues": "write",
        "actions": "write",
        "metadata": "read",
    }
    events = re.findall(r"^  - (\w+)$", text, re.MULTILINE)
    assert events == ["pull_request", "issue_comment", "issues", "check_run", "workflow_run"]
    assert re.search(r"^  url: https://\S+/webhook$", text, re.MULTILINE)
