"""`python -m bot probe` end to end on real git repositories, a real CMake build and a real server process: a
synthetic upstream whose CMake "builds" llama-server by installing a small Python HTTP server (its behaviour
per ref in the tree), an Ollama tree whose CMake fetches it by FetchContent with a CPU preset and whose Go
code is the contract inventory's test tree, and the tiny model written by the tree's own gguf-py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.model import LocalRef
from bot.probe import build, compare, plan, session
from bot.review.consumers.contracts.model import Inventory, OutputPattern, WireField
from tests.fixtures import RepoBuilder
from tests.real.probe_bumps import expanded, kept_plan, observation
from tests.test_contracts import SERVER_GO, TREE

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None, reason="no cmake on PATH (the probe builds with it)"
)
ROOT = Path(__file__).resolve().parent.parent

UPSTREAM_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(fake_llama NONE)
add_custom_target(llama-server ALL
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bin
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/server.py ${CMAKE_BINARY_DIR}/bin/llama-server
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/behaviour.json ${CMAKE_BINARY_DIR}/bin/behaviour.json
  COMMAND chmod +x ${CMAKE_BINARY_DIR}/bin/llama-server)
add_custom_target(llama-quantize
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bin
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/quantize.py ${CMAKE_BINARY_DIR}/bin/llama-quantize
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/behaviour.json ${CMAKE_BINARY_DIR}/bin/behaviour.json
  COMMAND chmod +x ${CMAKE_BINARY_DIR}/bin/llama-quantize)
"""

QUANTIZE = """#!PYTHON
import json, os, sys

B = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "behaviour.json")))
args = sys.argv[1:]
if B.get("quantize_refuses_tensor_type") and "--tensor-type" in args:
    print("error: unknown argument: --tensor-type", file=sys.stderr)
    sys.exit(1)
source, output, kind = args[-3:]
assert "--allow-requantize" in args and os.path.getsize(source) > 0 and kind == "Q4_K_M"
for i in (1, 2):
    print(("[%d of %d] quantizing" if B.get("quantize_progress") == "of" else "[%3d/%3d] quantizing") % (i, 2))
with open(output, "wb") as out:
    out.write(b"GGUF" + bytes(16))
"""

# Ollama's quantization: llama-quantize with a flag it always gives, one it gives for some models, the
# input, the output and the type; its progress read from stdout
QUANTIZE_GO = """package server

import (
	"bufio"
	"os/exec"
	"regexp"
)

// progressRegex matches llama-quantize's progress lines, "[ 42/ 200]"
var progressRegex = regexp.MustCompile(`\\[\\s*(\\d+)/\\s*(\\d+)\\]`)

func quantizeArgs(input, output, typeName string, keepEmbeddings bool) []string {
	args := []string{"--allow-requantize"}
	if keepEmbeddings {
		args = append(args, "--tensor-type", `^token_embd\\.weight$=f16`)
	}
	return append(args, input, output, typeName)
}

// Quantize runs llama-quantize, reporting its progress.
func Quantize(input, output, typeName string, keepEmbeddings bool, progress func(string)) error {
	cmd := exec.Command("llama-quantize", quantizeArgs(input, output, typeName, keepEmbeddings)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		if m := progressRegex.FindStringSubmatch(scanner.Text()); len(m) == 3 {
			progress(m[1])
		}
	}
	return cmd.Wait()
}
"""

