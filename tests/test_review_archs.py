"""Architectures upstream adds or drops, and native support for an architecture a model patch adds."""

from bot.model import LocalRef
from bot.patches.patchfile import parse
from bot.review.archs import arch_drafts, architectures, patch_architectures, renamed_model_names
from bot.review.source import code_text
from tests.gitutil import make_patch

ARCH = """static const std::map<llm_arch, const char *> LLM_ARCH_NAMES = {
    { LLM_ARCH_LLAMA,            "llama"            },
    { LLM_ARCH_QWEN3,            "qwen3"            },
    // { LLM_ARCH_OLD,           "old"              },
    { LLM_ARCH_UNKNOWN,          "(unknown)"        },
};
"""
WITH_LAGUNA = ARCH.replace(
    "    { LLM_ARCH_UNKNOWN", '    { LLM_ARCH_LAGUNA,           "laguna"           },\n    { LLM_ARCH_UNKNOWN'
)
PATCH = make_patch(
    ARCH,
    ARCH.replace("    { LLM_ARCH_UNKNOWN", '    { LLM_ARCH_LAGUNA, "laguna" },\n    { LLM_ARCH_UNKNOWN'),
    "src/llama-arch.cpp",
)

TABLE = "src/llama-arch.cpp"


def _archs(text):
    return architectures(code_text(text, "src/llama-arch.cpp"))


def test_architectures_table_ignores_comments():
    assert {a.enum: (a.name, a.line) for a in _archs(ARCH).values()} == {
        "LLM_ARCH_LLAMA": ("llama", 2),
        "LLM_ARCH_QWEN3": ("qwen3", 3),
        "LLM_ARCH_UNKNOWN": ("(unknown)", 5),
    }


def test_patch_architectures_points_at_the_adding_line_of_the_patch():
    ((arch, ref),) = patch_architectures([("llama/compat/0001-laguna.patch", parse(PATCH))])
    assert (arch.enum, arch.name) == ("LLM_ARCH_LAGUNA", "laguna")
    assert PATCH.splitlines()[ref.line - 1].startswith(b"+    { LLM_ARCH_LAGUNA")


def test_native_support_for_a_patched_architecture_is_high():
    patched = patch_architectures([("llama/compat/0001-laguna.patch", parse(PATCH))])
    (draft,) = arch_drafts(_archs(ARCH), _archs(WITH_LAGUNA), patched, lambda n: n, TABLE)
    assert (draft.area, draft.severity) == ("models", "high")
    assert draft.title == "Upstream now supports architecture `laguna` natively"
    assert "may need removal or rebase" in draft.detail and draft.line == 5
    assert draft.local_refs == tuple(ref for _, ref in patched)


def test_new_architecture_without_a_patch_is_info_and_removed_one_is_medium():
    (draft,) = arch_drafts(_archs(ARCH), _archs(WITH_LAGUNA), [], lambda n: n, TABLE)
    assert (draft.severity, draft.title) == ("info", "New architecture `laguna`")
    (draft,) = arch_drafts(
        _archs(ARCH),
        _archs(ARCH.replace('    { LLM_ARCH_QWEN3,            "qwen3"            },\n', "")),
        [],
        lambda n: 3,
        TABLE,
    )
    assert (draft.severity, draft.title, draft.removed) == (
        "medium",
        "Architecture `qwen3` was removed",
        ("src/llama-arch.cpp", '"qwen3"'),
    )


def test_renamed_enum_for_the_same_architecture_is_no_finding():
    assert (
        arch_drafts(
            _archs(ARCH), _archs(ARCH.replace("LLM_ARCH_QWEN3,", "LLM_ARCH_QWEN_3,")), [], lambda n: n, TABLE
        )
        == []
    )


