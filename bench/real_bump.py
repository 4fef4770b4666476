"""`make bench-real`: `python -m bot check` on Ollama's real llama.cpp bumps, set beside `git diff` of the refs,
and the service's first pull request on a cold data dir.

The llama.cpp mirror (LLAMA_BOT_REAL_LLAMA_CPP) lacks most bNNNN tags, so it is served as a local upstream
the way GitHub serves one: a scratch bare repository borrowing its objects (objects/info/alternates), with the
tags resolved by tests/real/extract.py and uploadpack.allowFilter and allowAnySHA1InWant set. For each bump:
the cold run (an empty data dir: the mirror is created from that upstream), the warm run, and `git diff`.
For the first bump, `python -m bot serve` against the fake GitHub holding Ollama's real repository: the
seconds from the PR's delivery to its finished checklist comment, from an empty data dir.
"""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

from tests.real.extract import VERSION_FILE

BUMPS = (  # (Ollama commit, old ref, new ref): bumps whose blobs the llama.cpp mirror here holds
    ("c82ebbd5b", "b10091", "b10242"),
    ("cc6267665", "b9888", "b10069"),
    ("1fd1ccf7a", "b10069", "b10091"),
)
# A maintainer catching up after months: the Ollama commit that pins the old ref and a ref 1,135 upstream
# commits on, reviewed with only the version file changed (the llama.cpp mirror here lacks one blob the new
# ref holds: the served upstream refuses it, and the review names that file unreadable).
LONG_JUMP_BEFORE = (15.8, 581)  # its warm check's seconds and peak RSS (MB) before the text budget
WARM_RUNS = 3
SAMPLE_SECONDS = 0.02  # how often the memory of a sampled run's processes is read
SERVICE_DEADLINE = 300.0  # seconds the service bench waits for the checklist before it gives up


def _timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB, of the largest of its processes) of one run of `command`; a run that
    could not check (exit 2) stops the benchmark with its last line of stderr."""
    seconds, rss, _ = _run(command, env, sampled=False)
    return seconds, rss


def _run(command: list[str], env: dict[str, str] | None, sampled: bool) -> tuple[float, float, float]:
    """`_timed`, and when `sampled` the peak of its processes' memory together (MB of proportional set size,
    shared pages split among the processes sharing them: the review forks a copy of itself), read every
    SAMPLE_SECONDS from /proc."""
    together = 0.0
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        while True:
            done, status, usage = os.wait4(proc.pid, 0 if not sampled else os.WNOHANG)
            if done:
                break
            together = max(together, _tree_pss(proc.pid) / 1024)
            time.sleep(SAMPLE_SECONDS)
        elapsed = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            last = err.read().decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise SystemExit(f"bench-real: {' '.join(command)} exited {code}: {last[0]}")
    return elapsed, usage.ru_maxrss / 1024, together


def _tree_pss(pid: int) -> int:
    """The proportional set size (kB) of a process and its descendants now; 0 for what /proc does not show."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            total += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):  # gone meanwhile
            continue
    return total


def _served_upstream(llama: Path, resolver, refs: tuple[str, ...], root: Path) -> Path:
    """A local llama.cpp as GitHub serves it, under `root`/src/ggml-org/llama.cpp, holding `refs` as tags."""
    from tests.real.review_bumps import scratch_upstream

    served = root / "src" / "ggml-org" / "llama.cpp"
    repo = scratch_upstream(llama, {t: resolver.resolve(t) for t in refs}, served)
    repo.config["uploadpack.allowFilter"] = True
    repo.config["uploadpack.allowAnySHA1InWant"] = True
    return served


