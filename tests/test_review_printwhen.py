"""Lines Ollama matches printed at another verbosity, under other conditions, or through a logger whose sink
changed; environment variables whose value upstream now uses otherwise; error texts Ollama finds in an answer."""

from __future__ import annotations

from bot.model import LocalRef
from bot.review import flags
from bot.review.changes import FileChange
from bot.review.consumers.contracts import contract_inventory
from bot.review.logformats import Program, printed_patterns
from bot.review.logsink import Sink, sink_drafts
from bot.review.printwhen import Upstream, call_level, logger_levels, logger_streams, when_drafts
from bot.review.source import code_text
from tests.test_review_logformats import DISCOVER_GO, OLLAMA

LOG_H = """#define LOG_LEVEL_DEBUG 5
#define LOG_LEVEL_TRACE 4
#define LOG_TMPL(level, verbosity, ...) do { if ((verbosity) <= thold()) log(level, __VA_ARGS__); } while (0)
#define LOG_TRC(...) LOG_TMPL(GGML_LOG_LEVEL_INFO, LOG_LEVEL_TRACE, __VA_ARGS__)
#define LOG_DBG(...) LOG_TMPL(GGML_LOG_LEVEL_DEBUG, LOG_LEVEL_DEBUG, __VA_ARGS__)
"""
ARG = """void add_options() {
    add_opt(common_arg(
        {"-v", "--verbose"},
        "log everything",
        [](common_params & params) {
            params.verbosity = INT_MAX;
        }
    ));
    add_opt(common_arg(
        {"-lv", "--log-verbosity"}, "N",
        "the verbosity threshold",
        [](common_params & params, int value) {
            params.verbosity = value;
        }
    ));
}
"""
FIT = """#include "log.h"

static void fit_params(int nd) {
    for (int id = 0; id < nd; id++) {
        LOG_TRC(
            "%s:   - %s: %2" PRIu32 " layers (%2" PRIu32 " overflowing), %6" PRId64 " MiB used\\n",
            __func__, names[id].c_str(), n_layer[id], n_part[id], mem[id]/MiB);
    }
}
"""
INFO = """#include "log.h"

std::string common_params_get_system_info(const common_params & params) {
    std::ostringstream os;
    os << "system_info: n_threads = " << params.n_threads;
    return os.str();
}

void print_info(const common_params & params, bool devices) {
    if (devices) {
        LOG_TRC("%s", "device_info:\\n");
    }
    LOG_TRC("%s\\n", common_params_get_system_info(params).c_str());
}
"""
AT_4 = DISCOVER_GO.replace('"--verbose"', '"--log-verbosity", "4"')
UPSTREAM = {"common/log.h": LOG_H, "common/arg.cpp": ARG}


def _inventory(ollama: dict[str, str]):
    return contract_inventory({p: code_text(t, p) for p, t in ollama.items()})


def _upstream(path: str, new: str) -> Upstream:
    """Upstream at the new ref: the changed file, the logging header, the argument table."""
    return Upstream({**UPSTREAM, path: new}.get, lambda: flags.flag_table(ARG))


def _when(path: str, old: str, new: str, discover: str = AT_4):
    inventory = _inventory({**OLLAMA, "llm/discover.go": discover})
    program = Program(lambda p: None, lambda: printed_patterns(inventory.output_patterns), lambda n: iter(()))
    change = FileChange.from_texts(path, old, new)
    return when_drafts([change], program, lambda: inventory.launch, _upstream(path, new))


def _line(text: str, needle: str, path: str = "llm/discover.go") -> LocalRef:
    return LocalRef(path, next(n for n, line in enumerate(text.split("\n"), 1) if needle in line))


def test_a_line_now_logged_above_the_verbosity_ollama_passes_is_medium_at_the_pattern_and_flag():
    (draft,) = _when("common/fit.cpp", FIT, FIT.replace("LOG_TRC(", "LOG_DBG("))
    assert draft.severity == "medium" and "printed at another verbosity" in draft.title
    assert "`LOG_DBG` (verbosity 5) instead of `LOG_TRC` (verbosity 4)" in draft.detail
    assert _line(AT_4, "fitLine   =") in draft.local_refs
    assert _line(AT_4, '"--log-verbosity"') in draft.local_refs
    # started with --verbose (everything is printed), or at the same level: nothing
    assert _when("common/fit.cpp", FIT, FIT.replace("LOG_TRC(", "LOG_DBG("), DISCOVER_GO) == []
    assert _when("common/fit.cpp", FIT, FIT.replace("MiB used", "MiB used ")) == []