SERVER = """#!PYTHON
import json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

B = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "behaviour.json")))
args = sys.argv[1:]
if "--list-devices" in args:
    print("Available devices:")
    print("  CPU: Fake CPU (1000 MiB, 900 MiB free)")
    sys.exit(0)
if B.get("refuse_no_jinja") and "--no-jinja" in args:
    print("error: invalid argument: --no-jinja", file=sys.stderr)
    sys.exit(1)
port = int(args[args.index("--port") + 1])
assert os.path.getsize(args[args.index("--model") + 1]) > 0
assert args[args.index("--cache-type-k") + 1] == "q8_0" and os.environ.get("LLAMA_ARG_FLASH_ATTN") == "on"
started = time.monotonic()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path != "/health":
            return self.answer(404, {"error": {"message": "no route"}})
        if time.monotonic() - started < 0.3:
            return self.answer(503, {"error": {"message": "Loading model"}})
        return self.answer(200, {"status": "ok"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/completion":
            return self.answer(404, {"error": {"message": "no route"}})
        if B.get("refuse_negative_temperature") and body.get("temperature", 0) < 0:
            return self.answer(400, {"error": {"message": "temperature must be >= 0"}})
        timings = {B.get("predicted_n", "predicted_n"): int(time.monotonic() * 1000) % 7}
        if not body.get("stream"):
            return self.answer(200, {"content": "hi %f" % time.monotonic(), "stop": True, "timings": timings})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        frames = [": ping\\n\\n"] if B.get("ping") else []
        frames.append("data: " + json.dumps({"content": "h", "stop": False}) + "\\n\\n")
        frames.append("data: " + json.dumps({"content": "i", "stop": True, "timings": timings}) + "\\n\\n")
        for frame in frames:
            self.wfile.write(frame.encode())


print("main: server is listening on port %d" % port, file=sys.stdout if B.get("listening_on") == "stdout" else sys.stderr, flush=True)
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""

OLLAMA_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(ollama-llama-server NONE)
include(FetchContent)
file(READ "${CMAKE_CURRENT_SOURCE_DIR}/../../LLAMA_CPP_VERSION" LLAMA_CPP_GIT_TAG)
string(STRIP "${LLAMA_CPP_GIT_TAG}" LLAMA_CPP_GIT_TAG)
FetchContent_Declare(llama_cpp GIT_REPOSITORY https://github.com/ggml-org/llama.cpp GIT_TAG ${LLAMA_CPP_GIT_TAG})
FetchContent_MakeAvailable(llama_cpp)
"""
PRESETS = {
    "version": 3,
    "configurePresets": [
        {"name": "default", "cacheVariables": {"CMAKE_BUILD_TYPE": "Release", "GGML_NATIVE": "OFF"}},
        {"name": "cpu", "inherits": ["default"], "cacheVariables": {"GGML_CPU_ALL_VARIANTS": "ON"}},
    ],
}
# Ollama's code sends a greedy warm-up request: temperature -1 is a value it sends
WARM = (
    SERVER_GO
    + """
// Warm loads the model with a request that samples greedily.
func (s *Server) Warm() error {
	return s.Complete("", -1, func(string) {})
}
"""
)


