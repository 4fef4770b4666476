"""Data-driven rules: shipped rules.toml, repository overrides, validation, line and block rules."""

import re

import pytest

from bot.model import AnalysisError, LocalRef
from bot.review.changes import FileChange
from bot.review.rules import rule_drafts
from bot.review.ruleset import load_rules, parse_rule

SERVER = """static void send(httplib::DataSink & sink, const json & data) {
    const std::string str = "data: " + data.dump() + "\\n\\n";
    sink.write(str.c_str(), str.size());
}
"""


def _rules(**overrides):
    return {r.id: r for r in load_rules(overrides)}


def test_shipped_rules_load_and_cover_every_area():
    rules = _rules()
    assert {"stream-keepalive", "ggml-device-props", "visible-devices", "tokenizer"} <= set(rules)
    assert {r.area for r in rules.values()} >= {"build", "discovery", "server", "streaming", "models"}


def test_repository_rules_override_key_by_key_disable_and_extend():
    rules = _rules(
        **{
            "stream-keepalive": {"severity": "high"},
            "tokenizer": {"enabled": False},
            "my-rule": {
                "area": "models",
                "severity": "info",
                "title": "Mine changed in {file}",
                "paths": ["src/x.cpp"],
            },
        }
    )
    assert rules["stream-keepalive"].severity == "high" and rules["stream-keepalive"].pattern is not None
    assert "tokenizer" not in rules
    assert rules["my-rule"].paths == ("src/x.cpp",)


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"severity": "urgent"}, "rules.stream-keepalive.severity"),
        ({"pattern": "(unclosed"}, "rules.stream-keepalive.pattern"),
        ({"colour": "red"}, "rules.stream-keepalive.colour"),
        ({"paths": []}, "rules.stream-keepalive.paths"),
        ({"enabled": "no"}, "rules.stream-keepalive.enabled"),
    ],
)
def test_a_malformed_override_names_its_key(raw, key):
    with pytest.raises(AnalysisError, match=key.replace(".", r"\.")):
        load_rules({"stream-keepalive": raw})


def test_a_new_rule_missing_required_keys_is_an_error():
    with pytest.raises(AnalysisError, match=r"rules\.new\.area: missing"):
        load_rules({"new": {"severity": "info", "title": "t", "paths": ["x"]}})
    with pytest.raises(AnalysisError, match=r"rules\.new: expected a table"):
        load_rules({"new": "yes"})
    with pytest.raises(AnalysisError, match="block"):
        parse_rule(
            "r",
            {
                "area": "build",
                "severity": "info",
                "title": "t",
                "paths": ["x"],
                "pattern": "a",
                "block": "struct x",
            },
            "rules.r",
        )


def test_line_rule_reports_a_changed_matching_line_with_local_refs():
    new = SERVER.replace(
        "sink.write(str.c_str(), str.size());", "sink.write(str.c_str(), str.size()); n_sent++;"
    )
    new = new.replace("static void send(", "static void send_partial_response(")
    change = FileChange.from_texts("tools/server/server.cpp", SERVER, new)
    local = {"llm/server.go": "sc := bufio.NewScanner(r)\n", "other.go": "bufio.NewScanner\n"}
    readers = {
        "stream-readers": (LocalRef("llm/server.go", 1),)
    }  # @stream-readers, as the inventory finds them
    (draft,) = rule_drafts(load_rules({}), [change], local, scopes=lambda name: readers.get(name, ()))
    assert (draft.area, draft.severity) == ("streaming", "info")
    assert draft.title == "Streaming chunk cadence changed in server.cpp"
    assert draft.path == "tools/server/server.cpp" and draft.line == 1 and draft.blame == ((1, 1), (3, 3))
    assert draft.local_refs == (LocalRef("llm/server.go", 1),)
    assert "```diff" in draft.detail and "send_partial_response" in draft.detail


def test_rule_local_refs_leave_out_go_test_files():
    new = SERVER.replace(
        "sink.write(str.c_str(), str.size());", "sink.write(str.c_str(), str.size()); n_sent++;"
    )
    change = FileChange.from_texts("tools/server/server.cpp", SERVER, new)
    scanner = "sc := bufio.NewScanner(r)\n"
    local = {"llm/server.go": scanner, "llm/server_test.go": scanner}
    readers = (LocalRef("llm/server.go", 1), LocalRef("llm/server_test.go", 1))
    (draft,) = rule_drafts(load_rules({}), [change], local, scopes=lambda name: readers)
    assert draft.local_refs == (LocalRef("llm/server.go", 1),)  # a test only shows how Ollama reads it


