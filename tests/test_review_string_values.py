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