def _vocab(path: Path) -> None:
    """A small SentencePiece-style vocab file, as llama.cpp's models/ggml-vocab-*.gguf hold."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    tokens = ["<unk>", "<s>", "</s>", *[chr(c) for c in range(97, 123)]]
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_types([2, 3, 3, *([1] * 26)])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    """The upstream (v1; v2 changing what Ollama reads; v3 that does not build) and Ollama (base pins v1)."""
    import gguf

    root = tmp_path_factory.mktemp("probe")
    vocab = root / "vocab.gguf"
    _vocab(vocab)
    package = Path(gguf.__file__).parent
    gguf_py = {f"gguf-py/gguf/{p.relative_to(package)}": p.read_bytes() for p in package.rglob("*.py")}
    up = RepoBuilder(root / "llama.git")
    server = SERVER.replace("PYTHON", sys.executable)
    files = {
        "CMakeLists.txt": UPSTREAM_CMAKE,
        "server.py": server,
        "quantize.py": QUANTIZE.replace("PYTHON", sys.executable),
        "models/ggml-vocab-llama-spm.gguf": vocab.read_bytes(),
        **gguf_py,
    }
    up.commit("base", {**files, "behaviour.json": "{}"})
    up.tag("v1")
    up.commit("a comment", {"README.md": "nothing Ollama reads\n"})
    up.tag("v1.1")
    changed = {
        "refuse_negative_temperature": True,
        "ping": True,
        "listening_on": "stdout",
        "predicted_n": "n_predicted",
        "quantize_refuses_tensor_type": True,
        "refuse_no_jinja": True,
        "quantize_progress": "of",
    }
    up.commit("server changes (#10)", {"behaviour.json": json.dumps(changed)})
    up.tag("v2")
    up.commit("broken build", {"CMakeLists.txt": UPSTREAM_CMAKE + "message(FATAL_ERROR broken)\n"})
    up.tag("v3")
    ollama = RepoBuilder(root / "ollama.git")
    tree = {**TREE, "runner/server.go": WARM, "llama/server/CMakeLists.txt": OLLAMA_CMAKE}
    tree["server/quantize.go"] = QUANTIZE_GO
    tree["cmake/quantize.cmake"] = "install(TARGETS llama-quantize RUNTIME DESTINATION lib)\n"
    tree["llama/server/CMakePresets.json"] = json.dumps(PRESETS)
    ollama.commit("pin v1", {**tree, "LLAMA_CPP_VERSION": "v1\n"})
    ollama.tag("base")
    for ref in ("v1.1", "v2", "v3"):
        ollama.commit(f"bump to {ref}", {"LLAMA_CPP_VERSION": f"{ref}\n"})
        ollama.tag(f"to-{ref}")
    return root, up.path, ollama.path


def probe(repos, head: str, work: str = "work", upstream: Path | None = None) -> tuple[int, dict, str]:
    root, source, ollama = repos
    upstream = upstream or source
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "probe",
            "--repo",
            str(ollama),
            "--base",
            "base",
            "--head",
            head,
            "--upstream-dir",
            f"llama.cpp={upstream}",
            "--work-dir",
            str(root / work),
            "--format",
            "json",
            "--jobs",
            "2",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "LLAMA_BOT_DATA_DIR": str(root / "data")},
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def test_what_changed_on_something_ollama_reads_is_found_with_its_evidence(repos):
    code, out, err = probe(repos, "to-v2")
    assert code == 1, err
    (pin,) = out["pins"]
    assert (pin["old_ref"], pin["new_ref"]) == ("v1", "v2")
    by_check = {}
    for f in pin["findings"]:
        by_check.setdefault(f["check"], []).append(f)
    (refused,) = by_check["probe.refused"]
    assert (
        refused["title"] == "llama-server now refuses POST /completion temperature=-1, which Ollama can send"
    )
    assert "400 at v2 (temperature must be >= 0)" in refused["detail"]
    assert refused["local_refs"][0]["path"] == "runner/server.go"
    (frames,) = by_check["probe.frames"]
    assert "new kinds of frames: comment" in frames["title"]
    (field,) = by_check["probe.field"]
    assert field["title"].startswith(
        "Field timings.predicted_n of POST /completion stream (last chunk) is gone"
    )
    serving, progress = sorted(by_check["probe.pattern"], key=lambda f: "quantize" in f["title"])
    assert (
        "'main: server is listening' no longer matches" in serving["title"]
        and "stdout now" in serving["detail"]
    )
    # a flag Ollama gives on some starts, now refused: the server started with it does not start
    (launch,) = by_check["probe.launch"]
    assert (
        launch["title"]
        == "llama-server at v2 does not start with --no-jinja, which Ollama gives on some starts"
    )
    assert (
        "invalid argument: --no-jinja" in launch["detail"]
        and launch["local_refs"][0]["path"] == "runner/server.go"
    )
    # llama-quantize, run as Ollama runs it: the flag it gives for some models refused, its progress unread
    (program,) = by_check["probe.program"]
    assert program["title"] == (
        "llama-quantize now fails as Ollama runs it: llama-quantize --tensor-type ^token_embd\\.weight$=f16"
    )
    assert (
        "at v2 it exits 1" in program["detail"] and program["local_refs"][0]["path"] == "server/quantize.go"
    )
    assert "no longer matches llama-quantize's output" in progress["title"]
    assert progress["local_refs"][0]["path"] == "server/quantize.go"
    # the report says which model each ref was spoken to with
    assert [(m["ref"], m["architecture"], m["seed"]) for m in pin["models"]] == [
        ("v1", "llama", 0),
        ("v2", "llama", 0),
    ]
    assert pin["models"][0]["vocab"] == "models/ggml-vocab-llama-spm.gguf"
    seen = pin["observations"]
    assert seen[0]["health"][-1] == 200 and 503 in seen[0]["health"]  # /health polled while it loads
    assert "regexp" in next(iter(seen[0]["listing_matched"]))  # Ollama's device-line pattern, in the listing


def test_a_bump_that_changes_nothing_ollama_reads_says_so_although_answers_differ_in_text(repos):
    code, out, err = probe(repos, "to-v1.1")
    assert code == 0, err
    assert out["pins"][0]["findings"] == []


def test_a_blobless_clone_of_the_upstream_is_enough(repos):
    """The files to build are fetched from the clone's promisor remote, as a CI runner's clone has it."""
    root, source, _ = repos
    subprocess.run(["git", "-C", str(source), "config", "uploadpack.allowFilter", "true"], check=True)
    blobless = root / "blobless.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--filter=blob:none", f"file://{source}", str(blobless)], check=True
    )
    code, out, err = probe(repos, "to-v2", work="blobless-work", upstream=blobless)
    assert code == 1, err
    assert {f["check"] for f in out["pins"][0]["findings"]} >= {"probe.refused", "probe.frames"}


def test_a_new_ref_that_does_not_build_is_a_finding_and_an_old_one_stops_the_probe(repos):
    code, out, err = probe(repos, "to-v3")
    assert code == 1, err
    (finding,) = out["pins"][0]["findings"]
    assert finding["check"] == "probe.build" and "the configure step failed" in finding["detail"]
    assert "broken" in finding["detail"]


def test_the_plan_sends_each_value_ollama_can_send_and_gives_its_flags_and_environment():
    from bot.review.consumers.contracts import contract_inventory

    inventory = contract_inventory({**TREE, "runner/server.go": WARM})
    made = plan.make_plan(inventory, lambda options: [])
    assert made.args == ("--cache-type-k", "q8_0") and made.env == {"LLAMA_ARG_FLASH_ATTN": "on"}
    names = [p.name for p in made.probes]
    assert names[:2] == ["POST /completion", "POST /completion stream"]
    assert "POST /completion temperature=-1" in names
    base = made.probes[0].body
    assert base["temperature"] == 0.8 and "top_k" not in base  # an optional field Ollama leaves out


def test_a_pattern_that_moves_between_streams_ollama_reads_together_is_no_finding():
    listing = OutputPattern(
        "prefix", "  CPU", ("llama-server --list-devices stdout+stderr",), LocalRef("d.go", 3), (), ()
    )
    serving = OutputPattern("prefix", "main: ready", ("llama-server stderr",), LocalRef("s.go", 9), (), ())
    made = plan.Plan((), {}, (), (), (listing, serving), ())
    before = session.Observation(
        "v1",
        True,
        listing_matched={"prefix '  CPU'": ["stdout"]},
        matched={"prefix 'main: ready'": ["stderr"]},
    )
    after = session.Observation(
        "v2",
        True,
        listing_matched={"prefix '  CPU'": ["stderr"]},
        matched={"prefix 'main: ready'": ["stdout"]},
    )
    (moved,) = compare.compare(before, after, made)
    assert "'main: ready' no longer matches llama-server's output while serving" in moved.title


# -- real bumps, as tests/real/probe_bumps.py saw them --------------------------------------------------------

KEPT = [
    (p, json.loads(p.read_text())) for p in sorted((ROOT / "tests" / "data" / "probe-real").glob("*.json"))
]
REAL = [p for p, data in KEPT if len(data["observations"]) == 2]
UNBUILT = [p for p, data in KEPT if len(data["observations"]) < 2]


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_real_bumps_compare_as_they_did_when_probed(path):
    """The comparison of two real llama-server runs, kept as data: the same findings, and each one is a real
    difference (a refusal with upstream's message), none from sampling, timings or ids."""
    data = expanded(json.loads(path.read_text()))
    found = compare.compare(*(observation(o) for o in data["observations"]), kept_plan(data["plan"]))
    assert [f.to_json() for f in found] == data["findings"]
    assert all(o["started"] for o in data["observations"])


@pytest.mark.parametrize("path", UNBUILT, ids=[p.stem for p in UNBUILT])
def test_a_real_first_push_whose_new_ref_does_not_build_says_so_alone(path):
    """A pull request's first push whose carried patches no longer apply: the new ref does not build as the
    head builds it, which is the one finding."""
    (finding,) = json.loads(path.read_text())["findings"]
    assert finding["check"] == "probe.build" and "does not build as Ollama builds it" in finding["title"]


def test_the_real_repeat_last_n_rejection_is_the_one_difference_of_its_bump():
    """b10242 -> b10353: the schema's limits for repeat_last_n became 0..INT32_MAX; Ollama documents -1. It
    is refused on every endpoint that takes it (one finding naming both), and nothing else differs."""
    data = json.loads((ROOT / "tests" / "data" / "probe-real" / "b10242-b10353.json").read_text())
    (finding,) = data["findings"]
    assert finding["check"] == "probe.refused" and finding["title"] == (
        "llama-server now refuses repeat_last_n = -1 on POST /completion and POST /v1/chat/completions, "
        "which Ollama can send"
    )
    assert finding["detail"].count("400 at b10353") == 2 and "documented: -1 = num_ctx" in finding["detail"]


def test_a_chat_request_is_built_with_its_nested_fields_and_varies_its_top_level_ones():
    """`messages[].role` lands in the one message of `messages`; a plain value keeps its place against a
    nested path under it; only top-level fields are varied."""

    def wire(
        path: str, go_type: str, values: tuple = (), optional: bool = False, forwards: tuple = ()
    ) -> WireField:
        endpoint = "POST /v1/chat/completions"
        return WireField(endpoint, "request", path, go_type, values, optional, LocalRef("r.go", 1), forwards)

    fields = [
        wire("messages", ""),
        wire("messages[].role", "string", ('"assistant"',)),
        wire("messages[].content", "string", ("string",), optional=True),
        wire("messages[].content[].type", "string", ('"text"',), optional=True),
        wire("stream", "bool", ("false", "true")),
        wire("repeat_last_n", "integer", ("integer", "64"), forwards=("repeat_last_n",)),
        wire("response_format.type", "string", ('"json_object"',), optional=True),
    ]
    inventory = Inventory((), (), tuple(fields), (), (), ())
    made = plan.make_plan(inventory, lambda options: [("-1", "-1 = num_ctx")])
    base = made.probes[0].body
    assert base["messages"] == [{"role": "user", "content": "Hello"}]
    assert base["repeat_last_n"] == 64 and "response_format" not in base
    assert [p.name for p in made.probes] == [
        "POST /v1/chat/completions",
        "POST /v1/chat/completions stream",
        "POST /v1/chat/completions repeat_last_n=-1",
        "POST /v1/chat/completions repeat_last_n=0",
    ]  # the stream field is the two base requests; nested fields keep their base values


def test_an_error_while_generating_is_no_refusal_and_its_going_away_says_nothing():
    """A 5xx is the server failing on what it sampled, not a request refused: 2xx -> 5xx is a medium
    `probe.failed`; 5xx -> 2xx says nothing (a seed of -1 samples differently each run); 4xx -> 2xx is info."""
    probe = plan.Probe(
        "POST /completion seed=-1", "POST", "/completion", {}, False, "seed", "-1", "a constant"
    )
    made = plan.Plan((), {}, (), (probe,), (), ())

    def runs(old: int, new: int) -> list:
        before = session.Observation("v1", True, answers={probe.name: session.Answer(old, error="x")})
        after = session.Observation("v2", True, answers={probe.name: session.Answer(new, error="y")})
        return [(f.check, f.severity) for f in compare.compare(before, after, made)]

    assert runs(200, 500) == [("probe.failed", "medium")]
    assert runs(500, 200) == [] and runs(400, 200) == [("probe.accepted", "info")]
    assert runs(200, 400) == [("probe.refused", "high")]


def test_a_tree_entry_that_would_leave_the_directory_is_never_written(tmp_path):
    """A hostile tree (written raw: git refuses such names) naming `..` or `.git` writes nothing outside."""
    import pygit2

    from bot.probe import build

    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    blob = repo.create_blob(b"x")
    raw = b"".join(b"100644 " + name + b"\0" + blob.raw for name in (b"..", b".git", b"ok"))
    tree = repo.odb.write(pygit2.enums.ObjectType.TREE, raw)
    sig = pygit2.Signature("t", "t@example.com")
    commit = repo[repo.create_commit(None, sig, sig, "m", tree, [])]
    dest = tmp_path / "out" / "in"
    dest.mkdir(parents=True)
    skipped = build.write_tree(repo, commit.peel(pygit2.Commit), dest)
    assert sorted(skipped) == ["..", ".git"]
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == ["in", "ok"]


def test_a_symlink_an_earlier_tree_left_is_never_written_through(tmp_path):
    """One tree makes `a` a link to a directory outside; the next has a directory `a`: its files land inside."""
    import pygit2

    from bot.probe import build

    outside = tmp_path / "outside"
    outside.mkdir()
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    sig = pygit2.Signature("t", "t@example.com")

    def commit(entries: dict[str, tuple[bytes, int]]) -> pygit2.Commit:
        top = repo.TreeBuilder()
        for name, (data, mode) in entries.items():
            if "/" in name:
                sub = repo.TreeBuilder()
                sub.insert(name.split("/")[1], repo.create_blob(data), mode)
                top.insert(name.split("/")[0], sub.write(), pygit2.enums.FileMode.TREE)
            else:
                top.insert(name, repo.create_blob(data), mode)
        return repo[repo.create_commit(None, sig, sig, "m", top.write(), [])].peel(pygit2.Commit)

    dest = tmp_path / "work"
    dest.mkdir()
    build.write_tree(repo, commit({"a": (str(outside).encode(), pygit2.enums.FileMode.LINK)}), dest)
    assert (dest / "a").is_symlink()
    build.write_tree(repo, commit({"a/b": (b"x", pygit2.enums.FileMode.BLOB)}), dest)
    assert list(outside.iterdir()) == [] and (dest / "a" / "b").read_bytes() == b"x"
    build.write_tree(repo, commit({"a": (b"now a file", pygit2.enums.FileMode.BLOB)}), dest)
    assert (dest / "a").read_bytes() == b"now a file"


def test_another_program_is_run_per_value_ollama_gives_and_one_without_arguments_is_named():
    from bot.review.consumers.contracts.model import LaunchSetting

    launch = (
        LaunchSetting("llama-quantize", "flag", "--allow-requantize", (), True, (LocalRef("q.go", 3),)),
        LaunchSetting(
            "llama-quantize",
            "flag",
            "--tensor-type",
            ('"a=f16"', '"^b\\.w$=q8_0"'),
            False,
            (LocalRef("q.go", 7),),
        ),
        LaunchSetting("llama-imatrix", "flag", "--chunks", ('"8"',), True, (LocalRef("i.go", 2),)),
    )
    made = plan.make_plan(Inventory((), launch, (), (), (), ()), lambda options: [])
    assert [(r.name, r.args) for r in made.runs] == [
        ("llama-quantize", ("--allow-requantize", "{model}", "{output}", "Q4_K_M")),
        (
            "llama-quantize --tensor-type a=f16",
            ("--allow-requantize", "--tensor-type", "a=f16", "{model}", "{output}", "Q4_K_M"),
        ),
        (
            "llama-quantize --tensor-type ^b\\.w$=q8_0",
            ("--allow-requantize", "--tensor-type", "^b\\.w$=q8_0", "{model}", "{output}", "Q4_K_M"),
        ),
    ]
    assert made.programs == ("llama-server", "llama-quantize")
    assert "program llama-imatrix: what Ollama gives after its flags is not in probe.toml" in made.skipped


def test_a_program_the_new_ref_does_not_build_is_one_finding():
    run = plan.ProgramRun("llama-quantize", "llama-quantize", ("{model}", "{output}", "Q4_K_M"))
    made = plan.Plan((), {}, (), (), (), (), runs=(run,))
    before = session.Observation("v1", started=True, programs={run.name: session.ProgramAnswer(0, True)})
    (finding,) = compare.compare(before, session.Observation("v2", started=True), made)
    assert (finding.check, finding.severity) == ("probe.build", "high")
    assert finding.title == "llama-quantize at v2 does not build as Ollama builds it; Ollama runs it"
    ran = session.Observation("v2", started=True, programs={run.name: session.ProgramAnswer(0, False)})
    (quiet,) = compare.compare(before, ran, made)
    assert quiet.check == "probe.program" and "exits 0 but writes no output" in quiet.detail


def test_each_flag_ollama_gives_on_some_starts_is_a_start_of_its_own():
    from bot.review.consumers.contracts.model import LaunchSetting

    given = (LocalRef("s.go", 4),)
    launch = (
        LaunchSetting("llama-server", "flag", "--load-mode", ('"dio"', '"none"'), False, given),
        LaunchSetting("llama-server", "flag", "--spec-type", ('""', '"draft-mtp"'), False, given),
        LaunchSetting("llama-server", "flag", "--embedding", (), False, given),
        LaunchSetting("llama-server", "flag", "-b", ("integer",), False, given),
        LaunchSetting("llama-server", "flag", "--lora", ("adapter",), False, given),
        LaunchSetting("llama-server", "env", "GGML_CUDA_INIT", ('"1"',), False, given),
    )
    made = plan.make_plan(Inventory((), launch, (), (), (), ()), lambda options: [])
    assert [(x.name, x.args, x.env) for x in made.launches] == [
        ("--load-mode dio", ("--load-mode", "dio"), ()),
        ("--load-mode none", ("--load-mode", "none"), ()),
        ("--spec-type draft-mtp", ("--spec-type", "draft-mtp"), ()),
        ("--embedding", ("--embedding",), ()),
        ("-b 64", ("-b", "64"), ()),  # the value Ollama computes, from probe.toml
        ("GGML_CUDA_INIT=1", (), (("GGML_CUDA_INIT", "1"),)),
    ]
    assert "flag --lora: Ollama computes its value (adapter); not started with it" in made.skipped


def test_a_start_that_no_longer_starts_is_one_finding_and_a_difference_the_base_start_shows_is_not_repeated():
    base = plan.Probe("POST /completion", "POST", "/completion", {}, False)
    starts = (
        plan.Launch("--load-mode dio", ("--load-mode", "dio"), ref=LocalRef("s.go", 4)),
        plan.Launch("--embedding", ("--embedding",)),
    )
    made = plan.Plan((), {}, (), (base,), (), (), launches=starts)
    ok, refused = session.Answer(200), session.Answer(400, error="no")
    before = session.Observation(
        "v1",
        started=True,
        answers={base.name: ok},
        launches={s.name: session.Started(True, answers={base.name: ok}) for s in starts},
    )
    after = session.Observation(
        "v2",
        started=True,
        answers={base.name: refused},
        launches={
            "--load-mode dio": session.Started(False, "error: unknown value dio"),
            "--embedding": session.Started(True, answers={base.name: refused}),
        },
    )
    found = compare.compare(before, after, made)
    assert [(f.check, f.title) for f in found] == [
        ("probe.refused", "llama-server now refuses POST /completion, which Ollama can send"),
        (
            "probe.launch",
            "llama-server at v2 does not start with --load-mode dio, which Ollama gives on some starts",
        ),
    ]
    assert found[1].detail == "error: unknown value dio" and found[1].local_refs == [LocalRef("s.go", 4)]


def test_a_compiler_cache_on_path_launches_the_compilers(tmp_path, monkeypatch):
    project = tmp_path / "ollama" / "llama" / "server"
    project.mkdir(parents=True)
    (project / "CMakePresets.json").write_text(json.dumps(PRESETS))
    made = build.Project(project, "llama_cpp")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    plain = build.configure_command(made, tmp_path / "src", tmp_path / "build")
    assert not any("COMPILER_LAUNCHER" in arg for arg in plain)
    assert f"-DFETCHCONTENT_SOURCE_DIR_LLAMA_CPP={tmp_path / 'src'}" in plain and "-DGGML_NATIVE=OFF" in plain
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "ccache").write_text('#!/bin/sh\nexec "$@"\n')
    (tools / "ccache").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    cached = build.configure_command(made, tmp_path / "src", tmp_path / "build")
    assert f"-DCMAKE_CXX_COMPILER_LAUNCHER={tools / 'ccache'}" in cached
    assert f"-DCMAKE_C_COMPILER_LAUNCHER={tools / 'ccache'}" in cached


