"""The upstream facts store: a re-check reads what the first analysis found, and the report is the same."""

import dataclasses
import os
import pickle
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import asdict

import pytest

from bot.cache import entries, facts
from bot.cache.facts import Extractor, FactStore
from bot.review import beside
from tests.test_app_nested_json import metric
from tests.test_review_e2e import _real_bump, _review

FACT = Extractor("test-fact", 1, "bot.cache.facts")


def _entries(store: FactStore) -> list[bytes]:
    """The ids of the entries the store has written (what waited written first)."""
    store.flush()
    with closing(sqlite3.connect(store.root / entries.DB_NAME)) as db:
        return [row[0] for row in db.execute("SELECT id FROM entry ORDER BY id")]


def _rewrite(store: FactStore, entry_id: bytes, change) -> None:
    """The entry's data changed behind the store's back, as a damaged disk or another program would."""
    store.close()
    with closing(sqlite3.connect(store.root / entries.DB_NAME)) as db, db:
        (data,) = db.execute("SELECT data FROM entry WHERE id = ?", (entry_id,)).fetchone()
        db.execute("UPDATE entry SET data = ? WHERE id = ?", (change(data), entry_id))


def _checksummed(payload: bytes) -> bytes:
    return facts.MAGIC + facts.checksum(payload) + b"\n" + payload


def _with_value(value):
    """An entry's data rewritten to hold `value` under its own key, checksummed all the same."""

    def change(data: bytes) -> bytes:
        label = pickle.loads(data.split(b"\n", 2)[2])[0]
        return _checksummed(pickle.dumps((label, value)))

    return change


def test_a_fact_kept_is_found_again_and_another_version_is_a_miss(tmp_path):
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), {"lines": [1, 2], "code": "x"})
    assert store.get(FACT, ("blob-a",)) == (True, {"lines": [1, 2], "code": "x"})
    assert store.get(FACT, ("blob-b",)) == (False, None)
    assert store.get(Extractor("test-fact", 2, "bot.cache.facts"), ("blob-a",)) == (False, None)
    assert (store.hits, store.misses) == (1, 2)


def test_an_extractors_packages_are_fingerprinted_by_their_installed_versions(tmp_path, monkeypatch):
    """Read from the dist-info directories' names, they are the versions the packages' metadata gives, and a
    package installed at another version makes the facts that parse with it miss."""
    from importlib import metadata

    for module in ("pygit2", "tree_sitter", "tree_sitter_cmake", "tree_sitter_cpp", "tree_sitter_go"):
        assert facts._version(module) == metadata.version(module.replace("_", "-"))
    assert facts._version("jwt") == metadata.version("pyjwt")  # a module named unlike its distribution
    parsed = Extractor("test-parsed", 1, "bot.lang.syntax")
    store = FactStore(tmp_path / "facts")
    store.put(parsed, ("blob-a",), "tree")
    monkeypatch.setattr(facts, "_version", lambda package: "0.0.1")
    facts._fingerprint.cache_clear()
    try:
        assert store.get(parsed, ("blob-a",)) == (False, None)
    finally:
        facts._fingerprint.cache_clear()


def test_what_a_pick_finds_nothing_in_is_a_miss(tmp_path):
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("listing",), [("answers-a", "reading a"), ("answers-b", "reading b")])
    pick_b = lambda kept: next((r for a, r in kept if a == "answers-b"), None)
    pick_c = lambda kept: next((r for a, r in kept if a == "answers-c"), None)
    assert store.get(FACT, ("listing",), pick_b) == (True, "reading b")
    assert store.get(FACT, ("listing",), pick_c) == (False, None)
    assert (store.hits, store.misses) == (1, 1)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: data[:-3] + b"xyz",  # altered bytes in the payload
        lambda data: b"",
        lambda data: b"something else entirely",
        lambda data: _checksummed(b"\x80\x05\x95" + b"\xff" * 8),  # a frame longer than memory can be
    ],
)
def test_a_damaged_entry_is_a_miss_never_a_wrong_fact(tmp_path, damage):
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), "the fact")
    (entry,) = _entries(store)
    _rewrite(store, entry, damage)
    assert store.get(FACT, ("blob-a",)) == (False, None)
    assert _entries(store) == []  # gone from the file
    assert store.remembered(FACT, ("blob-a",), lambda: "computed again") == "computed again"
    assert store.get(FACT, ("blob-a",)) == (True, "computed again")