def test_line_rule_ignores_comment_only_and_unrelated_changes():
    commented = SERVER.replace("sink.write(", "// stream it\n    sink.write(")
    assert (
        rule_drafts(load_rules({}), [FileChange.from_texts("tools/server/server.cpp", SERVER, commented)], {})
        == []
    )
    unrelated = SERVER.replace("static void send", "static inline void send")
    assert (
        rule_drafts(load_rules({}), [FileChange.from_texts("tools/server/server.cpp", SERVER, unrelated)], {})
        == []
    )
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
    new = HEADER.replace(
        "    size_t memory_free;\n", "    size_t memory_free;\n    const char * device_id;\n"
    )
    drafts = rule_drafts(
        load_rules({}),
        [FileChange.from_texts("ggml/include/ggml-backend.h", HEADER, new)],
        {"internal/gpu/probe.go": "C.ggml_backend_dev_get_props(d, &props)\n"},  # any folder of Ollama's
    )
    (draft,) = [d for d in drafts if d.title == "struct ggml_backend_dev_props changed"]
    assert (draft.area, draft.severity, draft.line, draft.blame) == ("discovery", "high", 3, ((3, 8),))
    assert "+    const char * device_id;" in draft.detail
    assert draft.local_refs == (LocalRef("internal/gpu/probe.go", 1),)


def test_block_rule_ignores_comment_changes_inside_the_struct():
    new = HEADER.replace("    size_t memory_free;", "    size_t memory_free; // bytes")
    assert (
        rule_drafts(load_rules({}), [FileChange.from_texts("ggml/include/ggml-backend.h", HEADER, new)], {})
        == []
    )


# Subject rules, on the shapes of llama.cpp's real tables (src/llama-arch.cpp, tools/server/*.cpp).
ARCH_KV = """static const std::map<llm_kv, const char *> LLM_KV_NAMES = {
    { LLM_KV_CONTEXT_LENGTH,                    "%s.context_length"                    },
    { LLM_KV_ROPE_FREQ_BASE,                    "%s.rope.freq_base"                    },
    { LLM_KV_ROPE_FREQ_BASE_SWA,                "%s.rope.freq_base_swa"                },
};
"""
CONVERTER = 'kv["laguna.context_length"] = p.MaxPositionEmbeddings\nkv["laguna.rope.freq_base_swa"] = x\n'


def _arch_change(new: str) -> FileChange:
    return FileChange.from_texts("src/llama-arch.cpp", ARCH_KV, new)


def test_a_renamed_gguf_key_that_ollamas_converter_writes_is_high_with_the_converter_line():
    renamed = ARCH_KV.replace('"%s.rope.freq_base_swa"      ', '"%s.rope.swa.freq_base"      ')
    (draft,) = rule_drafts(load_rules({}), [_arch_change(renamed)], {"convert/convert_laguna.go": CONVERTER})
    assert draft.severity == "high"
    assert draft.title == "GGUF metadata key `rope.freq_base_swa` removed or renamed upstream"
    assert draft.local_refs == (LocalRef("convert/convert_laguna.go", 2),)
    assert draft.removed == (
        "src/llama-arch.cpp",
        '{ LLM_KV_ROPE_FREQ_BASE_SWA,                "%s.rope.freq_base_swa"                },',
    )


def test_gguf_keys_only_added_or_moved_say_nothing_and_an_unused_removal_is_information():
    added = ARCH_KV.replace("};", '    { LLM_KV_NUM_LOOPS, "%s.num_loops" },\n};')
    moved = ARCH_KV.replace(
        '    { LLM_KV_CONTEXT_LENGTH,                    "%s.context_length"                    },\n', ""
    )
    moved = moved.replace("};", '    { LLM_KV_CONTEXT_LENGTH, "%s.context_length" },\n};')
    local = {"convert/convert_laguna.go": CONVERTER}
    assert rule_drafts(load_rules({}), [_arch_change(added)], local) == []
    assert rule_drafts(load_rules({}), [_arch_change(moved)], local) == []
    dropped = ARCH_KV.replace(
        '    { LLM_KV_ROPE_FREQ_BASE,                    "%s.rope.freq_base"                    },\n', ""
    )
    (draft,) = rule_drafts(load_rules({}), [_arch_change(dropped)], local)
    assert draft.severity == "info" and draft.local_refs == ()