def test_a_line_built_by_a_helper_and_printed_under_a_new_condition_is_medium():
    moved = INFO.replace(
        """    }
    LOG_TRC("%s\\n", common_params_get_system_info(params).c_str());
""",
        """        LOG_TRC("%s\\n", common_params_get_system_info(params).c_str());
    }
""",
    )
    (draft,) = _when("common/common.cpp", INFO, moved)
    assert "emitted under other conditions" in draft.title and "`system_info:`" in draft.title
    assert "before `always`, now `devices`" in draft.detail
    assert draft.local_refs[0] == _line(AT_4, '"system_info:"')
    # the other print of the function changed, the line Ollama matches did not
    assert _when("common/common.cpp", INFO, INFO.replace("device_info:", "devices:")) == []
    # a new `else if` before the print, or a test it was already under refined (an error's): nothing
    sibling = moved.replace(
        "    if (devices) {", "    if (params.n_threads == 0) {\n        return;\n    } else if (devices) {"
    )
    assert _when("common/common.cpp", moved, sibling) == []
    guarded = moved.replace("if (devices) {", "if (devices && params.n_threads > 0) {")
    assert _when("common/common.cpp", moved, guarded) == []


LOGGER = """void common_log_entry::print(FILE * file) const {
    FILE * fcur = file;
    if (!fcur) {
        fcur = stdout;
        if (level != GGML_LOG_LEVEL_NONE) {
            fcur = stderr;
        }
    }
    fprintf(fcur, "%s", msg.data());
}

static int common_get_verbosity(enum ggml_log_level level) {
    switch (level) {
        case GGML_LOG_LEVEL_DEBUG: return LOG_LEVEL_DEBUG;
        case GGML_LOG_LEVEL_INFO:  return LOG_LEVEL_TRACE;
        default:                   return 0;
    }
}
"""


def _sink(new: str, discover: str = AT_4):
    inventory = _inventory({**OLLAMA, "llm/discover.go": discover})
    sink = Sink(lambda p: None, lambda: inventory.output_patterns, lambda: inventory.launch)
    change = FileChange.from_texts("common/log.cpp", '#include "log.h"\n' + LOGGER, new)
    return sink_drafts([change], sink, _upstream("common/log.cpp", new))


def test_a_logger_writing_a_level_to_the_other_stream_is_medium_at_the_patterns_of_one_stream():
    moved = '#include "log.h"\n' + LOGGER.replace(
        "level != GGML_LOG_LEVEL_NONE", "level == GGML_LOG_LEVEL_ERROR"
    )
    (draft,) = _sink(moved)
    assert draft.severity == "medium" and "stdout and stderr" in draft.title
    assert _line(AT_4, "ccLine    =") in draft.local_refs  # Ollama's patterns, read from stderr alone
    assert "stderr alone" in draft.detail


def test_a_library_level_mapped_above_the_verbosity_ollama_passes_is_medium_at_the_flag():
    mapped = '#include "log.h"\n' + LOGGER.replace("return LOG_LEVEL_TRACE;", "return LOG_LEVEL_DEBUG;")
    (draft,) = _sink(mapped)
    assert "`GGML_LOG_LEVEL_INFO`" in draft.title and "`LOG_LEVEL_DEBUG`" in draft.title
    assert draft.local_refs == (_line(AT_4, '"--log-verbosity"'),)
    assert _sink(mapped, DISCOVER_GO) == []  # --verbose prints everything
    harmless = '#include "log.h"\n' + LOGGER.replace(
        'fprintf(fcur, "%s"', 'fputs(msg.data(), fcur); (void)"%s"'
    )
    assert _sink(harmless) == []


