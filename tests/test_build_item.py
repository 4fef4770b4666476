"""The checklist's CPU build box: which change makes a build worth running, and what the `auto` platforms
did; and the pure decision of which `auto` platforms a head's report makes due."""

import re

from bot.config import Platform
from bot.decisions.validation import AutoValidation, auto_due, auto_refusal
from bot.model import BuildChange, Commit, PatchResult, PinReport, Report
from bot.render.checklist import build_checklist, render_comment
from bot.render.items import ticked_ids

UPSTREAM = "https://github.com/ggml-org/llama.cpp"
SHA = "1a2b3c4d5e" + "f" * 30
COMMIT = Commit(SHA, "ggml : move the CPU backend's CMake (#123)", f"{UPSTREAM}/commit/{SHA}")


def _report(changes=(), status="clean") -> Report:
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40, f"{UPSTREAM}/compare/b1...b2"
    )
    pin.patches.append(PatchResult("llama/compat/0001.patch", status, f"{status}."))
    pin.build_changes = list(changes)
    return Report([pin])


def _build_box(report, changed=("LLAMA_CPP_VERSION",), auto=None, prefix="/llama") -> str:
    body = render_comment(report, list(changed), head_sha="d" * 40, ran_at="now", prefix=prefix, auto=auto)
    (line,) = [line for line in body.splitlines() if "<!-- id:build-cpu" in line]
    return line


def test_the_box_names_the_upstream_build_file_and_the_commit_that_changed_it():
    line = _build_box(_report([BuildChange("ggml/src/ggml-cpu/CMakeLists.txt", (COMMIT,))]))
    assert line == (
        "- [ ] Build the CPU target (`cmake --build build/llama-server-cpu --target llama-server`): worth "
        "running, as upstream changed `ggml/src/ggml-cpu/CMakeLists.txt` "
        f"([`1a2b3c4d5e`]({UPSTREAM}/commit/{SHA})) <!-- id:build-cpu -->"
    )


def test_a_bump_that_changes_nothing_of_the_build_says_so_briefly():
    line = _build_box(_report())
    assert "upstream changed no CMake file or build tool Ollama's build uses" in line
    assert "worth running" not in line and "validate" not in line


def test_rebuilt_patches_and_ollamas_own_build_files_are_named_beside_upstream():
    line = _build_box(
        _report([BuildChange("CMakeLists.txt")], status="regenerated"),
        ["LLAMA_CPP_VERSION", "llama/server/CMakeLists.txt"],
    )
    assert (
        "worth running, as upstream changed `CMakeLists.txt`, the patches are rebuilt and this change "
        "edits `llama/server/CMakeLists.txt`" in line
    )
    local = _build_box(_report(), ["llama/compat/llama-ollama.cpp"])
    assert "worth running, as this change edits `llama/compat/llama-ollama.cpp`" in local


def test_ollamas_own_edits_are_named_in_path_order_whatever_order_the_paths_come_in():
    paths = [
        "llama/compat/z.cpp",
        "llama/compat/b.h",
        "LLAMA_CPP_VERSION",
        "llama/compat/a.cpp",
        "llama/compat/m.h",
    ]
    lines = {_build_box(_report(), order) for order in (paths, paths[::-1], sorted(paths))}
    assert len(lines) == 1
    assert "edits `llama/compat/a.cpp`, `llama/compat/b.h`, `llama/compat/m.h` and 1 more file" in lines.pop()


def test_many_files_are_counted_past_the_first_three():
    changes = [BuildChange(f"d{i}/CMakeLists.txt", (COMMIT,)) for i in range(7)]
    line = _build_box(_report(changes))
    assert "`d2/CMakeLists.txt` ([`1a2b3c4d5e`]" in line and "d3/" not in line
    assert line.count("[`1a2b3c4d5e`]") == 3 and "and 4 more files" in line


def test_a_hostile_upstream_path_stays_one_code_span_on_the_boxs_line():
    line = _build_box(_report([BuildChange("we`ird\n- [x] forged <!-- id:go-test -->/CMakeLists.txt")]))
    assert "``we`ird\\n- [x] forged <!-- id:go-test -->/CMakeLists.txt``" in line
    assert line.endswith("<!-- id:build-cpu -->")
    # a person's tick on the box is read back as that box's, not as the id the path spells
    assert ticked_ids(line.replace("- [ ]", "- [x]") + "\r\n") == {"build-cpu"}


