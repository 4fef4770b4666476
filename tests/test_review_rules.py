"""Data-driven rules: shipped rules.toml, repository overrides, validation, line and block rules."""

import pytest

from bot.model import AnalysisError, LocalRef
from bot.review.changes import FileChange
from bot.review.rules import load_rules, parse_rule, rule_drafts

SERVER = """static void send(httplib::DataSink & sink, const json & data) {
    const std::string str = "data: " + data.dump() + "\\n\\n";
    sink.write(str.c_str(), str.size());
}
"""


def _rules(**overrides):
    return {r.id: r for r in load_rules(overrides)}


def test_shipped_rules_load_and_cover_every_area():
    rules = _rules()
    assert {"sse-framing", "ggml-device-props", "visible-devices", "tokenizer"} <= set(rules)
    assert {r.area for r in rules.values()} >= {"build", "discovery", "server", "streaming", "models"}


def test_repository_rules_override_key_by_key_disable_and_extend():
    rules = _rules(**{
        "sse-framing": {"severity": "high"},
        "tokenizer": {"enabled": False},
        "my-rule": {"area": "models", "severity": "info", "title": "Mine changed in {file}", "paths": ["src/x.cpp"]},
    })
    assert rules["sse-framing"].severity == "high" and rules["sse-framing"].pattern is not None
    assert "tokenizer" not in rules
    assert rules["my-rule"].paths == ("src/x.cpp",)


@pytest.mark.parametrize("raw, key", [
    ({"severity": "urgent"}, "rules.sse-framing.severity"),
    ({"pattern": "(unclosed"}, "rules.sse-framing.pattern"),
    ({"colour": "red"}, "rules.sse-framing.colour"),
    ({"paths": []}, "rules.sse-framing.paths"),
    ({"enabled": "no"}, "rules.sse-framing.enabled"),
])
def test_a_malformed_override_names_its_key(raw, key):
    with pytest.raises(AnalysisError, match=key.replace(".", r"\.")):
        load_rules({"sse-framing": raw})


def test_a_new_rule_missing_required_keys_is_an_error():
    with pytest.raises(AnalysisError, match=r"rules\.new\.area: missing"):
        load_rules({"new": {"severity": "info", "title": "t", "paths": ["x"]}})
    with pytest.raises(AnalysisError, match=r"rules\.new: expected a table"):
        load_rules({"new": "yes"})
    with pytest.raises(AnalysisError, match="block"):
        parse_rule("r", {"area": "build", "severity": "info", "title": "t", "paths": ["x"], "pattern": "a",
                         "block": "struct x"}, "rules.r")


def test_line_rule_reports_a_changed_matching_line_with_local_refs():
    new = SERVER.replace('"data: " + data.dump() + "\\n\\n"', '"event: chunk\\ndata: " + data.dump() + "\\n\\n"')
    change = FileChange.from_texts("tools/server/server.cpp", SERVER, new)
    local = {"llm/server.go": 'x := bytes.TrimPrefix(line, []byte("data: "))\n', "other.go": "data: \n"}
    (draft,) = rule_drafts(load_rules({}), [change], local)
    assert (draft.area, draft.severity) == ("streaming", "medium")
    assert draft.title == "SSE framing of llama-server changed in server.cpp"
    assert draft.path == "tools/server/server.cpp" and draft.line == 2 and draft.blame == ((2, 2),)
    assert draft.local_refs == (LocalRef("llm/server.go", 1),)
    assert "```diff" in draft.detail and "event: chunk" in draft.detail


def test_line_rule_ignores_comment_only_and_unrelated_changes():
    commented = SERVER.replace("sink.write(", "// stream it\n    sink.write(")
    assert rule_drafts(load_rules({}), [FileChange.from_texts("tools/server/server.cpp", SERVER, commented)], {}) == []
    unrelated = SERVER.replace("static void send", "static inline void send")
    assert rule_drafts(load_rules({}), [FileChange.from_texts("tools/server/server.cpp", SERVER, unrelated)], {}) == []
    elsewhere = FileChange.from_texts("docs/server.cpp", SERVER, SERVER.replace("data: ", "event: "))
    assert rule_drafts(load_rules({}), [elsewhere], {}) == []


HEADER = """#pragma once
// device properties
struct ggml_backend_dev_props {
    const char * name;
    size_t memory_free;
    enum ggml_backend_dev_type type;
};
GGML_API void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props);
"""


def test_block_rule_reports_a_changed_struct_body():
    new = HEADER.replace("    size_t memory_free;\n", "    size_t memory_free;\n    const char * device_id;\n")
    drafts = rule_drafts(load_rules({}), [FileChange.from_texts("ggml/include/ggml-backend.h", HEADER, new)],
                         {"discover/gpu.go": "C.ggml_backend_dev_get_props(d, &props)\n"})
    (draft,) = [d for d in drafts if d.title == "struct ggml_backend_dev_props changed"]
    assert (draft.area, draft.severity, draft.line, draft.blame) == ("discovery", "high", 3, ((3, 8),))
    assert "+    const char * device_id;" in draft.detail
    assert draft.local_refs == (LocalRef("discover/gpu.go", 1),)


def test_block_rule_ignores_comment_changes_inside_the_struct():
    new = HEADER.replace("    size_t memory_free;", "    size_t memory_free; // bytes")
    assert rule_drafts(load_rules({}), [FileChange.from_texts("ggml/include/ggml-backend.h", HEADER, new)], {}) == []