def _bump(ollama: Path, llama: Path, resolver, commit: str, old: str, new: str) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        root = Path(tmp)
        served = _served_upstream(llama, resolver, (old, new), root)
        env = {
            **os.environ,
            "LLAMA_BOT_DATA_DIR": str(root / "data"),
            "LLAMA_BOT_URL_INSTEADOF": f"{root}/src/=https://github.com/",
        }
        check = [sys.executable, "-m", "bot", "check", "--repo", str(ollama), "--base", f"{commit}~1"]
        check += ["--head", commit, "--format", "json", "--quiet"]
        cold = _run(check, env, sampled=True)
        warm = [_timed(check, env) for _ in range(WARM_RUNS)]
        first = [_first_analysis(check, env, root / "data") for _ in range(WARM_RUNS)]
        diff = [_timed(["git", "--git-dir", str(served), "diff", old, new]) for _ in range(WARM_RUNS)]
        check_s, diff_s = statistics.median(w[0] for w in warm), statistics.median(d[0] for d in diff)
        first_s = statistics.median(f[0] for f in first)
        print(f"{old} -> {new} (Ollama {commit}):")
        print(
            f"  cold check: {cold[0]:.1f} s, {cold[1]:.0f} MB peak RSS, its processes together {cold[2]:.0f} MB"
            "  (aim < 15 s, < 300 MB)"
        )
        print(
            f"  first analysis (mirror there, facts store empty): {first_s:.2f} s;  re-check (store filled): "
            f"{check_s:.2f} s, {max(w[1] for w in warm):.0f} MB;  git diff: {diff_s:.2f} s, "
            f"{max(d[1] for d in diff):.0f} MB;  ratios {first_s / diff_s:.1f}x and {check_s / diff_s:.1f}x"
            "  (aim: re-check <= 3x)"
        )
        print(f"  where a warm check's time goes: {_breakdown(check[3:], env)}")


def _first_analysis(check: list[str], env: dict[str, str], data: Path) -> tuple[float, float]:
    """A check whose upstream mirror is there but whose facts store is empty: the first analysis of these
    refs (the store filled again afterwards, as it was)."""
    from bot.cache.facts import FACTS_DIR

    store, aside = data / FACTS_DIR, data / f"{FACTS_DIR}.aside"
    store.rename(aside)
    try:
        return _timed(check, env)
    finally:
        shutil.rmtree(store)
        aside.rename(store)


def _breakdown(check_args: list[str], env: dict[str, str]) -> str:
    """One more warm check, timed by stage (bench/warm_breakdown.py), as a line."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.warm_breakdown", *check_args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    spent = json.loads(done.stderr.strip().splitlines()[-1])
    rest = spent["run"] - spent["patches"] - spent["review"]
    return (
        f"{wall:.2f} s = interpreter start {wall - spent['imports'] - spent['run']:.2f} s, imports "
        f"{spent['imports']:.2f} s, patch stage {spent['patches']:.2f} s, review {spent['review']:.2f} s, "
        f"the rest {rest:.2f} s; tree-sitter parsing (in the two stages) {spent['parsing']:.2f} s over "
        f"{spent['parses']} texts"
    )


def _long_jump(ollama: Path, llama: Path, resolver, commit: str, old: str, new: str) -> None:
    """The cold and one warm `check` of a jump far longer than a usual bump: its wall time and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="bench-real-jump-") as tmp:
        root = Path(tmp)
        _served_upstream(llama, resolver, (old, new), root)
        base, head = _version_bump(ollama, commit, new.encode() + b"\n", root / "ollama.git")
        env = {
            **os.environ,
            "LLAMA_BOT_DATA_DIR": str(root / "data"),
            "LLAMA_BOT_URL_INSTEADOF": f"{root}/src/=https://github.com/",
        }
        check = [sys.executable, "-m", "bot", "check", "--repo", str(root / "ollama.git"), "--base", base]
        check += ["--head", head, "--format", "json", "--quiet"]
        cold, warm = _timed(check, env), _timed(check, env)
        together = _run(check, env, sampled=True)[2]
    print(f"long jump {old} -> {new} (Ollama {commit}, only {VERSION_FILE} changed):")
    print(
        f"  cold check: {cold[0]:.1f} s, {cold[1]:.0f} MB peak RSS;  warm check: {warm[0]:.1f} s, "
        f"{warm[1]:.0f} MB, its processes together {together:.0f} MB  (before the text budget: "
        f"{LONG_JUMP_BEFORE[0]} s, {LONG_JUMP_BEFORE[1]} MB; aim < 10 s, < 300 MB)"
    )


