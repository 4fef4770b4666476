"""One run of a built llama-server as Ollama runs it: the device listing first, then the server started with
the plan's flags and environment, `/health` polled while it loads, each probe's request sent, every output
line tried against Ollama's patterns. What is kept is the shape of each answer (status, field types, frame
kinds), never sampled text, timings or ids, so two runs of one build compare equal."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot.probe.plan import Plan, Probe, ProgramRun
from bot.review.consumers.contracts.model import OutputPattern

MAX_LINES = 20000  # output lines kept per stream
MAX_LINE_CHARS = 4000  # characters kept of one output line (the rest is read and dropped)
READY_WITHIN = 120.0  # seconds the server may take to answer /health with 200
ANSWER_WITHIN = 120.0  # seconds one request may take
MAX_BODY = 4 << 20  # bytes of an answer read
RUN_WITHIN = 300.0  # seconds one run of another program may take


@dataclass
class Answer:
    """The shape of one answer."""

    status: int
    fields: dict[str, str] = field(default_factory=dict)  # field path -> JSON type (stream: "<chunk>:path")
    frames: list[str] = field(default_factory=list)  # stream: the kinds of SSE frames, repeats folded
    error: str = ""  # a refusal's message, first 300 characters


@dataclass
class ProgramAnswer:
    """What one run of another program did: its exit status, whether it wrote its output file, and which of
    Ollama's patterns matched which stream."""

    exit: int  # -1: it did not end within RUN_WITHIN
    wrote: bool = False
    matched: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.exit == 0


@dataclass
class Observation:
    """What one build of llama-server did when spoken to as Ollama does."""

    ref: str
    started: bool = False
    failure: str = ""  # why the server did not come up (its exit and last lines)
    health: list[int] = field(default_factory=list)  # /health statuses while loading, repeats folded
    answers: dict[str, Answer] = field(default_factory=dict)  # by probe name
    matched: dict[str, list[str]] = field(default_factory=dict)  # pattern key -> streams it matched on
    listing_matched: dict[str, list[str]] = field(default_factory=dict)
    programs: dict[str, ProgramAnswer] = field(default_factory=dict)  # by run name
    launches: dict[str, Started] = field(default_factory=dict)  # the server's other starts, by launch name


def pattern_key(p: OutputPattern) -> str:
    return f"{p.kind} {p.value!r}"


def _matches(p: OutputPattern, line: str) -> bool:
    text = line.strip()
    if p.kind == "regexp":
        try:
            return re.search(p.value, line) is not None
        except re.error:
            return False
    return {
        "substring": p.value in line,
        "prefix": text.startswith(p.value),
        "suffix": text.endswith(p.value),
        "equals": text == p.value,
        "equals (any case)": text.lower() == p.value.lower(),
    }.get(p.kind, False)


def matched(patterns: tuple[OutputPattern, ...], streams: dict[str, list[str]]) -> dict[str, list[str]]:
    """For each pattern, the streams (stdout, stderr) whose lines it matched."""
    found: dict[str, list[str]] = {}
    for p in patterns:
        if p.kind == "separator":
            continue  # splits a value already found; no line is it
        where = [name for name, lines in streams.items() if any(_matches(p, line) for line in lines)]
        if where:
            found[pattern_key(p)] = where
    return found


def run(binary: Path, model: Path, plan: Plan, ref: str, workdir: Path) -> Observation:
    """The listing, then the server with the plan's probes, then each of its other starts with the base
    requests; every server is stopped before this returns."""
    seen = Observation(ref)
    env = {**_clean_env(), **plan.env}
    listing = subprocess.run(
        [str(binary), *plan.listing],
        check=False,
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        timeout=120,
    )
    seen.listing_matched = matched(
        plan.patterns, {"stdout": listing.stdout.splitlines(), "stderr": listing.stderr.splitlines()}
    )
    started = _serve(binary, model, plan.args, env, workdir, plan.probes)
    seen.started, seen.failure, seen.health, seen.answers = (
        started.started,
        started.failure,
        started.health,
        started.answers,
    )
    seen.matched = matched(plan.patterns, started.streams)
    base = tuple(p for p in plan.probes if not p.field)
    for launch in plan.launches:
        other = _serve(binary, model, (*plan.args, *launch.args), {**env, **dict(launch.env)}, workdir, base)
        seen.launches[launch.name] = Started(other.started, other.failure, answers=other.answers)
    return seen


@dataclass
class Started:
    """One start of the server: whether it answered /health with 200 (else why not), the statuses /health
    gave while it loaded, the probes' answers, and its output."""

    started: bool
    failure: str = ""
    health: list[int] = field(default_factory=list)
    answers: dict[str, Answer] = field(default_factory=dict)
    streams: dict[str, list[str]] = field(default_factory=dict)


def _serve(
    binary: Path,
    model: Path,
    flags: tuple[str, ...],
    env: dict[str, str],
    workdir: Path,
    probes: tuple[Probe, ...],
) -> Started:
    """The server started with `flags` and `env`, each probe sent once it is ready, then stopped."""
    port = _free_port()
    args = [str(binary), "--model", str(model), "--host", "127.0.0.1", "--port", str(port), *flags]
    streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
    done = Started(False, streams=streams)
    with subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=workdir,
        text=True,
        errors="replace",
    ) as server:
        readers = [_reader(server.stdout, streams["stdout"]), _reader(server.stderr, streams["stderr"])]
        try:
            done.started = _wait_ready(server, port, done.health)
            if done.started:
                done.answers = {p.name: _ask(port, p) for p in probes}
            else:
                tail = "\n".join(streams["stderr"][-15:])
                done.failure = (
                    f"llama-server exited {server.poll()} before answering /health with 200:\n{tail}"
                )
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
            for reader in readers:
                reader.join(timeout=5)
    return done