def test_an_entry_that_would_run_code_when_loaded_is_a_miss(tmp_path):
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), "the fact")
    (entry,) = _entries(store)
    _rewrite(store, entry, _with_value(os.getcwd))  # a function, not plain data
    assert store.get(FACT, ("blob-a",)) == (False, None)


def _used_long_ago(store: FactStore) -> None:
    store.close()
    with closing(sqlite3.connect(store.root / entries.DB_NAME)) as db, db:
        db.execute("UPDATE entry SET used = 1000000")


def test_past_its_bound_the_store_drops_the_least_recently_used_entries(tmp_path):
    """The bound is on the file: a write that takes it over removes the entries used the longest ago, and the
    pages they held leave the file."""
    probe = FactStore(tmp_path / "probe")
    for n in range(14):
        probe.put(FACT, (f"blob-{n:02}",), "x" * 20000)
    probe.close()  # the last connection folds the write-ahead log into the file
    bound = probe._entries.file_bytes()  # fourteen entries
    store = FactStore(tmp_path / "facts", max_bytes=bound)
    for n in range(8):
        store.put(FACT, (f"blob-{n:02}",), "x" * 20000)
    _entries(store)
    _used_long_ago(store)
    assert store.get(FACT, ("blob-00",))[0]  # used now: among the newest
    for n in range(8, 16):
        store.put(FACT, (f"blob-{n:02}",), "x" * 20000)
    store.flush()
    assert store._entries.file_bytes() <= bound * entries.KEPT_SHARE
    kept = {n for n in range(16) if store.get(FACT, (f"blob-{n:02}",))[0]}
    assert {0, *range(8, 16)} <= kept  # the entries used lately stay ...
    assert len(kept) < 16  # ... and those unused the longest went


def test_an_entry_found_has_its_time_of_use_written_once_an_hour_at_most(tmp_path):
    """A re-check within the hour writes nothing; one after writes the entries it found as used now."""
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), "the fact")
    store.put(FACT, ("blob-b",), "another")
    _entries(store)
    again = FactStore(store.root)
    assert again.get(FACT, ("blob-a",))[0]
    assert again._entries._used == set()
    _used_long_ago(store)
    later = FactStore(store.root)
    assert later.get(FACT, ("blob-a",))[0]
    later.flush()
    with closing(sqlite3.connect(store.root / entries.DB_NAME)) as db:
        used = dict(db.execute("SELECT id, used FROM entry"))
    found, other = (facts._where(FACT, (key,))[0] for key in ("blob-a", "blob-b"))
    assert used[other] == 1000000 and used[found] > 1000000


def test_a_file_that_is_not_a_store_is_started_again_and_old_entry_files_are_removed(tmp_path):
    root = tmp_path / "facts"
    (root / "ab").mkdir(parents=True)
    (root / "ab" / "cdef0123").write_bytes(b"an entry of a file of its own, as earlier versions kept")
    (root / "notes").mkdir()
    (root / entries.DB_NAME).write_bytes(b"not SQLite at all" * 100)
    store = FactStore(root)
    store.put(FACT, ("blob-a",), "the fact")
    store.close()
    assert FactStore(root).get(FACT, ("blob-a",)) == (True, "the fact")
    assert not (root / "ab").exists() and (root / "notes").is_dir()