def _version_bump(ollama: Path, commit: str, version: bytes, where: Path) -> tuple[str, str]:
    """A bare repository borrowing Ollama's objects: `commit` and a child of it that changes only the version
    file to `version`, as a bump pull request's first push; (base sha, head sha)."""
    repo = pygit2.init_repository(str(where), bare=True)
    (where / "objects" / "info" / "alternates").write_text(str((ollama / "objects").resolve()) + "\n")
    repo = pygit2.Repository(str(where))
    parent = repo.revparse_single(commit).peel(pygit2.Commit)
    tree = repo.TreeBuilder(parent.tree)
    tree.insert(VERSION_FILE, repo.create_blob(version), pygit2.GIT_FILEMODE_BLOB)
    head = repo.create_commit(
        "refs/heads/bump", parent.author, parent.committer, "bump", tree.write(), [parent.id]
    )
    return str(parent.id), str(head)


def _pull_repository(ollama: Path, commit: str, where: Path) -> tuple[pygit2.Repository, str, str]:
    """A bare repository borrowing Ollama's objects, main at the bump's parent and `bump` at the bump, as
    the fake GitHub serves a pull request; (repository, base sha, head sha). The Ollama mirror here is a
    partial clone: the blobs it lacks (two large test data files) are left out of both trees, since the fake
    GitHub lists every file with its size."""
    repo = pygit2.init_repository(str(where), bare=True)
    (where / "objects" / "info" / "alternates").write_text(str((ollama / "objects").resolve()) + "\n")
    repo = pygit2.Repository(str(where))
    head = repo.revparse_single(commit).peel(pygit2.Commit)
    base = head.parents[0]
    base_id = repo.create_commit(
        "refs/heads/main", base.author, base.committer, base.message, _held_tree(repo, base.tree), []
    )
    head_id = repo.create_commit(
        "refs/heads/bump", head.author, head.committer, head.message, _held_tree(repo, head.tree), [base_id]
    )
    return repo, str(base_id), str(head_id)


def _held_tree(repo: pygit2.Repository, tree: pygit2.Tree) -> pygit2.Oid:
    """`tree` without the blobs the repository lacks."""
    builder = repo.TreeBuilder()
    for entry in tree:
        if entry.type_str == "tree":
            builder.insert(entry.name, _held_tree(repo, repo[entry.id]), entry.filemode)
        elif entry.type_str != "blob" or repo.odb.exists(entry.id):
            builder.insert(entry.name, entry.id, entry.filemode)
    return builder.write()


async def _service_cold(ollama: Path, llama: Path, resolver, commit: str, old: str, new: str) -> None:
    """`python -m bot serve` on an empty data dir, the PR delivered, until its checklist is finished."""
    import aiohttp

    from bench.service import free_port
    from tests.conftest import SECRET, Scenario
    from tests.fakegithub import FakeGitHub

    with tempfile.TemporaryDirectory(prefix="bench-real-service-") as tmp:
        root = Path(tmp)
        served = _served_upstream(llama, resolver, (old, new), root)
        diff_s = statistics.median(
            _timed(["git", "--git-dir", str(served), "diff", old, new])[0] for _ in range(WARM_RUNS)
        )
        git, base, head = _pull_repository(ollama, commit, root / "ollama.git")
        fake = FakeGitHub()
        await fake.start()
        fake.add_repo("ollama", "ollama", git)
        fake.add_pull("ollama", "ollama", 7, head, "bump", base_sha=base)
        scenario = Scenario(fake, git, root, base, head)
        port = free_port()
        env = {
            **os.environ,
            "GITHUB_APP_ID": str(fake.app_id),
            "GITHUB_PRIVATE_KEY": fake.private_key_pem,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITHUB_API_URL": fake.url,
            "LLAMA_BOT_DATA_DIR": str(root / "data"),
            "LLAMA_BOT_URL_INSTEADOF": f"{root}/src/=https://github.com/",
        }
        server = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            async with aiohttp.ClientSession() as session:
                for _ in range(400):
                    try:
                        async with session.get(url + "healthz") as resp:
                            if resp.status == 200:
                                break
                    except aiohttp.ClientError:
                        await asyncio.sleep(0.05)
                seconds = await _checklist_seconds(session, url, scenario, 7, head)
                again = _pull_again(git, head)
                fake.add_pull("ollama", "ollama", 8, again, "bump-again", base_sha=base)
                recheck = await _checklist_seconds(session, url, scenario, 8, again)
                peak = _peak_rss_mb(server.pid)
        finally:
            server.terminate()
            await server.wait()
            await fake.close()
    print(f"service, {old} -> {new} (Ollama {commit}) on the fake GitHub, upstream served locally:")
    print(
        f"  PR delivery to finished checklist, cold data dir: {seconds:.1f} s, the service's peak RSS "
        f"{peak:.0f} MB  (aim < 20 s)"
    )
    print(
        f"  a second PR making the same change (the service's re-check): {recheck:.2f} s from delivery to "
        f"finished checklist, {recheck / diff_s:.1f}x git diff ({diff_s:.2f} s)  (aim: re-check <= 3x)"
    )


