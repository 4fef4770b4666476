"""Lines Ollama matches, printed once per item of a collection the bump fills under other conditions or now
sorts."""

from __future__ import annotations

from functools import partial

import pytest

from bot.cache import facts
from bot.model import LocalRef
from bot.review import printguards
from bot.review.changes import FileChange
from bot.review.consumers.contracts import contract_inventory
from bot.review.logformats import Program, printed_patterns
from bot.review.printguards import guard_drafts
from bot.review.source import code_text
from tests.test_review_logformats import OLLAMA

FILTERED = """static void list_devices() {
    std::vector<ggml_backend_dev_t> devices;
    for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
        auto * dev = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
            devices.push_back(dev);
        }
    }
    printf("Available devices:\\n");
    for (auto * dev : devices) {
        printf("  %s: %s (%zu MiB, %zu MiB free)\\n", dev_name(dev), dev_description(dev), total / MiB, free / MiB);
    }
}
"""
GUARD = """        if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
            devices.push_back(dev);
        }
"""
UNFILTERED = FILTERED.replace(GUARD, "        devices.push_back(dev);\n")


def _drafts(old: str, new: str, ollama: dict[str, str] = OLLAMA):
    change = FileChange.from_texts("common/arg.cpp", old, new)
    local = {p: code_text(text, p) for p, text in ollama.items()}
    inventory = contract_inventory(local)
    program = Program(
        lambda p: None, partial(printed_patterns, inventory.output_patterns), lambda n: iter(())
    )
    return guard_drafts([change], program, lambda: inventory.launch, lambda path: None, local)


def test_a_device_list_filled_without_its_filter_is_medium_at_ollamas_pattern_and_start():
    (draft,) = _drafts(FILTERED, UNFILTERED)
    printed = next(n for n, line in enumerate(UNFILTERED.split("\n"), 1) if "MiB free" in line)
    assert (draft.severity, draft.path, draft.line) == ("medium", "common/arg.cpp", printed)
    assert (
        draft.title
        == "What llama-server lists changed: `list_devices` fills `devices` under other conditions"
    )
    assert "before `ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU`, now `always`" in draft.detail
    assert "once per item of `devices`" in draft.detail and "MiB free" in draft.detail
    discover = OLLAMA["llm/discover.go"].split("\n")
    pattern_line = next(n for n, line in enumerate(discover, 1) if "MiB\\s+free" in line)
    started = next(n for n, line in enumerate(discover, 1) if "exec.Command" in line)
    assert LocalRef("llm/discover.go", pattern_line) in draft.local_refs
    assert LocalRef("llm/discover.go", started) in draft.local_refs  # where `--verbose` starts it
    # the other way: a filter added to what was listed whole
    (added,) = _drafts(UNFILTERED, FILTERED)
    assert "before `always`, now `ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU`" in added.detail


def test_a_changed_condition_with_its_addition_is_found_and_a_reformatted_one_is_quiet():
    gpu_only = FILTERED.replace(
        GUARD,
        GUARD.replace("!= GGML_BACKEND_DEVICE_TYPE_CPU", "== GGML_BACKEND_DEVICE_TYPE_GPU").replace(
            "devices.push_back(dev);", "devices.emplace_back(dev);"
        ),
    )
    (draft,) = _drafts(FILTERED, gpu_only)
    assert "now `ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_GPU`" in draft.detail
    respaced = FILTERED.replace(
        GUARD,
        GUARD.replace("(dev) != GGML", "(dev)  !=  GGML").replace(
            "devices.push_back(dev);", "devices.push_back( dev );"
        ),
    )
    assert _drafts(FILTERED, respaced) == []


def test_a_filter_whose_condition_alone_changed_is_found():
    gpu_only = FILTERED.replace(
        GUARD, GUARD.replace("!= GGML_BACKEND_DEVICE_TYPE_CPU", "== GGML_BACKEND_DEVICE_TYPE_GPU")
    )
    (draft,) = _drafts(FILTERED, gpu_only)
    assert "now `ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_GPU`" in draft.detail


SORT = """    std::stable_sort(devices.begin(), devices.end(), [](ggml_backend_dev_t a, ggml_backend_dev_t b) {
        return ggml_backend_dev_type(a) < ggml_backend_dev_type(b);
    });
    printf("Available devices:\\n");"""
SORTED = FILTERED.replace('    printf("Available devices:\\n");', SORT)
NUMBERING = OLLAMA["llm/discover.go"].replace(
    """func read(dev *Device, line string) {
	if m := deviceLine.FindStringSubmatch(line); m != nil {
		dev.Name, dev.Free = m[1], m[4]
	}""",
    """func read(dev *Device, line string) {
	index := 0
	if m := deviceLine.FindStringSubmatch(line); m != nil {
		dev.Name, dev.Free = m[1], m[4]
		dev.CC = strings.Repeat("x", index)
		index++
	}""",
)


def test_a_list_now_sorted_is_medium_where_ollama_numbers_the_lines_it_matches():
    (draft,) = _drafts(FILTERED, SORTED, {**OLLAMA, "llm/discover.go": NUMBERING})
    assert draft.severity == "medium"
    assert draft.title == "What llama-server lists comes in another order: `list_devices` now sorts `devices`"
    assert "`std::stable_sort(devices.begin(), devices.end()," in draft.detail
    lines = NUMBERING.split("\n")
    counter = next(n for n, line in enumerate(lines, 1) if "index := 0" in line)
    read = next(n for n, line in enumerate(lines, 1) if 'Repeat("x", index)' in line)
    assert draft.local_refs[:2] == (LocalRef("llm/discover.go", counter), LocalRef("llm/discover.go", read))


def test_a_list_now_sorted_is_information_where_ollama_does_not_number_its_lines_and_quiet_when_it_was():
    (draft,) = _drafts(FILTERED, SORTED)
    assert draft.severity == "info" and "numbers" not in draft.detail
    resorted = SORTED.replace("std::stable_sort", "std::sort")
    assert _drafts(SORTED, resorted) == []


def test_no_finding_where_the_loop_prints_nothing_ollama_matches_or_loops_over_another_collection():
    header_only = FILTERED.replace('printf("  %s: %s (%zu MiB, %zu MiB free)\\n"', 'printf("  %s\\n"')
    assert _drafts(header_only, header_only.replace(GUARD, "        devices.push_back(dev);\n")) == []
    other_collection = FILTERED.replace("for (auto * dev : devices)", "for (auto * dev : all_devices)")
    assert (
        _drafts(other_collection, other_collection.replace(GUARD, "        devices.push_back(dev);\n")) == []
    )


def test_a_re_check_finds_what_a_changes_loops_print_in_the_facts_store(tmp_path, monkeypatch):
    with facts.using(facts.FactStore(tmp_path / "facts")):
        first = _drafts(FILTERED, UNFILTERED)
        monkeypatch.setattr(printguards, "_refiltered", lambda *a: pytest.fail("read again"))
        assert _drafts(FILTERED, UNFILTERED) == first
    assert len(first) == 1
