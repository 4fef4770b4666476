"""What upstream's code prints, as line templates, and the sample lines Ollama's patterns are tested on."""

import re

from bot.review.cpieces import Slot
from bot.review.producers import MAX_CALL, SourceFile, function_above
from bot.review.samplelines import rendered_lines, samples, shape

FIT = """#define FIT_NAME "fit"
static void fit_params(int nd) {
    for (int id = 0; id < nd; id++) {
        LOG_TRC(
            "%s:   - %s: %2" PRIu32 " layers (%2" PRIu32 " overflowing), %6" PRId64 " MiB used\\n",
            __func__, names[id].c_str(), n_layer[id], n_part[id], mem[id]/MiB);
        GGML_LOG_ERROR(FIT_NAME " failed: %s (%.*s)\\n", why, n, text);
        fprintf(stderr, OTHER_NAME ": %c%%\\n", c);
    }
}
"""

STREAMS = """std::string system_info(const params & p) {
    std::ostringstream os;
    os << "system_info: n_threads = " << p.n_threads;
    if (p.n_batch != -1) {
        os << " (n_threads_batch = " << p.n_batch << ")";
    }
    return os.str();
}

const char * print_features(void) {
    static std::string s;
    s += reg_name(reg);
    s += " : ";
    s += std::string("x") + feature->name;
    return s.c_str();
}
"""

BRANCHES = """static void info(int id) {
#if defined(USE_HIP)
    LOG_INF("  Device %d: %s, %s (0x%x)\\n", id, prop.name, prop.arch, cc);
#elif defined(USE_MUSA)
    LOG_INF("  Device %d: %s, compute capability %d.%d\\n", id, prop.name, prop.major, prop.minor);
#else
    LOG_INF("  Device %d: %s, compute capability %d.%d\\n", id, prop.name, prop.major, prop.minor);
#endif
    features.push_back({ "ARCHS", STRINGIFY(ARCH_LIST) });
}
"""


def _templates(text: str, path: str = "x.cpp"):
    return SourceFile(text, path).templates()


def test_a_format_string_splices_pri_macros_defined_strings_and_the_functions_name():
    fit, error, other = _templates(FIT)
    assert fit.pieces[0] == "fit_params:   - "
    assert [p.kind for p in fit.pieces if isinstance(p, Slot)] == ["s", "d", "d", "d"]
    assert (fit.line, fit.last_line) == (4, 6)
    assert "fit_params:   - CUDA0: 1024 layers (1024 overflowing), 1024 MiB used" in rendered_lines(
        fit, re.compile("x")
    )
    assert error.pieces[:2] == ("fit failed: ", Slot("s", "why"))  # `%.*s` takes two arguments
    assert error.pieces[2:] == (" (", Slot("s", "text"), ")\n")
    assert other.pieces == (Slot("s", "OTHER_NAME"), ": ", Slot("c", "c"), "%\n")


def test_statements_on_one_stream_or_string_are_one_line_and_other_code_is_a_slot():
    info, features = _templates(STREAMS)
    assert (info.kind, info.line, info.last_line) == ("stream", 3, 5)
    assert info.pieces == (
        "system_info: n_threads = ",
        Slot("s", "p.n_threads"),
        " (n_threads_batch = ",
        Slot("s", "p.n_batch"),
        ")",
    )
    assert features.pieces == (
        Slot("s", "reg_name(reg)"),
        " : ",
        Slot("s", 'std::string("x")'),
        Slot("s", "feature->name"),
    )


def test_each_template_knows_its_preprocessor_branch_and_entries_are_name_value_pairs():
    hip, musa, cuda, entry = _templates(BRANCHES)
    assert hip.branch == ("#if defined(USE_HIP)",)
    assert musa.branch == ("#if defined(USE_HIP) / #elif defined(USE_MUSA)",)
    assert cuda.branch == ("#if defined(USE_HIP) / #elif defined(USE_MUSA) / #else",)
    assert (entry.kind, entry.pieces[0], entry.branch) == ("entry", "ARCHS", ())
    assert function_above(BRANCHES.split("\n"), 9) == "info"


def test_a_capture_groups_shortest_text_fills_a_conversion_that_can_print_it():
    hip = _templates(BRANCHES)[0]
    gfx = re.compile(r"Device\s+(\d+):.*,\s+(gfx[0-9a-f]+)[\s:(]")
    assert [s.line for s in samples(hip, gfx)] == ["  Device 1024: CUDA0, gfx0 (0x1f)"]
    uma = re.compile(r"uma:\s+([01])\s+\|")
    line = SourceFile('LOG("x | uma: %d | fp16: %s\\n", uma, fp16);', "x.c").templates()[0]
    assert sorted(s.signature for s in samples(line, uma)) == [
        ("0",),
        ("1",),
    ]  # a fixed group tells lines apart


def test_a_patterns_shape_names_what_it_reads_after_a_key_and_the_text_every_match_holds():
    archs = shape(re.compile(r"CUDA\s*:\s*ARCHS\s*=\s*([\d,]+)"))
    assert archs.keys == ("ARCHS",) and archs.needles == frozenset({"archs"})
    buffers = shape(re.compile(r"(\S+)\s+(model|KV)\s+buffer size\s*=\s*([\d.]+)"))
    assert buffers.fixed_groups == (2,) and {"model", "KV"} <= set(buffers.witnesses)
    assert buffers.keys == ("buffer size",)
    assert shape(re.compile(r"Device\s+(\d+):")).keys == ()  # no `=`/`:` between the word and the value


def test_the_templates_for_a_text_are_those_on_lines_holding_it_or_in_a_function_named_by_it():
    streams, fit = SourceFile(STREAMS, "x.cpp"), SourceFile(FIT, "x.cpp")
    assert [t.line for t in streams.templates_for({" : "})] == [12]
    assert [t.line for t in fit.templates_for({"fit_params:"})] == [4, 7, 8]  # `__func__` prints the name
    assert fit.templates_for({"nowhere"}) == []


def test_a_bracket_left_open_reads_a_bounded_stretch_of_code():
    unclosed = (
        'void f() {\n    LOG_INF("open %s", '
        + "x + " * 20_000
        + "\n" * 3
        + '    LOG_INF("next %d\\n", n);\n}\n'
    )
    first, after = SourceFile(unclosed, "x.cpp").templates()
    assert first.pieces[0] == "open " and len(first.pieces[1].expr) <= MAX_CALL
    assert after.pieces == ("next ", Slot("d", "n"), "\n")
