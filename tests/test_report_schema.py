"""docs/report.schema.json: a valid schema that real `check --format json` output fits and broken reports
do not; and the repository documents itself without pointing at files outside it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from tests import demo
from tests.fixtures import RepoBuilder
from tests.reportschema import SCHEMA_PATH, schema_violations

ROOT = Path(__file__).resolve().parent.parent
UNSAFE_PATCH = (
    "diff --git a/../outside.c b/../outside.c\n"
    "--- a/../outside.c\n"
    "+++ b/../outside.c\n"
    "@@ -1 +1 @@\n"
    "-int x;\n"
    "+int y;\n"
)


def check_json(repo: Path, upstream: Path, *args: str) -> tuple[int, dict, str]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "check",
            "--repo",
            str(repo),
            "--upstream-dir",
            f"llama.cpp={upstream}",
            "--format",
            "json",
            *args,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout or "null"), result.stderr


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> demo.Demo:
    return demo.build(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def report(sample) -> dict:
    code, data, stderr = check_json(sample.ollama, sample.upstream)
    assert code == 1, stderr
    return data


def test_schema_is_valid_draft_2020_12():
    schema = json.loads(SCHEMA_PATH.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_a_real_report_fits_the_schema(report):
    assert schema_violations(report) == []
    (pin,) = report["pins"]
    statuses = {p["status"] for p in pin["patches"]}
    hunk_statuses = {h["status"] for p in pin["patches"] for h in p["hunks"]}
    # The sample exercises most of the format, so fitting it means something.
    assert {"clean", "offset", "regenerated", "fuzzy", "conflict", "upstreamed"} <= statuses
    assert {"clean", "offset", "merged", "relocated", "conflict"} <= hunk_statuses
    assert pin["findings"] and any(f["local_refs"] for f in pin["findings"])


def _bump(tmp_path: Path, changes: dict) -> Path:
    """An Ollama-like checkout: HEAD~1 pins the demo's old tag, HEAD bumps it along with `changes`."""
    repo = RepoBuilder(tmp_path / "ollama", bare=False)
    repo.commit(
        "pins",
        {"LLAMA_CPP_VERSION": demo.OLD_TAG + "\n", "MLX_VERSION": "v0.1.0\n", **demo.carried_patches()},
    )
    repo.commit("bump", {"LLAMA_CPP_VERSION": demo.NEW_TAG + "\n", **changes})
    return repo.path


def test_a_report_with_an_unsafe_patch_fits(sample, tmp_path):
    repo = _bump(tmp_path, {"llama/compat/0099-unsafe.patch": UNSAFE_PATCH})
    code, data, stderr = check_json(repo, sample.upstream, "--base", "HEAD~1")
    assert code == 1, stderr
    assert schema_violations(data) == []
    unsafe = next(p for p in data["pins"][0]["patches"] if p["path"].endswith("0099-unsafe.patch"))
    assert (unsafe["status"], unsafe["regenerated"], unsafe["hunks"]) == ("error", None, [])


def test_a_report_with_a_pin_that_cannot_be_checked_fits(sample, tmp_path):
    """Garbage in MLX_VERSION: llama.cpp is still checked, mlx is reported with its error, exit 2."""
    repo = _bump(tmp_path, {"MLX_VERSION": "not a ref!\n"})
    code, data, stderr = check_json(repo, sample.upstream, "--base", "HEAD~1")
    assert code == 2, stderr
    assert schema_violations(data) == []
    pins = {pin["name"]: pin for pin in data["pins"]}
    assert pins["llama.cpp"]["error"] is None and pins["llama.cpp"]["patches"]
    assert "MLX_VERSION" in pins["mlx"]["error"]
    assert (pins["mlx"]["patches"], pins["mlx"]["findings"], pins["mlx"]["new_commit"]) == ([], [], None)


def _first_patch(report: dict, status: str) -> dict:
    return next(p for p in report["pins"][0]["patches"] if p["status"] == status)