def test_a_store_it_cannot_open_or_write_costs_only_time(tmp_path, monkeypatch, caplog):
    blocked = tmp_path / "facts"
    blocked.write_text("a file where the store's directory would be")
    store = FactStore(blocked)
    assert store.remembered(FACT, ("blob-a",), lambda: "computed") == "computed"
    store.close()
    assert (store.hits, store.misses) == (0, 1)
    assert "cannot be used" in caplog.text
    # another process writing for longer than a write waits: what waited is not kept, and nothing fails
    monkeypatch.setattr(entries, "BUSY_SECONDS", 0.05)
    store = FactStore(tmp_path / "busy")
    store.put(FACT, ("blob-a",), "first")
    store.flush()
    with closing(sqlite3.connect(store.root / entries.DB_NAME, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        store.put(FACT, ("blob-b",), "second")
        store.flush()
        other.execute("ROLLBACK")
    again = FactStore(store.root)
    assert again.get(FACT, ("blob-a",)) == (True, "first")
    assert again.get(FACT, ("blob-b",)) == (False, None)


def test_a_forked_copy_reads_what_waited_in_its_parent_and_writes_only_its_own(tmp_path):
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("before",), "written")
    store.flush()
    store.put(FACT, ("waiting",), "not written yet")
    pid = os.fork()
    if pid == 0:  # the copy: reads both, keeps its own, and writes it
        ok = store.get(FACT, ("waiting",)) == (True, "not written yet") and store.get(FACT, ("before",))[0]
        store.put(FACT, ("copy",), "the copy's")
        store.flush()
        os._exit(0 if ok and store._entries._waiting == {} else 1)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    assert store.get(FACT, ("copy",)) == (True, "the copy's")  # written by the copy, read here
    assert len(_entries(store)) == 3  # the parent's waiting entry written by the parent
    assert FactStore(store.root).get(FACT, ("waiting",)) == (True, "not written yet")


def _findings(b):
    return [asdict(f) for f in _review(b)[0]]


def test_a_review_with_an_empty_a_filled_or_a_damaged_store_is_the_same(tmp_path, monkeypatch):
    """In one process: with the checks forked beside the others, which process computes a fact both need
    first is a race, and the other may find it (a hit in a first review)."""
    monkeypatch.setattr(beside, "_may_fork", lambda: False)
    history = _real_bump(tmp_path)
    uncached = _findings(history)
    assert uncached  # the bump has findings of every kind the store serves
    store = FactStore(tmp_path / "data" / "facts")
    with facts.using(store):
        first = _findings(history)
    assert first == uncached and store.hits == 0 and store.misses > 0
    kept = _entries(store)
    assert kept
    again = FactStore(store.root)
    with facts.using(again):
        assert _findings(history) == uncached
    # every fact found, nothing computed twice (a fact found spares the look-ups of those it was made of)
    assert 0 < again.hits <= store.misses and again.misses == 0
    for entry in kept:
        _rewrite(again, entry, lambda data: data[:-1])  # truncated
    damaged = FactStore(store.root)
    with facts.using(damaged):
        assert _findings(history) == uncached
    assert damaged.hits == 0 and damaged.misses == store.misses


def test_a_new_extractor_version_misses_and_still_reports_the_same(tmp_path, monkeypatch):
    from bot.review import changes

    history = _real_bump(tmp_path)
    uncached = _findings(history)
    with facts.using(FactStore(tmp_path / "facts")):
        _findings(history)
    monkeypatch.setattr(
        changes, "CODE", Extractor("code-text", changes.CODE.version + 1, "bot.review.source")
    )
    store = FactStore(tmp_path / "facts")
    with facts.using(store):
        assert _findings(history) == uncached
    assert store.misses > 0 and store.hits > 0  # the other extractors' facts still serve


async def test_the_services_second_pull_request_on_the_same_refs_reads_the_facts_of_the_first(bot, scenario):
    hits = 'llama_bot_upstream_facts_total{outcome="hit"}'
    misses = 'llama_bot_upstream_facts_total{outcome="miss"}'
    status, _ = await bot.deliver("pull_request", scenario.pull_event("opened"))
    assert status == 202
    await bot.settle()
    first_hits = await metric(bot, hits)  # the base's build reading, when it answers as the head's
    first_misses = await metric(bot, misses)
    assert first_misses > 0
    assert (bot.settings.data_dir / facts.FACTS_DIR).is_dir()
    scenario.open_pull(8, {"LLAMA_CPP_VERSION": "v2\n", "README.md": "another\n"}, "bump-again")
    status, _ = await bot.deliver("pull_request", scenario.pull_event("opened", number=8))
    assert status == 202
    await bot.settle()
    assert await metric(bot, hits) > first_hits  # the diff, at least: what it serves asks for less
    assert await metric(bot, misses) == first_misses  # nothing computed again
    first, second = (
        re.sub(r"<!--.*?-->", "", scenario.bot_comments(n)[0]["body"]).split("Describes commit")[0]
        for n in (7, 8)
    )
    assert first == second  # the same checklist, heads' ids aside


def test_every_extractor_names_the_module_that_computes_it():
    """Its fingerprint covers that module's code: an extractor declared in one module and named after
    another would miss the changes of its own."""
    import importlib
    import pkgutil

    import bot

    extractors = []
    for found in pkgutil.walk_packages(bot.__path__, "bot."):
        if found.name.endswith("__main__"):
            continue
        module = importlib.import_module(found.name)
        extractors += [(found.name, v) for v in vars(module).values() if isinstance(v, facts.Extractor)]
    assert len(extractors) >= 30
    for name, extractor in extractors:
        assert extractor.module == name, extractor.name
        assert extractor.fingerprint


def _imported_sources(module: str) -> set[str]:
    """The source files (named from bot/) a module imports, transitively: `from bot.x import y` reads y's
    file when y is a module, else x's."""
    import ast

    def file_of(name: str) -> str | None:
        relative = name.removeprefix("bot.").replace(".", "/")
        return next(
            (p for p in (f"{relative}.py", f"{relative}/__init__.py") if (facts.ROOT / p).is_file()), None
        )

    seen: set[str] = set()
    pending = [module]
    while pending:
        path = file_of(pending.pop())
        if path is None or path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse((facts.ROOT / path).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot."):
                modules = [
                    f"{node.module}.{a.name}" for a in node.names if file_of(f"{node.module}.{a.name}")
                ]
                pending += modules if len(modules) == len(node.names) else [node.module, *modules]
            elif isinstance(node, ast.Import):
                pending += [a.name for a in node.names if a.name.startswith("bot.")]
    return seen


def test_the_fingerprint_of_a_reading_of_whole_trees_covers_every_module_its_code_imports(monkeypatch):
    """A change to any module the consumer model's, the wire check's or a patch's check runs, or to a package
    they parse with, makes their kept readings miss (the imports read by `ast` here, by a scan there)."""
    from bot.cache.imports import code_of
    from bot.engine import patch
    from bot.review import wire
    from bot.review.consumers import MODEL

    for extractor in (MODEL, wire.WIRE, patch.CHECKED):
        imported = _imported_sources(extractor.module)
        sources, packages = code_of(extractor.module)
        assert len(imported) > 10 and imported <= set(sources), sorted(imported - set(sources))
        assert {"pygit2", "tree_sitter"} <= set(packages)
    before = MODEL.fingerprint
    changed = "lang/syntax.py"  # imported by the consumer model through its CMake reader
    digest = facts._source_digest
    monkeypatch.setattr(facts, "_source_digest", lambda path: b"edited" if path == changed else digest(path))
    facts._fingerprint.cache_clear()
    try:
        assert MODEL.fingerprint != before
    finally:
        facts._fingerprint.cache_clear()


def test_an_entry_naming_one_of_the_bots_classes_that_is_not_plain_data_is_a_miss(tmp_path):
    """Only data classes and named tuples are loaded: another class's constructor (here the server-code
    reader's, which parses what it is given) is never called from an entry."""
    from bot.review.servercode import ServerReading

    class Calls:
        def __reduce__(self):
            return (ServerReading, ({},))

    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), "the fact")
    (entry,) = _entries(store)
    _rewrite(store, entry, _with_value(Calls()))
    assert store.get(FACT, ("blob-a",)) == (False, None)


