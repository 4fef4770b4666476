"""New limits on values Ollama forwards, on the shapes of llama.cpp's real code (common/sampling.cpp and the
server's request parsing at b10242; Ollama's llm/llama_server.go)."""

from bot.model import LocalRef
from bot.review.changes import FileChange
from bot.review.limits import Limit, limit_drafts, new_limits, request_fields
from bot.review.rules import ollama_uses

SAMPLING_OLD = """struct common_sampler * common_sampler_init(const struct llama_model * model, struct common_params_sampling & params) {
    const llama_vocab * vocab = llama_model_get_vocab(model);
    return nullptr;
}
"""
SAMPLING_NEW = """struct common_sampler * common_sampler_init(const struct llama_model * model, struct common_params_sampling & params) {
    if (!std::isfinite(params.penalty_repeat) ||
        params.penalty_repeat <= 0.0f) {
        throw std::invalid_argument("penalty_repeat must be finite and greater than 0");
    }
    if (params.dry_sequence_breakers.empty()) {
        throw std::invalid_argument("dry_sequence_breakers must be a non-empty array");
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    return nullptr;
}
"""
PARSERS = {
    "tools/server/server-schema.cpp": (
        '    add((new field_num("repeat_penalty", params.sampling.penalty_repeat))\n'
        '    params.sampling.dry_sequence_breakers = json_value(data, "dry_sequence_breakers", std::vector<std::string>());\n'
        '    for (const auto & el : data.items()) { if (el.key() == "n_predict") { } }\n'
    ),
}
OLLAMA = {
    "llm/llama_server.go": 'req := map[string]any{\n\t"repeat_penalty": opts.RepeatPenalty,\n}\n',
    "llm/llama_server_test.go": '"dry_sequence_breakers"\n',
}


def test_a_new_check_names_the_members_its_condition_tests():
    change = FileChange.from_texts("common/sampling.cpp", SAMPLING_OLD, SAMPLING_NEW)
    assert [(limit.members, limit.line) for limit in new_limits(change)] == [
        (("penalty_repeat",), 4),
        (("dry_sequence_breakers",), 7),
    ]
    unchanged = FileChange.from_texts(
        "common/sampling.cpp", SAMPLING_NEW, SAMPLING_NEW.replace("vocab =", "vocab  =")
    )
    assert new_limits(unchanged) == []


def test_request_fields_come_from_parsing_calls_that_bind_the_member():
    assert request_fields(PARSERS, "penalty_repeat") == {"repeat_penalty"}
    assert request_fields(PARSERS, "dry_sequence_breakers") == {"dry_sequence_breakers"}
    assert request_fields(PARSERS, "key") == set()  # el.key() is a call next to a field, not a binding
    other = {"a.cpp": '    add((new my_field_num("top_k", params.sampling.top_k))\n'}  # not a schema field
    assert request_fields(other, "top_k") == set()
    assert request_fields({"a.cpp": other["a.cpp"].replace("my_", "")}, "top_k") == {"top_k"}


def _drafts(limits):
    return limit_drafts(
        limits,
        lambda m: request_fields(PARSERS, m),
        lambda f: ollama_uses(OLLAMA, ("llm/**/*.go",), f, whole=True),
    )


def test_a_limit_on_a_field_ollama_sends_is_high_and_one_on_a_field_it_never_sends_says_nothing():
    change = FileChange.from_texts("common/sampling.cpp", SAMPLING_OLD, SAMPLING_NEW)
    (draft,) = _drafts(new_limits(change))
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server now rejects some values of `repeat_penalty`, which Ollama forwards",
    )
    assert draft.local_refs == (LocalRef("llm/llama_server.go", 2),)
    assert "penalty_repeat must be finite and greater than 0" in draft.detail
    assert (draft.path, draft.line) == ("common/sampling.cpp", 4)
    assert _drafts([Limit(("n_ctx",), "x", "src/x.cpp", 1)]) == []