def test_a_change_in_a_backend_ollama_does_not_build_is_information_only():
    old = "static int count() { return 0; }\n"
    new = 'static int count() { const char * e = getenv("GGML_OPENVINO_DEVICE"); return e != nullptr; }\n'
    change = FileChange.from_texts("ggml/src/ggml-openvino/ggml-openvino.cpp", old, new)
    local = {"discover/gpu.go": 'os.Setenv("GGML_OPENVINO_DEVICE", id)\n'}
    (built,) = rule_drafts(load_rules({}), [change], local)
    assert built.severity == "high" and built.local_refs == (LocalRef("discover/gpu.go", 1),)
    (unbuilt,) = rule_drafts(load_rules({}), [change], local, builds=lambda path: "openvino" not in path)
    assert unbuilt.severity == "info"
    (unused,) = rule_drafts(load_rules({}), [change], {})
    assert unused.severity == "info"


def test_a_pre_tokenizer_name_ollama_writes_that_upstream_no_longer_knows_is_high():
    old = 'if (tokenizer_pre == "laguna") {\n    pre_type = LLAMA_VOCAB_PRE_TYPE_LAGUNA;\n} else if (tokenizer_pre == "qwen2") {\n    pre_type = LLAMA_VOCAB_PRE_TYPE_QWEN2;\n}\n'
    new = old.replace('"laguna"', '"laguna-v2"')
    change = FileChange.from_texts("src/llama-vocab.cpp", old, new)
    drafts = rule_drafts(
        load_rules({}), [change], {"convert/convert_laguna.go": 'kv["tokenizer.ggml.pre"] = "laguna"\n'}
    )
    (pre,) = [d for d in drafts if d.title.startswith("Pre-tokenizer")]
    assert pre.severity == "high" and "`laguna`" in pre.title
    assert {d.severity for d in drafts if d is not pre} == {"info"}


def test_subject_keys_are_validated():
    with pytest.raises(AnalysisError, match=r"rules\.r\.when"):
        parse_rule(
            "r",
            {
                "area": "build",
                "severity": "info",
                "title": "t",
                "paths": ["x"],
                "pattern": "a",
                "when": "sometimes",
            },
            "rules.r",
        )
    with pytest.raises(AnalysisError, match=r"rules\.r\.subject: a subject needs a pattern"):
        parse_rule(
            "r",
            {"area": "build", "severity": "info", "title": "t", "paths": ["x"], "subject": "a"},
            "rules.r",
        )


def test_hunk_code_stays_on_its_own_line_numbers_after_a_pure_insertion():
    # A pure insertion has no removed lines: the hunks after it must still see their own code.
    old = 'int a() {\n    return 1;\n}\nint b() {\n    // was here\n    return f(x, "wav");\n}\n'
    new = "int z() {}\n" + old.replace('f(x, "wav")', "g(x)")
    change = FileChange.from_texts("src/x.cpp", old, new)
    removed = [(n, code) for s in change.significant for n, code in change.removed_code(s)]
    assert removed == [(6, '    return f(x, "wav");')]


def test_a_re_check_finds_the_lines_a_rule_matches_in_the_facts_store(tmp_path, monkeypatch):
    """Which changed lines match a rule's pattern is kept by the change's texts and the pattern: a second
    review of the same change matches nothing again and says the same; another pattern is not served what
    the first one matched."""
    from bot.cache import facts
    from bot.review import rules

    renamed = ARCH_KV.replace('"%s.rope.freq_base_swa"      ', '"%s.rope.swa.freq_base"      ')
    local = {"convert/convert_laguna.go": CONVERTER}
    shipped = load_rules({})
    uncached = rule_drafts(shipped, [_arch_change(renamed)], local)
    assert uncached
    with facts.using(facts.FactStore(tmp_path / "facts")):
        assert rule_drafts(shipped, [_arch_change(renamed)], local) == uncached
        matched = []
        monkeypatch.setattr(rules, "_matching_lines", lambda *a: matched.append(a) or ([], []))
        assert rule_drafts(shipped, [_arch_change(renamed)], local) == uncached
        assert not matched
        monkeypatch.undo()
        (keys,) = [r for r in shipped if r.id == "gguf-keys"]
        added_only = re.compile(r'"%s\.rope\.swa\.freq_base"')
        with facts.using(None):
            expected = rules._changed_lines(_arch_change(renamed), added_only)
        assert expected[1] and not expected[0]
        assert rules._changed_lines(_arch_change(renamed), added_only) == expected
        assert rules._changed_lines(_arch_change(renamed), keys.pattern) != expected


