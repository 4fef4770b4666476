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
    assert [(limit.members, limit.line) for limit in new_limits(change, False)] == [
        (("penalty_repeat",), 4),
        (("dry_sequence_breakers",), 7),
    ]
    unchanged = FileChange.from_texts(
        "common/sampling.cpp", SAMPLING_NEW, SAMPLING_NEW.replace("vocab =", "vocab  =")
    )
    assert new_limits(unchanged, False) == []


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
    (draft,) = _drafts(new_limits(change, False))
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server now rejects some values of `repeat_penalty`, which Ollama forwards",
    )
    assert draft.local_refs == (LocalRef("llm/llama_server.go", 2),)
    assert "penalty_repeat must be finite and greater than 0" in draft.detail
    assert (draft.path, draft.line) == ("common/sampling.cpp", 4)
    assert _drafts([Limit(("n_ctx",), "x", "src/x.cpp", 1)]) == []


STOP_OLD = """void add_fields() {
    add((new field_json("stop"))
        ->set_handler([&](field_eval_context & ctx, const json & data) {
            const auto & stop = data.at("stop");
            if (stop.is_array()) {
                for (const auto & word : stop) {
                    ctx.params.antiprompt.push_back(word);
                }
            }
        }));
    add((new field_json("preserved_tokens"))
        ->set_handler([&](field_eval_context & ctx, const json & data) {
            for (const auto & t : data.at("preserved_tokens")) {
                auto ids = common_tokenize(ctx.vocab, t.get<std::string>(), false, true);
                if (ids.size() == 1) {
                    ctx.params.sampling.preserved_tokens.insert(ids[0]);
                }
            }
        }));
}
"""
SCHEMA = "tools/server/server-schema.cpp"
SENT = {
    "llm/llama_server.go": 'req := map[string]any{\n\t"stop": opts.Stop,\n\t"preserved_tokens": toks,\n}\n'
}


def _limits_of(old, new, path=SCHEMA):
    limits = new_limits(FileChange.from_texts(path, old, new), path.startswith("tools/server/"))
    return limits, limit_drafts(
        limits, lambda m: set(), lambda f: ollama_uses(SENT, ("llm/**/*.go",), f, whole=True)
    )


def test_a_new_rejection_of_a_local_read_from_a_request_field_names_the_field():
    sized = STOP_OLD.replace(
        "            if (stop.is_array()) {\n",
        "            if (stop.is_array()) {\n                if (stop.size() > 4) {\n"
        '                    throw std::runtime_error("at most 4");\n                }\n',
    )
    tokenized = STOP_OLD.replace(
        "                if (ids.size() == 1) {\n                    ctx",
        '                if (ids.size() != 1) {\n                    throw std::runtime_error("one token");\n'
        "                }\n                ctx",
    )
    for new, field in ((sized, "stop"), (tokenized, "preserved_tokens")):
        limits, (draft,) = _limits_of(STOP_OLD, new)
        assert limits[0].fields == (field,)
        assert (draft.severity, draft.title) == (
            "high",
            f"llama-server now rejects some values of `{field}`, which Ollama forwards",
        )
        assert draft.local_refs and draft.local_refs[0].path == "llm/llama_server.go"


def test_a_new_error_answer_is_a_rejection_like_a_throw():
    """A handler that answers an error (`res->error(...)`) under a new condition on what it read from the
    request rejects those values as a throw would; the message is taken when the call spells it."""
    answered = STOP_OLD.replace(
        "                if (ids.size() == 1) {\n                    ctx",
        "                if (ids.size() > 1) {\n"
        '                    res->error(format_error_response("one token", ERROR_TYPE_INVALID_REQUEST));\n'
        "                    return;\n                }\n                if (ids.size() == 1) {\n                    ctx",
    )
    limits, (draft,) = _limits_of(STOP_OLD, answered)
    assert (limits[0].fields, limits[0].message) == (("preserved_tokens",), "one token")
    assert draft.title == "llama-server now rejects some values of `preserved_tokens`, which Ollama forwards"
    unanswered = answered.replace(
        'res->error(format_error_response("one token", ERROR_TYPE_INVALID_REQUEST));', ""
    )
    assert _limits_of(STOP_OLD, unanswered) == ([], [])