LIB_H = (
    "#define LIB_LOG_INFO(...)  lib_log(GGML_LOG_LEVEL_INFO, __VA_ARGS__)\n"
    "#define LIB_LOG_DEBUG(...) lib_log(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)\n"
)
LOGGER_CPP = """#include "log.h"

static int verbosity_of(enum ggml_log_level level) {
    switch (level) {
        case GGML_LOG_LEVEL_DEBUG: return LOG_LEVEL_DEBUG;
        case GGML_LOG_LEVEL_INFO:  return LOG_LEVEL_TRACE;
        default:                   return LOG_LEVEL_TRACE;
    }
}
"""


def test_a_library_line_now_logged_at_a_level_the_logger_maps_above_ollamas_verbosity_is_medium():
    """`LIB_LOG_INFO` -> `LIB_LOG_DEBUG`: the library's levels are an enum, which the program's logger (beside
    the `log.h` the argument table includes) maps to its verbosity: TRACE (4) before, DEBUG (5) now."""
    lib_fit = FIT.replace('#include "log.h"', '#include "lib-impl.h"').replace("LOG_TRC(", "LIB_LOG_INFO(")
    new = lib_fit.replace("LIB_LOG_INFO(", "LIB_LOG_DEBUG(")
    texts = {
        **UPSTREAM,
        "common/arg.cpp": '#include "log.h"\n' + ARG,
        "common/log.cpp": LOGGER_CPP,
        "src/lib-impl.h": LIB_H,
        "src/fit.cpp": new,
    }
    inventory = _inventory({**OLLAMA, "llm/discover.go": AT_4})
    program = Program(lambda p: None, lambda: printed_patterns(inventory.output_patterns), lambda n: iter(()))

    def drafts(levels):
        upstream = Upstream(texts.get, lambda: flags.flag_table(ARG), levels)
        change = FileChange.from_texts("src/fit.cpp", lib_fit, new)
        return when_drafts([change], program, lambda: inventory.launch, upstream)

    (draft,) = drafts(lambda: logger_levels(texts.get, "common/arg.cpp"))
    assert "`LIB_LOG_DEBUG` (verbosity 5) instead of `LIB_LOG_INFO` (verbosity 4)" in draft.detail
    assert drafts(dict) == []  # without the logger's mapping the levels are not known


def _logged(path: str, old: str, new: str, header: str, logger: str = LOGGER, discover: str = AT_4) -> list:
    """The drafts for one changed file printing through the logger beside `log.h` (its header `header`, its
    source `logger`) that the argument table includes, against Ollama's discovery code `discover`."""
    texts = {
        **UPSTREAM,
        "common/log.h": header,
        "common/arg.cpp": '#include "log.h"\n' + ARG,
        "common/log.cpp": '#include "log.h"\n' + logger,
        path: new,
    }
    upstream = Upstream(
        texts.get,
        lambda: flags.flag_table(ARG),
        lambda: logger_levels(texts.get, "common/arg.cpp"),
        lambda: logger_streams(texts.get, "common/arg.cpp"),
    )
    inventory = _inventory({**OLLAMA, "llm/discover.go": discover})
    program = Program(lambda p: None, lambda: printed_patterns(inventory.output_patterns), lambda n: iter(()))
    return when_drafts([FileChange.from_texts(path, old, new)], program, lambda: inventory.launch, upstream)


def test_a_line_now_logged_at_a_level_the_logger_writes_to_the_other_stream_is_medium():
    """`LOG_TRC` -> `LOG`: the logger beside `log.h` writes `GGML_LOG_LEVEL_NONE` to stdout and the other
    levels to stderr, and Ollama reads `system_info:` from stderr alone. A call of another level on the same
    stream, or a logger that picks no stream by level, says nothing."""
    header = (
        LOG_H
        + "#define LOG_LEVEL_OUTPUT 0\n#define LOG(...) LOG_TMPL(GGML_LOG_LEVEL_NONE, LOG_LEVEL_OUTPUT, __VA_ARGS__)\n"
    )

    def drafts(new: str, logger: str = LOGGER):
        return _logged("common/common.cpp", INFO, new, header, logger)

    to_stdout = INFO.replace('LOG_TRC("%s\\n", common_params', 'LOG("%s\\n", common_params')
    (draft,) = drafts(to_stdout)
    assert draft.severity == "medium" and "is now written to stdout" in draft.title
    assert "`system_info:`" in draft.title and "instead of `LOG_TRC` (stderr)" in draft.detail
    assert draft.local_refs[0] == _line(AT_4, '"system_info:"')
    to_debug = INFO.replace('LOG_TRC("%s\\n", common_params', 'LOG_DBG("%s\\n", common_params')
    assert (
        to_debug != INFO and [d.title for d in drafts(to_debug) if "stdout" in d.title] == []
    )  # stderr still
    unpicked = LOGGER.replace(
        "        if (level != GGML_LOG_LEVEL_NONE) {\n            fcur = stderr;\n        }\n", ""
    )
    assert drafts(to_stdout, unpicked) == []