def test_a_rules_scope_is_where_the_inventory_finds_ollamas_reader_whatever_its_folder(tmp_path):
    """@stream-readers: the wire tests' Ollama reads llama-server's stream in runner/server.go; the keep-alive
    rule points at its stream parser there."""
    from tests.test_review_e2e import _history, _review
    from tests.test_review_wire import OLLAMA, UPSTREAM

    context = UPSTREAM["tools/server/server-context.cpp"]
    pinged = context.replace(
        "        return true;\n    });",
        "        send_keep_alive_ping(output);\n        return true;\n    });",
    )
    b = _history(
        tmp_path,
        [("server: ping idle streams (#12)", {"tools/server/server-context.cpp": pinged})],
        base=UPSTREAM,
    )
    findings, _ = _review(b, ollama={p: t.encode() for p, t in OLLAMA.items()}, patches=())
    (ping,) = [
        f for f in findings if f.title == "Stream heartbeats / keep-alive changed in server-context.cpp"
    ]
    lines = OLLAMA["runner/server.go"].split("\n")
    assert ping.local_refs and {r.path for r in ping.local_refs} == {"runner/server.go"}
    # the lines of its stream parser that compare what it read (a prefix, a stop type), not its timers
    assert all("Prefix(line" in lines[r.line - 1] or '== "' in lines[r.line - 1] for r in ping.local_refs)


def test_an_unknown_scope_in_a_repository_rule_is_an_error_naming_it():
    with pytest.raises(
        AnalysisError, match=r"rules\.mine\.local_paths: '@everything' is not one of @stream-readers"
    ):
        load_rules(
            {
                "mine": {
                    "area": "server",
                    "severity": "info",
                    "paths": ["a.cpp"],
                    "title": "t",
                    "local_paths": ["@everything"],
                }
            }
        )


ENUM = """enum ggml_backend_dev_type {
    GGML_BACKEND_DEVICE_TYPE_CPU,
    GGML_BACKEND_DEVICE_TYPE_GPU,
    GGML_BACKEND_DEVICE_TYPE_IGPU,
    GGML_BACKEND_DEVICE_TYPE_ACCEL
};
"""
GO_COPY = {
    "discover/platform.go": "const (\n\tggmlBackendDeviceTypeGPU  = 1\n\tggmlBackendDeviceTypeIGPU = 2\n)\n",
}


def test_an_enum_whose_values_move_is_high_and_points_at_ollamas_copy_of_its_values():
    inserted = ENUM.replace("_CPU,\n", "_CPU,\n    GGML_BACKEND_DEVICE_TYPE_REMOTE,\n")
    change = FileChange.from_texts("ggml/include/ggml-backend.h", ENUM, inserted)
    (draft,) = rule_drafts(load_rules({}), [change], GO_COPY)
    assert draft.severity == "high" and draft.title == "enum ggml_backend_dev_type changed"
    assert "`GGML_BACKEND_DEVICE_TYPE_GPU` 1 -> 2" in draft.detail
    assert LocalRef("discover/platform.go", 2) in draft.local_refs  # ggmlBackendDeviceTypeGPU


def test_an_enum_that_only_gains_values_at_its_end_is_information():
    appended = ENUM.replace("_ACCEL\n", "_ACCEL,\n    GGML_BACKEND_DEVICE_TYPE_REMOTE\n")
    change = FileChange.from_texts("ggml/include/ggml-backend.h", ENUM, appended)
    (draft,) = rule_drafts(load_rules({}), [change], GO_COPY)
    assert draft.severity == "info" and "values were only added" in draft.detail
    explicit = ENUM.replace("_CPU,", "_CPU = 0,")
    renumbered = explicit.replace("_CPU = 0,", "_CPU = 1,")
    change = FileChange.from_texts("ggml/include/ggml-backend.h", explicit, renumbered)
    assert [d.severity for d in rule_drafts(load_rules({}), [change], GO_COPY)] == ["high"]


def test_a_rule_item_shows_where_ollama_configures_the_program_first_and_ten_lines_at_most():
    """Of the lines a rule finds in Ollama's code, those where Ollama gives the program a flag or an
    environment variable (the inventory's launch settings) come first, whatever file order found them."""
    from bot.review.changes import Draft
    from bot.review.checks.rules import REFS_SHOWN, _ranked

    probes = tuple(LocalRef("discover/probe.go", n) for n in range(1, 40))
    setting = LocalRef("llm/server.go", 511)
    draft = Draft(
        "discovery", "high", "t", "d", "ggml/src/ggml-backend-reg.cpp", 1, local_refs=(*probes, setting)
    )
    ranked = _ranked(draft, {setting})
    assert ranked.local_refs == (setting, *probes[: REFS_SHOWN - 1])
    assert _ranked(draft, set()).local_refs == probes[:REFS_SHOWN]