def test_a_program_that_floods_its_output_is_kept_to_a_bounded_part_and_still_finishes(tmp_path):
    """A program writing one endless line and more lines than are kept: the run ends with its exit status,
    each kept line cut at its bound, the lines past the bound read and dropped, the pattern still matched."""
    flood = tmp_path / "flood"
    flood.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "sys.stdout.write('x' * 1_000_000 + '\\n')\n"
        f"sys.stdout.write('[  1/  2] quantizing\\n' * {session.MAX_LINES + 5000})\n"
        "sys.stderr.write('y' * 100_000)\n"
        "sys.exit(3)\n"
    )
    flood.chmod(0o755)
    at = LocalRef("server/quantize.go", 3)
    progress = OutputPattern("regexp", r"\[\s*\d+/\s*\d+\]", ("llama-quantize stdout",), at, (at,), ("line",))
    kept: dict[str, list[str]] = {"stdout": []}
    with subprocess.Popen([str(flood)], stdout=subprocess.PIPE, text=True) as program:
        session._reader(program.stdout, kept["stdout"]).join(timeout=60)
    assert len(kept["stdout"]) == session.MAX_LINES
    assert len(kept["stdout"][0]) == session.MAX_LINE_CHARS and kept["stdout"][1].startswith("[  1/  2]")

    run = plan.ProgramRun("llama-quantize", "llama-quantize", ("{model}", "{output}"))
    answer = session._run_program(flood, run, tmp_path / "model.gguf", tmp_path / "out.gguf", (progress,))
    assert answer.exit == 3 and not answer.wrote
    assert answer.matched == {session.pattern_key(progress): ["stdout"]}