def test_a_c_files_interface_is_read_once_for_its_text(tmp_path, monkeypatch):
    """The declarations of an upstream file are kept by its bytes: another analysis finds them without
    parsing, and a changed text is read again."""
    from bot.review import cppapi

    source = b"struct s { int a; };\nint f(int x, float y = 1);\n"
    store = FactStore(tmp_path / "facts")
    with facts.using(store):
        cppapi.interface.cache_clear()
        first = cppapi.interface(source)
        cppapi.interface.cache_clear()  # another analysis: nothing of this one's in memory
        monkeypatch.setattr(cppapi, "_Interface", lambda: pytest.fail("parsed again"))
        assert cppapi.interface(source) == first
        monkeypatch.undo()
        changed = cppapi.interface(source.replace(b"float y", b"double y"))
    assert [(d.kind, d.name, d.parameters) for d in first] == [
        ("type", "s", ()),
        ("field", "a", ()),
        ("function", "f", ("int", "float=")),
    ]
    assert changed[-1].parameters == ("int", "double=")
    assert (store.hits, store.misses) == (1, 2)


def test_the_argument_table_and_a_headers_changed_defaults_are_read_once_for_their_texts(
    tmp_path, monkeypatch
):
    """Both are read from upstream's texts alone: another analysis of the same texts finds them kept, and a
    changed text is read again."""
    from bot.review import flags, paramdefaults

    table = 'common_arg(\n    {"-c", "--ctx-size"}, "N",\n    "size of the prompt context",\n    [](common_params & params, int value) { params.n_ctx = value; }\n);\n'
    old_header = "struct common_params {\n    int32_t n_ctx = 4096;\n    float top_p = 0.95f;\n};\n"
    new_header = old_header.replace("0.95f", "0.9f")
    store = FactStore(tmp_path / "facts")
    with facts.using(store):
        flags.flag_table.cache_clear()
        first = flags.flag_table(table)
        changed = paramdefaults._header_changes("common/common.h", old_header, new_header)
        flags.flag_table.cache_clear()  # another analysis: nothing of this one's in memory
        monkeypatch.setattr(flags, "_entry_flag", lambda *a: pytest.fail("table read again"))
        monkeypatch.setattr(paramdefaults, "structs", lambda *a: pytest.fail("header read again"))
        assert flags.flag_table(table) == first
        assert paramdefaults._header_changes("common/common.h", old_header, new_header) == changed
        monkeypatch.undo()
        other = flags.flag_table(table.replace("prompt context", "context"))
    assert first["--ctx-size"].names == ("-c", "--ctx-size") and first["-c"] is first["--ctx-size"]
    assert [(c.after.name, c.old_value, c.new_value) for c in changed] == [("top_p", "0.95f", "0.9f")]
    assert other["-c"].help == "size of the context"
    assert (store.hits, store.misses) == (2, 3)


