"""CMake variables Ollama's build sets that a CMake file of its build stops reading, end to end."""

import pytest

from bot.model import LocalRef
from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

BACKEND = """if (GGML_CUDA_NO_PEER_COPY)
    add_compile_definitions(GGML_CUDA_NO_PEER_COPY)
endif()
add_library(ggml-cuda cuda.cu)
"""
OLLAMA_CMAKE = b"set(GGML_CUDA ON)\nset(LLAMA_CURL OFF)\nset(GGML_CUDA_NO_PEER_COPY ON)\ninstall(TARGETS llama-server RUNTIME DESTINATION bin)\n"


def _reads(tmp_path, files: dict[str, str]):
    """The items of a bump of two backends' CMake: CUDA's, which Ollama builds (it sets GGML_CUDA), and
    SYCL's, which it does not."""
    base = {
        **UPSTREAM,
        "ggml/src/ggml-cuda/CMakeLists.txt": BACKEND,
        "ggml/src/ggml-sycl/CMakeLists.txt": BACKEND,
    }
    b = _history(tmp_path, [("foo: build (#11)", files)], base=base)
    findings, _ = _review(b, ollama={**OLLAMA, "llama/server/CMakeLists.txt": OLLAMA_CMAKE}, patches=())
    return [f for f in findings if f.check == "build.variable-reads"]


DROPPED = BACKEND.split("endif()\n")[1]


def test_a_backend_that_stops_reading_a_variable_ollama_sets_is_medium(tmp_path):
    (item,) = _reads(tmp_path, {"ggml/src/ggml-cuda/CMakeLists.txt": DROPPED})
    assert (item.severity, item.title) == (
        "medium",
        "`ggml/src/ggml-cuda/CMakeLists.txt` no longer reads `GGML_CUDA_NO_PEER_COPY`, which Ollama's build sets",
    )
    assert item.local_refs == [LocalRef("llama/server/CMakeLists.txt", 3)]


@pytest.mark.parametrize(
    "files",
    [
        {  # the read moved to a helper file the backend includes
            "ggml/src/ggml-cuda/CMakeLists.txt": "include(cuda.cmake)\n" + DROPPED,
            "ggml/src/ggml-cuda/cuda.cmake": BACKEND.split("add_library")[0],
        },
        {
            "ggml/src/ggml-cuda/CMakeLists.txt": BACKEND.replace(
                "if (GGML_CUDA_NO_PEER_COPY)", "if (${GGML_CUDA_NO_PEER_COPY})"
            )
        },
        {"ggml/src/ggml-sycl/CMakeLists.txt": DROPPED},  # a backend Ollama never builds
    ],
    ids=["the-read-moved", "read-another-way", "not-built"],
)
def test_a_read_that_moved_or_a_file_ollama_never_builds_is_quiet(tmp_path, files):
    assert _reads(tmp_path, files) == []


def test_an_upstream_path_with_backticks_stays_one_code_span():
    from bot.review.changes import FileChange
    from bot.review.cmakereads import dropped_read_drafts

    path = "ggml/src/ggml-`x`/CMakeLists.txt"
    change = FileChange.from_texts(path, BACKEND, DROPPED)
    (draft,) = dropped_read_drafts(
        [change], {"GGML_CUDA_NO_PEER_COPY": [LocalRef("CMakeLists.txt", 3)]}, lambda p: True
    )
    assert draft.title.startswith("``ggml/src/ggml-`x`/CMakeLists.txt`` no longer reads")