# (what is broken, how, the path the violation names, words of its message); `{status}` in a path
# is the index of the first patch with that status
BROKEN: list[tuple[str, Callable[[dict], None], str, str]] = [
    ("pin without its error key", lambda r: r["pins"][0].pop("error"), "pins/0", "'error' is a required"),
    (
        "hunk without upstream_commits",
        lambda r: _first_patch(r, "offset")["hunks"][0].pop("upstream_commits"),
        "pins/0/patches/{offset}/hunks/0",
        "'upstream_commits' is a required",
    ),
    (
        "finding without the check that raised it",
        lambda r: r["pins"][0]["findings"][0].pop("check"),
        "pins/0/findings/0",
        "'check' is a required",
    ),
    (
        "finding naming no check",
        lambda r: r["pins"][0]["findings"][0].update(check=""),
        "pins/0/findings/0/check",
        "does not match",
    ),
    (
        "finding without local_refs",
        lambda r: r["pins"][0]["findings"][0].pop("local_refs"),
        "pins/0/findings/0",
        "'local_refs' is a required",
    ),
    (
        "extra key on a patch",
        lambda r: _first_patch(r, "clean").update(detail="why"),
        "pins/0/patches/{clean}",
        "Additional properties",
    ),
    ("extra top-level key", lambda r: r.update(generated_at=1), "(top)", "Additional properties"),
    (
        "commit_count leaking into a pin",
        lambda r: r["pins"][0].update(commit_count=250),
        "pins/0",
        "Additional properties",
    ),
    (
        "unknown patch status",
        lambda r: _first_patch(r, "clean").update(status="applied"),
        "pins/0/patches/{clean}/status",
        "is not one of",
    ),
    (
        "a patch status on a hunk",
        lambda r: _first_patch(r, "offset")["hunks"][0].update(status="fuzzy"),
        "pins/0/patches/{offset}/hunks/0/status",
        "is not one of",
    ),
    (
        "unknown severity",
        lambda r: r["pins"][0]["findings"][0].update(severity="low"),
        "pins/0/findings/0/severity",
        "is not one of",
    ),
    (
        "unknown area",
        lambda r: r["pins"][0]["findings"][0].update(area="ui"),
        "pins/0/findings/0/area",
        "is not one of",
    ),
    (
        "abbreviated commit id",
        lambda r: r["pins"][0].update(new_commit=r["pins"][0]["new_commit"][:12]),
        "pins/0/new_commit",
        "is not valid under any",
    ),
    (
        "upper-case sha of an upstream commit",
        lambda r: _first_patch(r, "regenerated")["hunks"][0]["upstream_commits"][0].update(sha="A" * 40),
        "pins/0/patches/{regenerated}/hunks/0/upstream_commits/0/sha",
        "does not match",
    ),
    (
        "checked pin with no new commit",
        lambda r: r["pins"][0].update(new_commit=None),
        "pins/0/new_commit",
        "is not of type 'string'",
    ),
    (
        "failed pin that still lists patches",
        lambda r: r["pins"][0].update(error="LLAMA_CPP_VERSION holds junk"),
        "pins/0/patches",
        "is expected to be empty",
    ),
    (
        "clean patch naming a regenerated file",
        lambda r: _first_patch(r, "clean").update(regenerated="llama/compat/0001-ggml-version.patch"),
        "pins/0/patches/{clean}/regenerated",
        "is not of type 'null'",
    ),
    (
        "regenerated patch naming no file",
        lambda r: _first_patch(r, "regenerated").update(regenerated=None),
        "pins/0/patches/{regenerated}/regenerated",
        "is not of type 'string'",
    ),
    (
        "line as text",
        lambda r: r["pins"][0]["findings"][0].update(upstream_line="5"),
        "pins/0/findings/0/upstream_line",
        "is not of type 'integer'",
    ),
]


@pytest.mark.parametrize(("mutate", "where", "words"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_a_broken_report_fails_the_schema(report, mutate, where, words):
    broken = copy.deepcopy(report)
    mutate(broken)
    first = {}
    for index, patch in enumerate(report["pins"][0]["patches"]):
        first.setdefault(patch["status"], index)
    where = where.format(**first)
    violations = schema_violations(broken)
    assert any(v.startswith(f"{where}: ") and words in v for v in violations), violations


def test_a_pin_that_could_not_be_checked_may_lack_refs_and_commits(report):
    failed = copy.deepcopy(report)
    failed["pins"][0].update(
        new_ref=None,
        old_commit=None,
        new_commit=None,
        compare_url=None,
        patches=[],
        findings=[],
        error="LLAMA_CPP_VERSION holds 'junk', which is not an upstream tag",
    )
    assert schema_violations(failed) == []


def _tracked_files() -> list[str]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no tracked files to read")
    return [p for p in listed.stdout.decode().split("\0") if p]


def test_no_tracked_file_points_outside_the_repository():
    """The docs stand alone: nothing tracked names a document that is not in the repository."""
    this_test = Path(__file__).resolve().relative_to(ROOT).as_posix()  # it has to name what it looks for
    outside = "/".join(("..", "shared"))  # noqa: FLY002  (spelt apart: this file must not name it)
    words = (b"CONTRACT", outside.encode(), b"FACTS.md")
    mentions = []
    for path in _tracked_files():
        if path.startswith("tests/data/") or path == this_test or not (ROOT / path).is_file():
            continue
        data = (ROOT / path).read_bytes()
        mentions += [f"{path}: {w.decode()}" for w in words if w in data]
    assert mentions == [], "\n".join(mentions)