def test_the_box_says_what_the_auto_platforms_did_and_offers_the_command_when_they_did_not_start():
    report = _report([BuildChange("CMakeLists.txt", (COMMIT,))])
    assert _build_box(report, auto=AutoValidation(("cpu",))).endswith(
        "; dispatched as `validate: cpu` <!-- id:build-cpu -->"
    )
    fork = _build_box(report, auto=AutoValidation((), ("cpu", "vulkan"), "fork"), prefix="!bot")
    assert "; not started for a fork's commit: comment `!bot validate cpu vulkan`" in fork
    reader = _build_box(report, auto=AutoValidation((), ("cpu",), "approval"))
    assert "nobody with write access pushed or approved this commit: comment `/llama validate cpu`" in reader
    failed = _build_box(report, auto=AutoValidation(("metal",), ("cpu",), "failed"))
    assert "dispatched as `validate: metal`; the dispatch failed (see `validate: cpu`)" in failed
    waiting = _build_box(report, auto=AutoValidation((), ("cpu",), "patches"))
    assert "`validate: cpu` starts once the committed patches apply" in waiting


def test_the_box_is_a_persons_to_tick():
    (box,) = [
        i for i in build_checklist(_report([BuildChange("CMakeLists.txt")]), []).steps if i.id == "build-cpu"
    ]
    assert not box.checked and not box.by_bot
    (ticked,) = [i for i in build_checklist(_report(), [], ticked={"build-cpu"}).steps if i.id == "build-cpu"]
    assert ticked.checked


CPU = Platform("cpu", "build.yaml", {"platform": "cpu"}, auto="build")
METAL = Platform("metal", "build.yaml", {"platform": "metal"})


def test_auto_platforms_are_due_once_per_head_when_upstreams_build_changed_and_the_patches_apply():
    changed = _report([BuildChange("CMakeLists.txt")])
    assert auto_due([CPU, METAL], changed, set()) == ([CPU], AutoValidation())
    assert auto_due([CPU, METAL], changed, {"cpu"}) == ([], AutoValidation(("cpu",)))
    assert auto_due([CPU, METAL], _report(), set()) == ([], None)  # nothing of the build changed
    assert auto_due([METAL], changed, set()) == ([], None)  # no platform is `auto`
    conflict = _report([BuildChange("CMakeLists.txt")], status="conflict")
    assert auto_due([CPU], conflict, set()) == ([], AutoValidation((), ("cpu",), "patches"))


def test_a_bump_platform_is_due_whenever_the_head_moves_a_pin_build_change_or_not():
    probe = Platform("contract-probe", "probe.yaml", auto="bump")
    assert auto_due([CPU, probe], _report(), set()) == ([probe], AutoValidation())
    same = _report()
    same.pins[0].new_ref = same.pins[0].old_ref  # a head that only edits a patch
    assert auto_due([CPU, probe], same, set()) == ([], None)
    box = _build_box(_report(), auto=AutoValidation(("contract-probe",)))
    assert box.endswith(
        "upstream changed no CMake file or build tool Ollama's build uses; dispatched as "
        "`validate: contract-probe` <!-- id:build-cpu -->"
    )


def test_only_a_head_in_the_base_repository_that_a_writer_approved_is_dispatched():
    assert auto_refusal(fork=False, approved=True) is None
    assert auto_refusal(fork=True, approved=True) == "fork"
    assert auto_refusal(fork=False, approved=False) == "approval"


def test_the_box_wording_is_one_line_without_stray_markup():
    line = _build_box(_report([BuildChange("CMakeLists.txt", (COMMIT,))]), auto=AutoValidation(("cpu",)))
    assert re.fullmatch(r"- \[ \] Build the CPU target .*<!-- id:build-cpu -->", line)


def test_build_files_are_known_by_their_kind_wherever_ollamas_tree_keeps_them():
    moved = ["build/llama-server/CMakeLists.txt", "internal/compat/hooks.cpp", "patches/x/0001-fix.patch"]
    line = _build_box(_report(), ["README.md", "server/routes.go", *moved])
    assert (
        "this change edits `build/llama-server/CMakeLists.txt`, `internal/compat/hooks.cpp` and "
        "`patches/x/0001-fix.patch`" in line
    )
    assert "README" not in line and "routes.go" not in line
