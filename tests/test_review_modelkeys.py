"""Optional model keys whose default the bump changed, or that it now requires, where Ollama's code leaves
some of its models without the key (a write under a condition, a removal)."""

from __future__ import annotations

from bot.model import LocalRef
from bot.review import modelkeys
from bot.review.changes import FileChange

ARCH = """static const std::map<llm_arch, const char *> LLM_ARCH_NAMES = {
    { LLM_ARCH_HYBRID,  "hybrid"  },
    { LLM_ARCH_DENSE,   "dense"   },
};
static const std::map<llm_kv, const char *> LLM_KV_NAMES = {
    { LLM_KV_GENERAL_NAME,            "general.name"                },
    { LLM_KV_FULL_ATTENTION_INTERVAL, "%s.full_attention_interval" },
};
"""
LOADER = """#include "models.h"

void llama_model_hybrid::load_arch_hparams(llama_model_loader & ml) {
    ml.get_key(LLM_KV_GENERAL_NAME, name, false);
    uint32_t interval = 4;
    ml.get_key(LLM_KV_FULL_ATTENTION_INTERVAL, interval, false);
    for (uint32_t i = 0; i < n_layer; ++i) {
        recurrent[i] = (i + 1) % interval != 0;
    }
}
"""
CONVERT = """package convert

func (m *hybridModel) KV() KV {
	kv := m.base()
	kv["general.architecture"] = "hybrid"
	if m.FullAttentionInterval > 0 {
		kv["full_attention_interval"] = m.FullAttentionInterval
	}
	return kv
}
"""
COMPAT = """void fix_hybrid(gguf_context * meta) {
    gguf_remove_key(meta, "hybrid.full_attention_interval");
}
"""


def _drafts(new: str, ollama: dict[str, str], path: str = "src/models/hybrid.cpp", old: str = LOADER):
    keys, archs = modelkeys.table_names(ARCH)
    change = FileChange.from_texts(path, old, new)
    return modelkeys.key_drafts(modelkeys.changed_reads(change, archs), keys, ollama)


def test_a_new_default_of_a_key_ollamas_converter_writes_only_under_a_condition_is_medium_at_the_condition():
    new = LOADER.replace("uint32_t interval = 4;", "uint32_t interval = 0;")
    (draft,) = _drafts(new, {"convert/hybrid.go": CONVERT})
    assert draft.severity == "medium" and draft.area == "models"
    assert draft.title == (
        "Model key `hybrid.full_attention_interval` has another default, and Ollama writes it only under a condition"
    )
    assert "`4` before, `0` now" in draft.detail
    assert draft.local_refs == (LocalRef("convert/hybrid.go", 6), LocalRef("convert/hybrid.go", 7))
    assert draft.line == 6  # the read, at the new ref


def test_a_key_now_required_that_ollamas_compatibility_code_removes_is_medium_at_the_removal():
    new = LOADER.replace("interval, false);", "interval, true);")
    (draft,) = _drafts(new, {"llama/fix.cpp": COMPAT})
    assert "is now required, and Ollama removes it" in draft.title
    assert draft.local_refs == (LocalRef("llama/fix.cpp", 2),)


def test_a_key_ollama_always_writes_or_writes_for_another_architecture_says_nothing():
    new = LOADER.replace("uint32_t interval = 4;", "uint32_t interval = 0;")
    always = CONVERT.replace("\tif m.FullAttentionInterval > 0 {\n\t", "\t").replace(
        "\t}\n\treturn", "\treturn"
    )
    assert 'kv["full_attention_interval"]' in always and "if m." not in always
    assert _drafts(new, {"convert/hybrid.go": always}) == []
    other = CONVERT.replace('"hybrid"', '"dense"')  # a converter of another architecture
    assert _drafts(new, {"convert/dense.go": other}) == []
    assert _drafts(new, {"convert/hybrid_test.go": CONVERT}) == []  # a test is not what Ollama ships


def test_a_read_whose_default_and_requirement_stay_says_nothing():
    extra = LOADER.replace(
        "    for (uint32_t i",
        "    if (interval == 0) {\n        interval = n_layer;\n    }\n    for (uint32_t i",
    )
    assert _drafts(extra, {"convert/hybrid.go": CONVERT, "llama/fix.cpp": COMPAT}) == []


def test_the_architecture_of_a_read_is_the_case_above_it_in_a_shared_loader():
    shared = LOADER.replace("void llama_model_hybrid::load_arch_hparams", "void load_hparams").replace(
        "    ml.get_key(LLM_KV_GENERAL_NAME",
        "    switch (arch) {\n    case LLM_ARCH_HYBRID:\n    ml.get_key(LLM_KV_GENERAL_NAME",
    )
    new = shared.replace("uint32_t interval = 4;", "uint32_t interval = 0;")
    (draft,) = _drafts(new, {"convert/hybrid.go": CONVERT}, "src/llama-model.cpp", shared)
    assert "`hybrid.full_attention_interval`" in draft.title
    dense = shared.replace("case LLM_ARCH_HYBRID:", "case LLM_ARCH_DENSE:")
    assert (
        _drafts(dense.replace("= 4;", "= 0;"), {"convert/hybrid.go": CONVERT}, "src/llama-model.cpp", dense)
        == []
    )