# The shapes of the real case: Ollama's own Laguna (a model source compiled into llama.cpp and a patch adding
# its tensor) against upstream's native one, which names two keys and a tensor differently.
UPSTREAM_TABLES = """static const std::map<llm_kv, const char *> LLM_KV_NAMES = {
    { LLM_KV_ROPE_FREQ_BASE,            "%s.rope.freq_base"            },
    { LLM_KV_ROPE_FREQ_BASE_SWA,        "%s.rope.freq_base_swa"        },
    { LLM_KV_ROPE_DIMENSION_COUNT_SWA,  "%s.rope.dimension_count_swa"  },
};
static const std::map<llm_tensor, const char *> LLM_TENSOR_NAMES = {
    { LLM_TENSOR_ATTN_Q,                "blk.%d.attn_q" },
    { LLM_TENSOR_ATTN_GATE,             "blk.%d.attn_gate" },
};
"""
LAGUNA_CPP = """void llama_model_laguna::load_arch_hparams(llama_model_loader & ml) {
    ml.get_key("laguna.rope.swa.dimension_count", hparams.n_rot_swa, false);
    ml.get_key("laguna.rope.swa.freq_base", hparams.rope_freq_base_train_swa, false);
    ml.get_key("laguna.rope.freq_base", hparams.rope_freq_base_train, false);
    ml.get_key("laguna.attention.gating_type", hparams.gating, false);
}
"""
TENSOR_PATCH_LINE = '    { LLM_TENSOR_ATTN_GATE_LAGUNA,       "blk.%d.attn_g" },'


def test_names_ollamas_own_implementation_reads_that_upstreams_native_one_spells_differently():
    patch_ref = LocalRef("llama/compat/models/003-llama-cpp-laguna.patch", 10)
    found = renamed_model_names(
        "laguna",
        {"llama/compat/models/laguna.cpp": LAGUNA_CPP},
        [(TENSOR_PATCH_LINE, patch_ref)],
        UPSTREAM_TABLES,
    )
    assert found == [
        (
            "laguna.rope.swa.dimension_count",
            "laguna.rope.dimension_count_swa",
            LocalRef("llama/compat/models/laguna.cpp", 2),
        ),
        (
            "laguna.rope.swa.freq_base",
            "laguna.rope.freq_base_swa",
            LocalRef("llama/compat/models/laguna.cpp", 3),
        ),
        ("blk.%d.attn_g", "blk.%d.attn_gate", patch_ref),
    ]  # rope.freq_base is the same name; gating_type has no upstream counterpart: upstream does not need it
    translating = (
        LAGUNA_CPP + 'copy_f32_kv(meta, "laguna.rope.swa.freq_base", "laguna.rope.freq_base_swa");\n'
    )
    assert [n for n, _, _ in renamed_model_names("laguna", {"c.cpp": translating}, [], UPSTREAM_TABLES)] == [
        "laguna.rope.swa.dimension_count"
    ]


def test_a_native_architecture_item_lists_the_names_to_translate():
    (draft,) = arch_drafts(
        _archs(ARCH),
        _archs(WITH_LAGUNA),
        patch_architectures([("p.patch", parse(PATCH))]),
        lambda line: line,
        TABLE,
        renamed=lambda arch: [
            ("laguna.rope.swa.freq_base", "laguna.rope.freq_base_swa", LocalRef("c.cpp", 3))
        ],
    )
    assert draft.severity == "high"
    assert "- `laguna.rope.swa.freq_base` is `laguna.rope.freq_base_swa` upstream (`c.cpp:3`)" in draft.detail
    assert ("c.cpp", 3) in [(r.path, r.line) for r in draft.local_refs]


def test_the_architecture_table_is_found_by_its_entries_wherever_upstream_keeps_it(tmp_path):
    """No file at the profile's hint: the changed file whose old text holds the table's entries is it."""
    from tests.test_review_e2e import ARCH as E2E_ARCH
    from tests.test_review_e2e import UPSTREAM, _history, _review

    moved = {p: t for p, t in UPSTREAM.items() if p != "src/llama-arch.cpp"} | {
        "src/arch/names.cpp": E2E_ARCH
    }
    laguna = E2E_ARCH.replace(
        "    { LLM_ARCH_UNKNOWN",
        '    { LLM_ARCH_LAGUNA,           "laguna"           },\n    { LLM_ARCH_UNKNOWN',
    )
    b = _history(tmp_path, [("model: add Laguna (#104)", {"src/arch/names.cpp": laguna})], base=moved)
    findings, _ = _review(b)
    (arch,) = [f for f in findings if f.check == "models.architectures"]
    assert (arch.title, arch.upstream_path) == (
        "Upstream now supports architecture `laguna` natively",
        "src/arch/names.cpp",
    )
