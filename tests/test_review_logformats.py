"""Log lines Ollama parses: its regexes and literals against upstream's printf-style format strings."""

from bot.model import LocalRef
from bot.review.logformats import (
    formats_on_lines,
    log_draft,
    log_formats,
    matched,
    ollama_patterns,
    produces,
    render,
    vanished,
)
from bot.review.source import code_text

GO = """package llm

var deviceRe = regexp.MustCompile(`using device (\\S+)\\s+\\(.*\\)\\s+-\\s+(\\d+)\\s+MiB free`)

func scan(line string) bool {
	if strings.Contains(line, "system_info:") || bytes.HasPrefix([]byte(line), []byte("main: ")) {
		return true
	}
	return strings.HasPrefix(line, "ok")
}
"""
LLAMA = """
    LLAMA_LOG_INFO("%s: using device %s (%s) - %zu MiB free\\n", __func__,
                   ggml_backend_dev_name(dev), ggml_backend_dev_description(dev), free / 1024 / 1024);
    LOG_INF("system_info: n_threads = %d / %d | %s\\n", n, total, info);
"""


def _patterns():
    return ollama_patterns({"llm/server.go": GO, "llm/server_test.go": 'strings.Contains(x, "ignored!")\n'})


def test_ollama_patterns_are_regexes_and_long_enough_literals():
    found = [(p.source, p.ref.line) for p in _patterns()]
    assert found == [
        (r"using device (\S+)\s+\(.*\)\s+-\s+(\d+)\s+MiB free", 3),
        ("system_info:", 6),
        ("main: ", 6),
    ]


def test_log_formats_render_with_sample_values():
    formats = log_formats(code_text(LLAMA, "src/llama.cpp"))
    assert [(f.text, f.line, f.last_line) for f in formats] == [
        ("%s: using device %s (%s) - %zu MiB free\n", 2, 3),
        ("system_info: n_threads = %d / %d | %s\n", 4, 4),
    ]
    assert (
        render("%s: using device %s (%s) - %zu MiB free\n")[0]
        == "CUDA0: using device CUDA0 (CUDA0) - 1024 MiB free"
    )
    device, info, _ = _patterns()
    assert produces(formats[0].text, device) and not produces(formats[1].text, device)
    assert produces(formats[1].text, info)


def test_a_format_whose_new_version_no_longer_matches_is_reported():
    device, info, _ = _patterns()
    old = log_formats(code_text(LLAMA, "src/llama.cpp"))
    pairs = matched([device, info], old)
    changed = ["%s: using device %s (%s) - free %zu MiB\n", "system_info: n_threads = %d / %d | %s\n"]
    ((pattern, fmt),) = vanished(pairs, changed)
    assert pattern is device and fmt.line == 2
    draft = log_draft(pattern, fmt, "src/llama.cpp", 2, ((2, 3),), ("src/llama.cpp", "x"), changed[0])
    assert (draft.area, draft.severity) == ("server", "high")
    assert draft.local_refs == (LocalRef("llm/server.go", 3),) and "free %zu MiB" in draft.detail


def test_no_report_while_some_new_format_still_matches():
    device, info, _ = _patterns()
    pairs = matched([device, info], log_formats(code_text(LLAMA, "src/llama.cpp")))
    still = ["%s: using device %s (%s) (%s) - %zu MiB free\n", "system_info: n_threads = %d | %s\n"]
    assert vanished(pairs, still) == []


def test_formats_on_lines_finds_calls_that_start_above_a_changed_line():
    lines = LLAMA.split("\n")
    (fmt,) = formats_on_lines(lines, [3], "src/llama.cpp")  # only the argument line changed
    assert fmt.line == 2 and "using device" in fmt.text
    assert formats_on_lines(lines, [3], "src/llama.cpp", [frozenset({"nothing like it"})]) == []
    assert formats_on_lines(lines, [1], "src/llama.cpp") == []