async def _checklist_seconds(session, url: str, scenario, number: int, head: str) -> float:
    """Seconds from the delivery of pull request `number`'s opening to its finished checklist."""
    from bench.service import delivery_headers
    from bot.render.env import RUNNING

    body = json.dumps(scenario.pull_event("opened", number=number)).encode()
    started = time.perf_counter()
    async with session.post(
        url + "webhook", data=body, headers=delivery_headers("pull_request", body)
    ) as resp:
        if resp.status != 202:
            raise SystemExit(f"bench-real: the service answered the delivery with {resp.status}")
    finished = f"Describes commit `{head[:12]}`"
    while not any(finished in c["body"] and RUNNING not in c["body"] for c in scenario.bot_comments(number)):
        if time.perf_counter() - started > SERVICE_DEADLINE:
            raise SystemExit(f"bench-real: no finished checklist within {SERVICE_DEADLINE:.0f} s")
        await asyncio.sleep(0.02)
    return time.perf_counter() - started


def _pull_again(repo: pygit2.Repository, head: str) -> str:
    """A commit with `head`'s tree on its parent, on branch `bump-again`: a second pull request making the
    same change (the service reviews it as it would `/llama recheck` the first)."""
    commit = repo[head].peel(pygit2.Commit)
    return str(
        repo.create_commit(
            "refs/heads/bump-again",
            commit.author,
            commit.committer,
            "again",
            commit.tree_id,
            commit.parent_ids,
        )
    )


def _peak_rss_mb(pid: int) -> float:
    """A running process's peak RSS so far (Linux's VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024


def _compiled() -> None:
    """The bot's modules compiled to bytecode first, as installing the package compiles them: a checkout run
    with PYTHONDONTWRITEBYTECODE set (this sandbox sets it) compiles each module it imports again on every
    run, and its runs would time the compiler (0.25 s of a 0.55 s re-check)."""
    import bot

    compileall.compile_dir(Path(bot.__file__).parent, quiet=1)


def main() -> int:
    ollama, llama = (
        Path(os.environ.get(n, "")) for n in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP")
    )
    if not (
        os.environ.get("LLAMA_BOT_REAL_OLLAMA")
        and os.environ.get("LLAMA_BOT_REAL_LLAMA_CPP")
        and (ollama / "objects").is_dir()
        and (llama / "objects").is_dir()
    ):
        print(
            "bench-real: skipped: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP must name fetched git "
            "mirrors of ollama/ollama and llama.cpp"
        )
        return 0
    from tests.real.extract import RefResolver
    from tests.real.review_bumps import LONG_JUMP

    _compiled()
    resolver = RefResolver(llama)
    for commit, old, new in BUMPS:
        _bump(ollama, llama, resolver, commit, old, new)
    _long_jump(ollama, llama, resolver, *LONG_JUMP)
    asyncio.run(_service_cold(ollama, llama, resolver, *BUMPS[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
