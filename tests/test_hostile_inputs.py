"""What a hostile pull request can inflate inside the engine is bounded: `python -m bot check` on each attack
in a child held to an address space and CPU seconds, its peak RSS and wall time read after it ends."""

import json

from bot.patches.binarypatch import BINARY_BYTES
from bot.patches.patchsafety import PATCH_BYTES
from tests import hostile

ADDRESS_SPACE = 2 << 30  # an unbounded run dies here instead of taking the machine's memory
CPU_SECONDS = 30  # and here instead of its time
PEAK_RSS = 400 << 20
_OVER_BINARY_CAP = (
    "Not applied: with its binary files the pin's patches would carry 256 MiB of binary data, over the "
    f"{BINARY_BYTES >> 20} MiB they may carry in all."
)
_PAST_DECLARED = "Malformed patch: claim.bin: binary patch data inflates past the 100 bytes it declares."
_OVER_PATCH_CAP = (
    f"Not checked: {hostile.PATCH_DIR}/0001-big.patch is 30 MiB, over the {PATCH_BYTES >> 20} MiB a carried "
    "patch may have."
)


def _check(case: hostile.Case) -> tuple[hostile.Run, dict]:
    run = hostile.check_bounded(case, ADDRESS_SPACE, CPU_SECONDS)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    (pin,) = json.loads(run.stdout)["pins"]
    return run, pin


def _patches(pin: dict) -> dict[str, tuple[str, str]]:
    return {p["path"].rsplit("/", 1)[1]: (p["status"], p["message"]) for p in pin["patches"]}


def test_a_binary_patch_of_compressed_zeros_is_an_error_without_inflating_it(tmp_path):
    run, pin = _check(hostile.binary_case(tmp_path, 256 << 20))  # a 330 KiB patch, 256 MiB inflated
    assert run.returncode == 1
    patches = _patches(pin)
    assert patches["0001-zeros.patch"] == ("error", _OVER_BINARY_CAP)
    assert patches["0002-small-claim.patch"] == ("error", _PAST_DECLARED)
    assert run.peak_rss < PEAK_RSS


def test_a_patch_file_over_the_cap_is_an_error_and_never_read(tmp_path):
    run, pin = _check(hostile.oversized_case(tmp_path, 30 << 20))
    assert run.returncode == 1
    assert _patches(pin)["0001-big.patch"] == ("error", _OVER_PATCH_CAP)
    assert run.peak_rss < PEAK_RSS


def test_a_cmake_variable_that_doubles_is_left_unknown_and_named(tmp_path):
    run, pin = _check(hostile.cmake_case(tmp_path, 28))  # 2.5 GiB by the last line, were it kept
    assert run.returncode == 0
    assert _patches(pin) == {"0001-readme.patch": ("clean", "Applies exactly as it is.")}
    (finding,) = [f for f in pin["findings"] if "CMake value" in f["title"]]
    assert finding["title"] == "A CMake value over 64 KiB was left unknown" and finding["severity"] == "info"
    assert [(r["path"], r["line"]) for r in finding["local_refs"]] == [
        ("CMakeLists.txt", 14),
        ("CMakeLists.txt", 28),
    ]
    assert run.peak_rss < PEAK_RSS


def test_hunks_that_match_nowhere_do_not_rescan_the_file_each(tmp_path):
    run, pin = _check(hostile.hunks_case(tmp_path, 40_000, 400))
    assert run.returncode == 1
    patches = _patches(pin)
    assert patches["0001-create.patch"][0] == "clean"
    status, message = patches["0002-stray.patch"]
    assert status == "conflict" and message.startswith("400 of 400 hunks cannot be placed on b2: hunk 1 ")
    assert run.seconds < 20
