"""Reading a platform run's report (hostile: it came from a workflow that ran a pull request's code) and
joining its findings with the review's by the Ollama lines they name."""

import io
import json
import zipfile

import pytest

from bot.decisions.runreport import (
    MAX_FINDINGS,
    REPORT_BYTES,
    ReportError,
    from_stored,
    read_archive,
    read_report,
    to_stored,
)
from bot.model import Finding, LocalRef, PinReport, Report
from bot.render.checklist import render_markdown


def _zip(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return out.getvalue()


def _probe(severity="high", title="llama-server now refuses POST /completion top_k=-1", line=40, **extra):
    return {
        "severity": severity,
        "title": title,
        "detail": "POST /completion with top_k = -1: 200 at b1; 400 at b2 (out of range).",
        "local_refs": [{"path": "llm/server.go", "line": line}],
        "check": "probe.refused",
        **extra,
    }


def _report(*findings) -> bytes:
    return json.dumps(
        {"pins": [{"name": "llama.cpp", "old_ref": "b1", "new_ref": "b2", "findings": list(findings)}]}
    ).encode()


def test_a_report_reads_into_findings_and_back_from_the_store():
    (pin,) = read_archive(_zip("probe.json", _report(_probe())))
    (f,) = pin.findings
    assert (pin.name, pin.old_ref, pin.new_ref) == ("llama.cpp", "b1", "b2")
    assert (f.severity, f.check, f.local_refs) == ("high", "probe.refused", [LocalRef("llm/server.go", 40)])
    pins, error = from_stored(to_stored([pin]))
    assert pins == [pin] and error is None
    assert from_stored(to_stored(None, "the report is not JSON")) == ([], "the report is not JSON")


def test_a_member_that_lies_about_its_size_is_read_no_further_than_the_bound(monkeypatch):
    archive = bytearray(_zip("probe.json", b" " * (REPORT_BYTES + 100)))
    # the central directory claims a small member: the read still stops at the bound
    at = archive.rfind(b"PK\x01\x02")
    archive[at + 24 : at + 28] = (100).to_bytes(4, "little")
    with pytest.raises(ReportError, match="larger than 4 MiB|not a readable zip"):
        read_archive(bytes(archive))


def test_strings_and_counts_are_bounded_and_odd_values_left_out():
    many = [_probe(title="t" * 5000, line=i + 1) for i in range(MAX_FINDINGS + 20)]
    many[0]["local_refs"] = [
        {"path": "x.go", "line": True},
        {"path": 7, "line": 3},
        {"path": "y.go", "line": 9},
    ]
    (pin,) = read_report(_report(*many))
    assert len(pin.findings) == MAX_FINDINGS
    assert len(pin.findings[0].title) == 300 and pin.findings[0].local_refs == [LocalRef("y.go", 9)]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"[1]", "the report has no list of pins"),
        (b'{"pins": [1]}', "a pin of the report is not an object"),
        (b'{"pins": [{"findings": {}}]}', "a pin of the report has no list of findings"),
        (_report(_probe(check="rule.x")), "a finding of the report names no probe check"),
        (b"[" * 100000, "the report is not JSON"),
    ],
)
def test_a_report_without_the_probes_shape_is_one_error(data, said):
    with pytest.raises(ReportError, match=said):
        read_report(data)


def _static(line=40, severity="medium", path="llm/server.go"):
    return Finding(
        "server",
        severity,
        "`top_k` now rejects negative values",
        "Upstream's schema limits top_k to 0 and above.",
        "tools/server/server-schema.cpp",
        12,
        local_refs=[LocalRef(path, line)],
        check="server.request-limits",
    )


def _rows(*findings, stale=False):
    (pin,) = read_report(_report(*findings))
    return [
        {
            "name": "contract-probe",
            "label": "probe",
            "state": "completed",
            "conclusion": "failure",
            "url": None,
            "duration": None,
            "sha": "a" * 40,
            "stale": stale,
            "reported": True,
            "findings": list(pin.findings),
            "report_error": None,
        }
    ]


def _checklist(findings, rows):
    pin = PinReport("llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40, "u")
    pin.findings = list(findings)
    return render_markdown(Report([pin]), ["LLAMA_CPP_VERSION"], platforms=rows)


def test_a_probe_finding_on_a_line_the_review_names_is_that_item_told_twice():
    text = _checklist([_static()], _rows(_probe()))
    review = text.split("### Upstream review")[1].split("### Platform validation")[0]
    assert review.count("- [ ] **") == 1  # one box for one cause
    assert "**high** `top_k` now rejects negative values" in review  # the more severe of the two
    assert "The contract-probe run shows it too: llama-server now refuses POST /completion top_k=-1" in review


def test_a_probe_finding_on_another_line_is_an_item_of_its_own_and_a_stale_run_says_nothing():
    text = _checklist([_static(line=99, path="llm/other.go")], _rows(_probe()))
    review = text.split("### Upstream review")[1].split("### Platform validation")[0]
    assert review.count("- [ ] **") == 2 and "**high** llama-server now refuses" in review
    stale = _checklist([_static(line=99, path="llm/other.go")], _rows(_probe(), stale=True))
    assert "llama-server now refuses" not in stale


def test_a_probe_finding_naming_the_field_a_review_item_names_in_the_same_file_joins_it():
    static = _static(line=1367)
    static.title = "llama-server now rejects some values of `top_k`, which Ollama forwards"
    probe = _probe(
        title="llama-server now refuses top_k = 0 and -1 on POST /completion, which Ollama can send"
    )
    text = _checklist([static], _rows(probe))
    review = text.split("### Upstream review")[1].split("### Platform validation")[0]
    assert review.count("- [ ] **") == 1 and "The contract-probe run shows it too" in review
    # the same name in another Ollama file is another cause
    probe["local_refs"] = [{"path": "server/routes.go", "line": 40}]
    assert _checklist([static], _rows(probe)).split("### Upstream review")[1].count("- [ ] **") == 2


def test_a_member_marked_encrypted_or_corrupt_is_one_error():
    archive = bytearray(_zip("probe.json", _report(_probe())))
    for header in (b"PK\x03\x04", b"PK\x01\x02"):  # the local and the central header's flag bits
        at = archive.find(header)
        flags = 6 if header == b"PK\x03\x04" else 8
        archive[at + flags] |= 1
    with pytest.raises(ReportError, match="encrypted"):
        read_archive(bytes(archive))
    corrupt = bytearray(_zip("probe.json", _report(_probe()) * 50))
    middle = corrupt.find(b"probe.json") + 40
    corrupt[middle : middle + 20] = b"\xff" * 20
    with pytest.raises(ReportError, match="not a readable zip archive"):
        read_archive(bytes(corrupt))