def test_a_new_rejection_of_what_the_request_never_set_or_outside_the_request_parsing_says_nothing():
    vocab = STOP_OLD.replace(
        "            for (const auto & t",
        '            if (ctx.vocab == nullptr) {\n                throw std::runtime_error("no vocab");\n'
        "            }\n            for (const auto & t",
    )
    assert _limits_of(STOP_OLD, vocab)[1] == []
    sized = STOP_OLD.replace(
        "            if (stop.is_array()) {\n",
        '            if (stop.size() > 4) {\n                throw std::runtime_error("at most 4");\n'
        "            }\n            if (stop.is_array()) {\n",
    )
    assert _limits_of(STOP_OLD, sized, "common/chat.cpp")[1] == []
    counting = STOP_OLD.replace(
        "void add_fields() {\n",
        "void count_tokens(const json & body) {\n"
        '    json stop = body.at("stop");\n'
        "    if (!stop.is_string()) {\n"
        '        throw std::runtime_error("stop must be a string");\n'
        "    }\n"
        "}\n"
        "void add_fields() {\n",
    )
    assert _limits_of(STOP_OLD, counting)[1] == []  # a new reading with its check: new code, not a new limit


def test_a_field_read_anew_to_check_it_inside_the_parsing_that_read_it_before_names_the_field():
    """The check's own reading of `stop` is on an added line, but in a function the old code has and of a
    field it read: a new limit on what Ollama sends (a reading in a new function is new code: above)."""
    guarded = STOP_OLD.replace(
        '    add((new field_json("preserved_tokens"))\n',
        '    add((new field_json("stop_guard"))\n'
        "        ->set_handler([&](field_eval_context & ctx, const json & data) {\n"
        '            const auto & words = data.at("stop");\n'
        "            if (words.is_null()) {\n"
        '                throw std::runtime_error("\\"stop\\" must be a string or an array");\n'
        "            }\n"
        "        }));\n"
        '    add((new field_json("preserved_tokens"))\n',
    )
    limits, (draft,) = _limits_of(STOP_OLD, guarded)
    assert limits[0].fields == ("stop",)
    assert '"stop" must be a string or an array' in draft.detail


def test_the_rejections_message_is_shown_as_code_on_one_line():
    """Upstream's text, unescaped, may hold backticks, Markdown and newlines: it stays one inert code span."""
    (draft,) = _drafts([Limit(("penalty_repeat",), "bad `x`\n# heading <b>", "common/sampling.cpp", 4)])
    assert "\n" not in draft.detail
    assert "(``bad `x`\\n# heading <b>``)" in draft.detail


def test_a_rejection_below_an_unchanged_else_takes_the_condition_added_above_it():
    """The diff splits the new check: its `if` is added in one hunk, the old `} else {` stays, and the
    rejection is the next hunk's one added line."""
    old = (
        "void parse(const json & body, json & out) {\n"
        '    if (body.contains("grammar")) {\n'
        '        out["grammar"] = body.at("grammar");\n'
        "    } else {\n"
        '        out["stop"] = json_value(body, "stop", json::array());\n'
        "    }\n"
        "}\n"
    )
    new = old.replace(
        '    } else {\n        out["stop"] = json_value(body, "stop", json::array());\n',
        '    } else if (body.at("stop").is_array()) {\n'
        '        out["stop"] = body.at("stop");\n'
        "    } else {\n"
        '        throw std::invalid_argument("stop must be an array");\n',
    )
    change = FileChange.from_texts(SCHEMA, old, new)
    assert len(change.significant) == 2  # the diff keeps `} else {`
    limits, (draft,) = _limits_of(old, new)
    assert (limits[0].fields, limits[0].line) == (("stop",), 7)
    assert "`stop must be an array`" in draft.detail
    apart = new.replace("    } else {\n        throw", "    } else {\n\n\n\n\n\n        throw")
    assert _limits_of(old, apart)[0] == []  # a condition further up is not the rejection's