def test_the_request_fields_of_a_member_are_kept_by_the_parsers_texts(tmp_path, monkeypatch):
    from bot.review import limits

    code = 'params.penalty_last_n = json_value(data, "repeat_last_n", defaults.penalty_last_n);\n'
    parsers = {"tools/server/server-context.cpp": code}
    with facts.using(FactStore(tmp_path / "facts")):
        assert limits.fields_of(parsers)("penalty_last_n") == {"repeat_last_n"}
        monkeypatch.setattr(limits, "request_fields", lambda *a: pytest.fail("read again"))
        assert limits.fields_of(parsers)("penalty_last_n") == {"repeat_last_n"}
        monkeypatch.undo()
        renamed = {path: text.replace('"repeat_last_n"', '"last_n"') for path, text in parsers.items()}
        assert limits.fields_of(renamed)("penalty_last_n") == {"last_n"}


def test_a_changes_lines_read_the_same_from_the_diff_from_the_store_and_from_its_two_texts(tmp_path):
    """The removed and added lines (as written, and as one text for the prefilters) of each change are those
    of the two texts' own diff, whether the review reads them from the diff of the trees or from the store."""
    import pygit2

    from bot.review import upstream_changes
    from bot.review.changes import FileChange
    from tests.fixtures import RepoBuilder

    old = {
        "a.cpp": "int a;\n\nint b;\nint c;\n// note\nint d;\n",
        "gone.h": "#define GONE 1\n",
        "same.h": "x\n",
        "blank.cpp": "one\n\ntwo\n",
    }
    new = {
        "a.cpp": "int a;\nint b2;\nint c;\nint d;\nint e;\n",
        "added.h": "#define NEW 2\n\n",
        "same.h": "x\n",
        "blank.cpp": "one\ntwo\n",
    }
    up = RepoBuilder(tmp_path / "up.git")
    before = up.repo[up.commit("old", old)].peel(pygit2.Commit).tree
    after = up.repo[up.commit("new", {**new, "gone.h": None})].peel(pygit2.Commit).tree  # None: deleted
    with facts.using(FactStore(tmp_path / "facts")):
        first, again = (upstream_changes(up.repo, before, after)[0] for _ in range(2))
    for changes in (first, again):
        assert {c.old_path or c.new_path for c in changes} == {"a.cpp", "gone.h", "added.h", "blank.cpp"}
        for c in changes:
            path = c.old_path or c.new_path
            reference = FileChange.from_texts(path, old.get(path), new.get(path))
            assert (c.removed_raw, c.added_raw, c.changed_raw) == (
                reference.removed_raw,
                reference.added_raw,
                reference.changed_raw,
            ), path


# One analysis of the service: a fresh process opens the store under the data dir, as the analysis child does,
# and writes its facts (`analysis` of them, a quarter of the bound) through the store in use.
ANALYSIS = """
import random, sys
from pathlib import Path
from bot.cache import facts
from bot.cache.facts import Extractor

data_dir, analysis = Path(sys.argv[1]), int(sys.argv[2])
store = facts.store_in(data_dir)
fact, rng, written = Extractor("test-fact", 1, "bot.cache.facts"), random.Random(analysis), 0
with facts.using(store):
    while written < store._entries.max_bytes // 4:
        size = rng.randrange(1 << 10, 40 << 10)
        facts.put(fact, (f"analysis-{analysis}", str(written)), rng.randbytes(size))
        written += size
"""


