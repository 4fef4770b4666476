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


INSTALLING = """add_library(ggml-cuda cuda.cu)
if (GGML_CUDA_NO_PEER_COPY)
    install(TARGETS ggml-cuda LIBRARY)
endif()
"""
DOCKERFILE = (
    b"RUN cmake --build build \\\n    && cmake --install build \\\n        --component runner --strip\n"
)


def _install_reads(tmp_path, backend: str, dockerfile: bytes = DOCKERFILE, base: str = INSTALLING):
    """The variable-read items of a bump of the CUDA backend's install rules, against an Ollama whose
    Dockerfile runs its install (`DOCKERFILE`: the `runner` component alone)."""
    upstream = {**UPSTREAM, "ggml/src/ggml-cuda/CMakeLists.txt": base}
    b = _history(
        tmp_path,
        [("cuda: always install (#12)", {"ggml/src/ggml-cuda/CMakeLists.txt": backend})],
        base=upstream,
    )
    ollama = {**OLLAMA, "llama/server/CMakeLists.txt": OLLAMA_CMAKE, "Dockerfile": dockerfile}
    findings, _ = _review(b, ollama=ollama, patches=())
    return [f for f in findings if f.check == "build.variable-reads"]


LIFTED = "add_library(ggml-cuda cuda.cu)\ninstall(TARGETS ggml-cuda LIBRARY)\n"


def test_a_read_that_only_decided_install_rules_ollamas_install_never_runs_is_information(tmp_path):
    (item,) = _install_reads(tmp_path, LIFTED)
    assert item.severity == "info" and "`runner`" in item.detail


@pytest.mark.parametrize(
    ("backend", "dockerfile"),
    [
        (LIFTED, b"RUN cmake --install build --strip\n"),  # Ollama's install runs every rule
        (LIFTED.replace("LIBRARY)", "LIBRARY COMPONENT runner)"), DOCKERFILE),  # a rule of its component
    ],
    ids=["installs-everything", "its-component"],
)
def test_a_read_that_decided_what_ollamas_install_runs_stays_medium(tmp_path, backend, dockerfile):
    rule = backend.split("\n")[1]
    guarded = f"add_library(ggml-cuda cuda.cu)\nif (GGML_CUDA_NO_PEER_COPY)\n    {rule}\nendif()\n"
    (item,) = _install_reads(tmp_path, backend, dockerfile, guarded)
    assert item.severity == "medium"