def test_a_rejection_in_an_else_if_reads_the_key_the_chain_tested_above():
    """`if (m.contains("id")) {...} else if (role == "tool") { throw }`: the branch runs where the key is
    missing, so the limit is on the key the chain's head tests (its own condition reads no field)."""
    old = (
        "void parse_msg(const json & m, msg_t & msg) {\n"
        '    if (m.contains("tool_call_id")) {\n'
        '        msg.tool_call_id = m.at("tool_call_id");\n'
        "    }\n"
        "}\n"
    )
    new = old.replace(
        "    }\n}",
        '    } else if (msg.role == "tool") {\n'
        '        throw std::invalid_argument("Missing tool_call_id");\n'
        "    }\n}",
    )
    (limit,) = new_limits(FileChange.from_texts("common/chat.cpp", old, new), False)
    assert (limit.fields, limit.members, limit.line) == (("tool_call_id",), ("role",), 5)


def test_a_limit_in_an_endpoints_handler_is_cited_at_the_field_ollama_sends_it_and_where_it_calls_it(
    tmp_path,
):
    """A new error answer in `/completion`'s handler on the `prompt` it read: the item points at the `prompt`
    Ollama sends that endpoint and at the request Ollama makes to it."""
    from tests.fixtures import review_one_commit
    from tests.test_review_error_status import ANCHOR, CONTEXT
    from tests.test_review_wire import OLLAMA as WIRE_OLLAMA
    from tests.test_review_wire import SERVER_GO, UPSTREAM

    limited = UPSTREAM[CONTEXT].replace(
        ANCHOR,
        ANCHOR
        + "    if (prompt.size() > 4096) {\n"
        + '        res->error(format_error_response("prompt too long", ERROR_TYPE_INVALID_REQUEST));\n'
        + "        return res;\n    }\n",
    )
    ollama = {path: text.encode() for path, text in WIRE_OLLAMA.items()}
    findings = review_one_commit(tmp_path, UPSTREAM, {CONTEXT: limited}, ollama)
    (item,) = [f for f in findings if f.title.startswith("llama-server now rejects some values")]
    assert item.title == "llama-server now rejects some values of `prompt`, which Ollama forwards"
    lines = SERVER_GO.split("\n")
    sent = next(n for n, line in enumerate(lines, 1) if '"prompt"' in line)
    called = next(n for n, line in enumerate(lines, 1) if "/completion" in line)
    assert {(r.path, r.line) for r in item.local_refs} >= {
        ("runner/server.go", sent),
        ("runner/server.go", called),
    }


def test_a_limit_in_the_handler_of_an_endpoint_ollama_never_calls_says_nothing(tmp_path):
    """The same check on `prompt` in `/v1/messages`' handler, which Ollama never calls, and in `/completion`'s,
    which it calls: only the second is Ollama's."""
    from tests.fixtures import review_one_commit
    from tests.test_review_error_status import CONTEXT
    from tests.test_review_wire import OLLAMA as WIRE_OLLAMA
    from tests.test_review_wire import UPSTREAM

    ollama = {path: text.encode() for path, text in WIRE_OLLAMA.items()}
    check = '        if (body.at("prompt").is_null()) {\n            throw std::invalid_argument("no prompt");\n        }\n'
    for handler, said in (("post_anthropic_messages", False), ("post_completions", True)):
        opening = f"    this->{handler} = [this](const server_http_req & req) {{\n"
        assert opening in UPSTREAM[CONTEXT]
        body = "        json body = json::parse(req.body);\n" if handler == "post_completions" else ""
        limited = UPSTREAM[CONTEXT].replace(opening, opening + body + check)
        findings = review_one_commit(tmp_path / handler, UPSTREAM, {CONTEXT: limited}, ollama)
        titles = [f.title for f in findings if f.title.startswith("llama-server now rejects")]
        assert titles == (
            ["llama-server now rejects some values of `prompt`, which Ollama forwards"] if said else []
        )
