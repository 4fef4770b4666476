"""Architectures upstream adds or drops, and native support for an architecture a model patch adds."""

from bot.patchfile import parse
from bot.review.archs import arch_drafts, architectures, patch_architectures
from bot.review.source import code_text
from tests.gitutil import make_patch

ARCH = """static const std::map<llm_arch, const char *> LLM_ARCH_NAMES = {
    { LLM_ARCH_LLAMA,            "llama"            },
    { LLM_ARCH_QWEN3,            "qwen3"            },
    // { LLM_ARCH_OLD,           "old"              },
    { LLM_ARCH_UNKNOWN,          "(unknown)"        },
};
"""
WITH_LAGUNA = ARCH.replace("    { LLM_ARCH_UNKNOWN", '    { LLM_ARCH_LAGUNA,           "laguna"           },\n    { LLM_ARCH_UNKNOWN')
PATCH = make_patch(ARCH, ARCH.replace("    { LLM_ARCH_UNKNOWN", '    { LLM_ARCH_LAGUNA, "laguna" },\n    { LLM_ARCH_UNKNOWN'),
                   "src/llama-arch.cpp")


def _archs(text):
    return architectures(code_text(text, "src/llama-arch.cpp"))


def test_architectures_table_ignores_comments():
    assert {a.enum: (a.name, a.line) for a in _archs(ARCH).values()} == {
        "LLM_ARCH_LLAMA": ("llama", 2), "LLM_ARCH_QWEN3": ("qwen3", 3), "LLM_ARCH_UNKNOWN": ("(unknown)", 5)}


def test_patch_architectures_points_at_the_adding_line_of_the_patch():
    ((arch, ref),) = patch_architectures([("llama/compat/0001-laguna.patch", parse(PATCH))])
    assert (arch.enum, arch.name) == ("LLM_ARCH_LAGUNA", "laguna")
    assert PATCH.splitlines()[ref.line - 1].startswith(b"+    { LLM_ARCH_LAGUNA")


def test_native_support_for_a_patched_architecture_is_high():
    patched = patch_architectures([("llama/compat/0001-laguna.patch", parse(PATCH))])
    (draft,) = arch_drafts(_archs(ARCH), _archs(WITH_LAGUNA), patched, lambda n: n)
    assert (draft.area, draft.severity) == ("models", "high")
    assert draft.title == "Upstream now supports architecture `laguna` natively"
    assert "may need removal or rebase" in draft.detail and draft.line == 5
    assert draft.local_refs == tuple(ref for _, ref in patched)


def test_new_architecture_without_a_patch_is_info_and_removed_one_is_medium():
    (draft,) = arch_drafts(_archs(ARCH), _archs(WITH_LAGUNA), [], lambda n: n)
    assert (draft.severity, draft.title) == ("info", "New architecture `laguna`")
    (draft,) = arch_drafts(_archs(ARCH), _archs(ARCH.replace('    { LLM_ARCH_QWEN3,            "qwen3"            },\n', "")),
                           [], lambda n: 3)
    assert (draft.severity, draft.title, draft.removed) == ("medium", "Architecture `qwen3` was removed",
                                                            ("src/llama-arch.cpp", '"qwen3"'))


def test_renamed_enum_for_the_same_architecture_is_no_finding():
    assert arch_drafts(_archs(ARCH), _archs(ARCH.replace("LLM_ARCH_QWEN3,", "LLM_ARCH_QWEN_3,")), [], lambda n: n) == []