def run_programs(
    binaries: dict[str, Path], model: Path, plan: Plan, workdir: Path
) -> dict[str, ProgramAnswer]:
    """Each run of the other programs Ollama starts, as it starts them, on the tiny model; a program this ref
    did not build is left out."""
    output = workdir / "probe-output.gguf"
    answers = {
        r.name: _run_program(binaries[r.program], r, model, output, plan.patterns)
        for r in plan.runs
        if r.program in binaries
    }
    output.unlink(missing_ok=True)
    return answers


def _run_program(
    binary: Path, run: ProgramRun, model: Path, output: Path, patterns: tuple[OutputPattern, ...]
) -> ProgramAnswer:
    output.unlink(missing_ok=True)
    args = [str(model) if a == "{model}" else str(output) if a == "{output}" else a for a in run.args]
    mine = tuple(p for p in patterns if any(s.split(" ", 1)[0] == run.program for s in p.sources))
    status, streams = _run_bounded([str(binary), *args], output.parent)
    if status == -1:
        return ProgramAnswer(-1)
    wrote = "{output}" in run.args and output.is_file() and output.stat().st_size > 0
    return ProgramAnswer(status, wrote, matched(mine, streams))


def _run_bounded(argv: list[str], cwd: Path) -> tuple[int, dict[str, list[str]]]:
    """A program's exit status (-1 when it did not end within RUN_WITHIN) and its streams, read line by line
    to a bound."""
    streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env=_clean_env(),
        cwd=cwd,
    ) as program:
        readers = [_reader(program.stdout, streams["stdout"]), _reader(program.stderr, streams["stderr"])]
        try:
            status = program.wait(timeout=RUN_WITHIN)
        except subprocess.TimeoutExpired:
            program.kill()
            status = -1
        for reader in readers:
            reader.join(timeout=5)
    return status, streams


def _clean_env() -> dict[str, str]:
    """The environment without anything that would change the server's behaviour from outside the plan."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("LLAMA_", "GGML_", "CUDA_", "HIP_"))}


def _reader(pipe, lines: list[str]) -> threading.Thread:
    """A thread keeping a stream's first MAX_LINES lines, each cut at MAX_LINE_CHARS, and reading the rest
    to its end so the program never blocks on a full pipe."""

    def read() -> None:
        whole = True  # the last piece read ended its line
        while piece := pipe.readline(MAX_LINE_CHARS):
            if whole and len(lines) < MAX_LINES:
                lines.append(piece.rstrip("\n"))
            whole = piece.endswith("\n")

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_ready(server: subprocess.Popen, port: int, health: list[int]) -> bool:
    """Poll /health until 200; each status seen once in a row is kept (a load answers 503 first)."""
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline and server.poll() is None:
        try:
            status = _request(port, "GET", "/health", None).status
        except OSError:
            time.sleep(0.02)
            continue
        if not health or health[-1] != status:
            health.append(status)
        if status == 200:
            return True
        time.sleep(0.02)
    return False


@dataclass
class _Raw:
    status: int
    body: bytes


def _request(port: int, method: str, path: str, body: dict | None) -> _Raw:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_WITHIN)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        return _Raw(response.status, response.read(MAX_BODY))
    finally:
        connection.close()


def _ask(port: int, probe: Probe) -> Answer:
    """One probe's answer, as a shape."""
    try:
        raw = _request(port, probe.method, probe.path, probe.body)
    except OSError as exc:
        return Answer(0, error=f"no answer: {type(exc).__name__}")
    text = raw.body.decode("utf-8", "replace")
    if raw.status >= 300:
        return Answer(raw.status, shape(_json(text)), error=_message(text))
    if probe.stream:
        return _stream_answer(raw.status, text)
    return Answer(raw.status, shape(_json(text)))


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _message(text: str) -> str:
    """A refusal's message: the JSON error's, else the text's start."""
    data = _json(text)
    if isinstance(data, dict):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error or data.get("message")
        if isinstance(message, str):
            return message[:300]
    return " ".join(text.split())[:300]


def shape(value: object, prefix: str = "", depth: int = 0) -> dict[str, str]:
    """Field path -> JSON type of a JSON value (objects to two levels, list elements as `[]`)."""
    kind = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )
    found = {prefix: kind} if prefix else {}
    if depth >= 3:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            found.update(shape(item, f"{prefix}.{key}" if prefix else str(key), depth + 1))
    elif isinstance(value, list) and value:
        found.update(shape(value[0], f"{prefix}[]", depth + 1))
    return found


def _stream_answer(status: int, text: str) -> Answer:
    """An SSE answer: the kinds of its frames, repeats folded, and the fields of its first and last data
    chunks."""
    frames: list[str] = []
    chunks: list[object] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        kind, chunk = _frame(line)
        if chunk is not None:
            chunks.append(chunk)
        if not frames or frames[-1] != kind:
            frames.append(kind)
    fields: dict[str, str] = {}
    if chunks:
        fields.update({f"first:{k}": v for k, v in shape(chunks[0]).items()})
        fields.update({f"last:{k}": v for k, v in shape(chunks[-1]).items()})
    return Answer(status, fields, frames)


def _frame(line: str) -> tuple[str, object]:
    """The kind of one SSE line (data, data (not JSON), comment, done, event, id, retry, other) and its
    JSON chunk when it is data."""
    if line.startswith(":"):
        return "comment", None
    if line.startswith("data: [DONE]"):
        return "done", None
    if line.startswith("data:"):
        chunk = _json(line[5:].strip())
        return ("data" if chunk is not None else "data (not JSON)"), chunk
    field_name = line.split(":", 1)[0]
    return (field_name if field_name in ("event", "id", "retry") else "other"), None