def _store_file_bytes(root) -> int:
    """What the store holds on disk: its SQLite file and the write-ahead log beside it."""
    return sum(
        (root / name).stat().st_size
        for name in (entries.DB_NAME, f"{entries.DB_NAME}-wal")
        if (root / name).exists()
    )


def test_the_bound_holds_on_the_file_after_many_analyses_each_in_a_process_of_its_own(tmp_path):
    """Forty analyses, each a fresh process writing a quarter of the bound, leave the file within the bound:
    each batch written is followed by a look at the file, whichever process wrote before. No slack: the last
    look follows the last write, and the log folded into the file at exit adds no page to the two."""
    env = {**os.environ, facts.MAX_MB_SETTING: "8"}
    for analysis in range(40):
        subprocess.run(
            [sys.executable, "-c", ANALYSIS, str(tmp_path), str(analysis)],
            env=env,
            cwd=facts.ROOT.parent,
            check=True,
        )
    assert 4 << 20 < _store_file_bytes(tmp_path / facts.FACTS_DIR) <= 8 << 20  # bounded, not emptied
    assert facts.store_in(tmp_path).get(FACT, ("analysis-0", "0")) == (False, None)  # the first went


def test_a_recheck_that_finds_every_fact_within_the_hour_looks_at_no_file_size(tmp_path, monkeypatch):
    """The bound is looked at after a write only: the hot path of a warm store costs no `stat`."""
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), "the fact")
    store.close()
    again = FactStore(store.root)
    monkeypatch.setattr(entries.Entries, "file_bytes", lambda self: pytest.fail("looked at the file's size"))
    assert again.get(FACT, ("blob-a",)) == (True, "the fact")
    again.close()


@pytest.mark.parametrize("data", ["a text, not bytes", 42, 1.5])
def test_a_row_whose_data_is_not_a_blob_is_a_miss_and_is_removed(tmp_path, data):
    store = FactStore(tmp_path / "facts")
    store.put(FACT, ("blob-a",), "the fact")
    (entry,) = _entries(store)
    _rewrite(store, entry, lambda _: data)
    assert store.get(FACT, ("blob-a",)) == (False, None)
    assert _entries(store) == []
    assert store.remembered(FACT, ("blob-a",), lambda: "computed again") == "computed again"


def test_a_patchs_upstream_commits_link_to_the_upstream_its_pin_names_whatever_another_pin_kept(tmp_path):
    """The store is shared by every installation: one whose pin names the same commits at another URL finds
    nothing another kept of a patch's check, whose report links to the commits."""
    from bot.config import parse_config
    from bot.engine import analyse
    from bot.render.markdown import subject
    from bot.repos.snapshot import MemorySnapshot
    from bot.repos.upstream import Upstream
    from tests.gitutil import make_patch, upstream_pair

    enum = (
        "enum e {\n    E_A = 1,\n"
        + "".join(f"    E_{i} = {i + 10},\n" for i in range(8))
        + "    E_LAST = 30,\n};\n"
    )
    ours = enum.replace("    E_LAST = 30,\n", "    E_LAST = 30,\n    E_OURS = 31,\n")
    up = upstream_pair(
        tmp_path, {"e.h": enum}, {"e.h": enum.replace("    E_A = 1,\n", "    E_A = 1,\n    E_TOP = 31,\n")}
    )
    patches = {"llama/compat/0001.patch": make_patch(enum, ours, "e.h")}
    default = parse_config(None)

    def commit_links(url: str) -> list[str]:
        """The links the report gives of the upstream commits a hunk names: the commit's, and its pull
        request's."""
        config = dataclasses.replace(default, pins=(dataclasses.replace(default.pins[0], upstream=url),))
        with facts.using(FactStore(tmp_path / "facts")):
            report = analyse(
                config,
                MemorySnapshot({"LLAMA_CPP_VERSION": b"v1\n", **patches}),
                MemorySnapshot({"LLAMA_CPP_VERSION": b"v2\n", **patches}),
                lambda pin, refs: Upstream(up.repo, pin.upstream),
                ["LLAMA_CPP_VERSION"],
            )
        commits = [c for p in report.pins[0].patches for h in p.hunks for c in h.upstream_commits]
        return [link for c in commits for link in (c.url, *re.findall(r"\((http[^)]*)\)", subject(c)))]

    for owner in ("one", "other"):
        links = commit_links(f"https://github.com/{owner}/llama.cpp")
        assert len(links) == 2 and all(u.startswith(f"https://github.com/{owner}/llama.cpp/") for u in links)
