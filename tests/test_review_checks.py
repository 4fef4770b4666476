"""The review's checks as a registry: every profile names registered checks, every check runs in some
profile, and what runs beside the others follows from the inputs the checks declare."""

import tomllib
from types import SimpleNamespace

import pytest

from bot.config import REVIEW_PROFILES
from bot.review import _profile_drafts
from bot.review.changes import Draft
from bot.review.checks import INPUTS, PROFILES, Check, profile_checks, registry


def test_every_profile_lists_registered_checks_once_and_every_check_runs_in_some_profile():
    profiles = tomllib.loads(PROFILES.read_text())["profile"]
    assert set(profiles) == set(REVIEW_PROFILES)
    listed = set()
    for name, profile in profiles.items():
        ids = profile["checks"]
        assert len(ids) == len(set(ids)), name
        assert [c.id for c in profile_checks(name)] == ids
        listed |= set(ids)
    assert listed == set(registry())


def test_every_check_declares_known_inputs_and_an_area():
    for c in registry().values():
        assert c.inputs and all(name in INPUTS for name in c.inputs), c.id
        assert c.area in ("any", "build", "discovery", "server", "streaming", "models", "patch-context"), c.id


def test_the_checks_that_parse_cmake_or_the_servers_code_are_the_heavy_ones():
    heavy = {c.id for c in registry().values() if c.heavy}
    assert {"build.options", "build.targets", "server.wire"} <= heavy
    assert not heavy & {"rules", "server.flags", "patches.context", "api.ggml"}


def _check(id, inputs, found, kept=None):
    def drafts(run):
        run.ran.append(id)
        return [Draft("server", "medium", found, "", "a.cpp", 1)]

    return Check(id, "server", inputs, drafts, lambda run: True, kept)


class _Run(SimpleNamespace):
    def settle_inventory(self, wire=True):
        self.ran.append(f"settle (wire groups: {wire})")


def _context():
    return SimpleNamespace(
        pin=SimpleNamespace(review="x"), history=SimpleNamespace(upstream=SimpleNamespace(unreadable={}))
    )


@pytest.fixture
def profile(monkeypatch):
    """A profile of four checks: a heavy one beside the others, one reading the Go program, a light one."""
    checks = (
        _check("a.light", ("diff",), "light"),
        _check("b.heavy", ("cmake",), "heavy"),
        _check("c.program", ("inventory",), "program"),
        _check(
            "d.kept",
            ("server-sources",),
            "fresh",
            kept=lambda run: [Draft("server", "info", "kept", "", "b.cpp", 1)],
        ),
    )
    monkeypatch.setattr("bot.review.profile_checks", lambda name: checks)
    monkeypatch.setattr("bot.review.beside._may_fork", lambda: True)
    return checks


def test_items_come_in_the_profiles_order_each_with_its_checks_id(profile):
    run = _Run(ran=[])
    drafts = _profile_drafts(_context(), run)
    assert [(d.title, d.check) for d in drafts] == [
        ("light", "a.light"),
        ("heavy", "b.heavy"),
        ("program", "c.program"),
        ("kept", "d.kept"),  # a review of the same texts kept its items: not run again
    ]
    # a re-check (a heavy check's items kept) forks nothing; the reader of the Go program runs first, and
    # the program goes after it
    assert run.ran == [
        "c.program",
        "settle (wire groups: False)",
        "a.light",
        "b.heavy",
        "settle (wire groups: False)",
    ]


def test_the_heavy_checks_run_in_a_forked_copy_when_none_was_kept(profile, monkeypatch):
    checks = (*profile[:3], _check("d.fresh", ("server-sources", "wire-groups"), "fresh"))
    monkeypatch.setattr("bot.review.profile_checks", lambda name: checks)
    run = _Run(
        ran=[],
        read_go_texts=lambda: run.ran.append("Go texts read here"),
        inventory_groups=lambda names: run.ran.append(f"{', '.join(names)} read here") or {},
        take_inventory_groups=lambda groups: run.ran.append("groups taken"),
    )
    drafts = _profile_drafts(_context(), run)
    assert [(d.title, d.check) for d in drafts] == [
        ("light", "a.light"),
        ("heavy", "b.heavy"),
        ("program", "c.program"),
        ("fresh", "d.fresh"),
    ]
    # what the forked checks' inputs need of Ollama's tree is read here first, the inventory's groups read
    # here after the fork and handed over (taken in the copy); the heavy checks ran in the copy
    assert run.ran == [
        "Go texts read here",
        "calls_upstream, endpoints, request_fields, response_fields, output_patterns, passed_flags read here",
        "c.program",
        "settle (wire groups: False)",
        "a.light",
    ]


def test_docs_report_names_every_check():
    from pathlib import Path

    report = (Path(__file__).resolve().parent.parent / "docs" / "report.md").read_text()
    assert [c for c in registry() if c != "rules" and f"| `{c}` |" not in report] == []