DEVICES = """#include "log.h"

void print_devices(const std::vector<dev> & devices) {
    printf("Available devices:\\n");
    for (auto & d : devices) {
        printf("  %s: %s (%zu MiB, %zu MiB free)\\n", d.name, d.desc, d.total, d.free);
    }
}
"""
PREFIXED_LOGGER = LOGGER.replace(
    '    fprintf(fcur, "%s", msg.data());',
    """    if (level != GGML_LOG_LEVEL_NONE && level != GGML_LOG_LEVEL_CONT && prefix) {
        switch (level) {
            case GGML_LOG_LEVEL_INFO: fprintf(fcur, "I "); break;
            default: break;
        }
    }
    fprintf(fcur, "%s", msg.data());""",
)


def test_a_line_a_pattern_reads_from_its_start_now_logged_at_a_level_the_logger_prefixes_is_medium():
    """`printf` -> `LOG_INF`: the logger puts `I ` before every level but `NONE` and `CONT` when its prefix is
    on, and Ollama's device pattern starts with `^`. `LOG` (level `NONE`) writes the line as it was, a pattern
    that matches anywhere in the line is served either way, and a logger that prefixes nothing says nothing."""
    header = (
        LOG_H
        + "#define LOG_INF(...) LOG_TMPL(GGML_LOG_LEVEL_INFO, 0, __VA_ARGS__)\n"
        + "#define LOG(...) LOG_TMPL(GGML_LOG_LEVEL_NONE, 0, __VA_ARGS__)\n"
    )

    def drafts(new: str, logger: str = PREFIXED_LOGGER, discover: str = AT_4):
        return _logged("common/devices.cpp", DEVICES, new, header, logger, discover)

    logged = DEVICES.replace("printf(", "LOG_INF(")
    (draft,) = [d for d in drafts(logged) if "prefix" in d.title]
    assert draft.severity == "medium" and "`^\\s+(.+?)" in draft.title
    assert "now printed with `LOG_INF` instead of `printf`" in draft.detail
    assert draft.local_refs[0] == _line(AT_4, "`^\\s+(.+?):")
    assert [d for d in drafts(DEVICES.replace("printf(", "LOG(")) if "prefix" in d.title] == []
    assert [d for d in drafts(logged, LOGGER) if "prefix" in d.title] == []
    unanchored = AT_4.replace("`^\\s+(.+?):", "`\\s+(.+?):")
    assert unanchored != AT_4
    assert [d for d in drafts(logged, discover=unanchored) if "prefix" in d.title] == []


def test_a_header_included_from_another_directory_is_found_in_the_include_dirs():
    """`tools/server/server-common.h` includes `log.h`, which lives beside the argument table (`common/`):
    the call's verbosity is read through it only when that directory is searched."""
    texts = {
        "common/log.h": LOG_H,
        "tools/server/server-common.h": '#include "log.h"\n#define SRV_TRC(fmt, ...) LOG_TRC("srv " fmt, __VA_ARGS__)\n',
        "tools/server/server.cpp": '#include "server-common.h"\n',
    }
    read = lambda path: texts.get(path, "")  # a path the tree lacks reads as nothing
    assert call_level("SRV_TRC", "tools/server/server.cpp", read) is None
    assert call_level("SRV_TRC", "tools/server/server.cpp", read, include_dirs=("common",)) == 4
