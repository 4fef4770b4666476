"""A string value changed in place (a definition's, an assignment's, a return's) that held text Ollama looks for
in a program's output (`output.string-values`): named at Ollama's comparison; quiet when the new value still
holds it, or when the pattern says too little."""

from __future__ import annotations

import pytest

from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

READER = b"""package discover

import (
	"bufio"
	"os/exec"
	"strings"
)

func Devices() (host, vulkan []string) {
	cmd := exec.Command("llama-server", "--list-devices")
	out, _ := cmd.StderrPipe()
	_ = cmd.Start()
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasSuffix(line, "_Host") {
			host = append(host, line)
		}
		if strings.Contains(strings.ToLower(line), "vulkan") {
			vulkan = append(vulkan, line)
		}
	}
	return host, vulkan
}
"""
NAMES = """#define DEV_NAME "Vulkan"

static const char * buffer_name(int i) {
    (void) i;
    return DEV_NAME "_Host";
}

const char * default_name = "Vulkan0";
"""


def _review_of(tmp_path, names: str):
    b = _history(
        tmp_path,
        [("device names (#1)", {"src/llama-names.cpp": names})],
        base={**UPSTREAM, "src/llama-names.cpp": NAMES},
    )
    findings, _ = _review(b, ollama={**OLLAMA, "discover/devices.go": READER})
    return [f for f in findings if f.check == "output.string-values"]


def test_a_defined_name_that_no_longer_holds_a_looked_for_text_is_medium_at_the_comparison(tmp_path):
    (item,) = _review_of(tmp_path, NAMES.replace('"Vulkan"', '"VK"'))
    assert (item.severity, item.upstream_path, item.upstream_line) == ("medium", "src/llama-names.cpp", 1)
    assert "`DEV_NAME`" in item.title and "`vulkan`" in item.title
    assert "`Vulkan`" in item.detail and "`VK`" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [("discover/devices.go", 19)]


def test_a_returned_value_that_loses_a_looked_for_suffix_is_told(tmp_path):
    (item,) = _review_of(tmp_path, NAMES.replace('"_Host"', '"_Pinned"'))
    assert "`_Host`" in item.title and item.upstream_line == 5


@pytest.mark.parametrize(
    "names",
    [
        NAMES.replace('"Vulkan"', '"VULKAN"'),  # a substring is looked for whatever its case
        NAMES.replace('"_Host"', '"_Host"; // pinned'),  # the same value
        NAMES.replace('"Vulkan0"', '"Vulkan1"'),  # still holds it
        NAMES.replace(
            '#define DEV_NAME "Vulkan"', '#define DEV_NAME "Vulkan"\n#define OTHER "VK"'
        ),  # new name
    ],
)
def test_a_value_that_still_holds_it_or_a_new_one_is_quiet(tmp_path, names):
    assert _review_of(tmp_path, names) == []


ARCHS_READER = b"""package discover

import (
	"bufio"
	"os/exec"
	"regexp"
)

var archsLine = regexp.MustCompile(`CUDA\\s*:\\s*ARCHS\\s*=\\s*([\\d,]+)`)

func Archs() (archs string) {
	cmd := exec.Command("llama-server", "--list-devices")
	out, _ := cmd.StderrPipe()
	_ = cmd.Start()
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		if m := archsLine.FindStringSubmatch(scanner.Text()); m != nil {
			archs = m[1]
		}
	}
	return archs
}
"""
FEATURES = """static std::vector<feature> get_features() {
    std::vector<feature> features;
    features.push_back({ "ARCHS", STRINGIFY(ARCH_LIST) });
    features.push_back({ "FORCE_MMQ", "1" });
    return features;
}
"""


def _pairs(tmp_path, features: str):
    base = {**UPSTREAM, "src/llama-features.cpp": FEATURES}
    b = _history(tmp_path, [("cuda: features (#1)", {"src/llama-features.cpp": features})], base=base)
    findings, _ = _review(b, ollama={**OLLAMA, "discover/archs.go": ARCHS_READER})
    return [f for f in findings if f.check == "output.string-values"]


def test_a_keyed_value_ollama_parses_computed_otherwise_is_medium_at_its_expression(tmp_path):
    (item,) = _pairs(tmp_path, FEATURES.replace("STRINGIFY(ARCH_LIST)", "archs.c_str()"))
    assert (item.severity, item.upstream_line) == ("medium", 3)
    assert (
        "`ARCHS`" in item.title
        and "`STRINGIFY(ARCH_LIST)`" in item.detail
        and "`archs.c_str()`" in item.detail
    )
    assert ("discover/archs.go", 9) in [(r.path, r.line) for r in item.local_refs]


@pytest.mark.parametrize(
    "features",
    [
        FEATURES.replace(
            '{ "FORCE_MMQ", "1" }', '{ "FORCE_MMQ", "0" }'
        ),  # a key no pattern of Ollama's reads
        FEATURES.replace(
            '{ "ARCHS", STRINGIFY(ARCH_LIST) }', '{ "ARCHS",   STRINGIFY(ARCH_LIST)  }'
        ),  # spacing
        FEATURES.replace('features.push_back({ "ARCHS"', 'features.emplace_back(feature{ "ARCHS"'),
    ],
)
def test_a_key_no_pattern_reads_or_the_same_expression_is_quiet(tmp_path, features):
    assert _pairs(tmp_path, features) == []


def _review_with_reader(tmp_path, names: str, reader: bytes):
    b = _history(
        tmp_path,
        [("device names (#1)", {"src/llama-names.cpp": names})],
        base={**UPSTREAM, "src/llama-names.cpp": NAMES},
    )
    findings, _ = _review(b, ollama={**OLLAMA, "discover/devices.go": reader})
    return [f for f in findings if f.check == "output.string-values"]


def test_a_value_that_now_holds_another_text_ollama_accepts_on_the_same_line_is_quiet(tmp_path):
    """`Contains(s, "vulkan") || Contains(s, "vk")`: the new value holds the other; with `&&` both are needed."""
    either = READER.replace(
        b'strings.Contains(strings.ToLower(line), "vulkan")',
        b'strings.Contains(strings.ToLower(line), "vulkan") || strings.Contains(strings.ToLower(line), "vk")',
    )
    renamed = NAMES.replace('"Vulkan"', '"VK"')
    assert _review_with_reader(tmp_path / "either", renamed, either) == []
    both = either.replace(b"|| strings.Contains", b"&& strings.Contains")
    (item,) = _review_with_reader(tmp_path / "both", renamed, both)
    assert "`vulkan`" in item.title
