"""Properties: upstream edits that leave a hunk's own lines alone never lose the patch, and entries appended
before a list's terminator stay the last ones."""

import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.gitutil import make_patch, run, upstream_pair

LINES = [f"    stmt_{i}();\n" for i in range(40)]
AT = 20  # the patch inserts after LINES[AT - 1]; its context is LINES[AT-3:AT+3]


@st.composite
def upstream_edits(draw):
    """Insertions and deletions away from the hunk, and re-indentation of its context lines."""
    lines = list(LINES)
    for index in sorted(draw(st.sets(st.integers(AT + 4, 39), max_size=4)), reverse=True):
        del lines[index]
    for index in sorted(draw(st.sets(st.integers(0, AT - 5), max_size=4)), reverse=True):
        if draw(st.booleans()):
            del lines[index]
        else:
            lines.insert(index, f"    upstream_{index}();\n")
    start = lines.index(LINES[AT - 3])
    for k in draw(st.sets(st.integers(0, 5), max_size=6)):  # the hunk's six context lines
        lines[start + k] = "    " + lines[start + k]
    at = lines.index(LINES[AT]) if LINES[AT] in lines else lines.index("    " + LINES[AT])
    for n in range(draw(st.integers(0, 2))):  # upstream inserting exactly where the patch inserts
        lines.insert(at + n, f"    upstream_here_{n}();\n")
    return "int f(void) {\n" + "".join(lines) + "}\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    new=upstream_edits(),
    added=st.lists(st.sampled_from(["hook();", "ollama_extra(ctx);", "if (x) y();"]), min_size=1, max_size=3),
)
def test_regenerated_patch_applies_and_keeps_every_added_line(new, added):
    old = "int f(void) {\n" + "".join(LINES) + "}\n"
    ours = (
        "int f(void) {\n"
        + "".join(LINES[:AT])
        + "".join(f"    {a}\n" for a in added)
        + "".join(LINES[AT:])
        + "}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
        (pin,) = run(up, {"llama/compat/0001.patch": make_patch(old, ours, "f.c")}).pins
        (result,) = pin.patches
        event(result.status)
        assert result.status in ("clean", "offset", "regenerated", "fuzzy"), result.message
        work = tmp_path / "work"
        work.mkdir()
        (work / "f.c").write_text(new)
        (tmp_path / "p.patch").write_bytes(result.new_text)
        subprocess.run(
            ["git", "apply", "--check", str(tmp_path / "p.patch")], cwd=work, check=True, capture_output=True
        )
        subprocess.run(["git", "apply", str(tmp_path / "p.patch")], cwd=work, check=True, capture_output=True)
        text = (work / "f.c").read_text()
        for line in added:
            assert text.count(line) == added.count(line) + new.count(line)
        if "upstream_here_" in new:  # both inserted at one place: upstream's lines first, ours after
            ours_first = text.index(f"    {added[0]}\n", text.index(LINES[AT - 1].strip()))
            assert text.rindex("upstream_here_") < ours_first
            assert result.status == "fuzzy"


ENTRIES = [f"    E_{i},\n" for i in range(30)]


@st.composite
def appended_enums(draw):
    """Upstream appends entries before the enum's terminator, and adds or drops entries far above."""
    entries = list(ENTRIES)
    for index in sorted(draw(st.sets(st.integers(0, 20), max_size=4)), reverse=True):
        if draw(st.booleans()):
            del entries[index]
        else:
            entries.insert(index, f"    E_UP_{index},\n")
    appended = [f"    E_NEW_{i},\n" for i in range(draw(st.integers(1, 3)))]
    return "enum e {\n" + "".join(entries + appended) + "    E_UNKNOWN,\n};\n\nint after(void);\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(new=appended_enums(), ours=st.integers(1, 2), context=st.integers(1, 3), merge_base=st.booleans())
def test_entries_appended_before_a_terminator_stay_last(new, ours, context, merge_base):
    """Through the merge (the old ref is known) and through relocation (it is not, nor are index lines),
    our entries land after upstream's new last entry, right before the terminator."""
    old = "enum e {\n" + "".join(ENTRIES) + "    E_UNKNOWN,\n};\n\nint after(void);\n"
    entries = "".join(f"    E_OURS_{i},\n" for i in range(ours))
    mine = old.replace("    E_UNKNOWN,\n", entries + "    E_UNKNOWN,\n")
    patch = make_patch(old, mine, "e.h", context)
    if not merge_base:
        patch = b"".join(line for line in patch.splitlines(keepends=True) if not line.startswith(b"index "))
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        up = upstream_pair(tmp_path, {"e.h": old}, {"e.h": new})
        (pin,) = run(
            up, {"llama/compat/0001.patch": patch}, old_ref="v1" if merge_base else "no such ref"
        ).pins
        (result,) = pin.patches
        event(f"{result.status} via {'merge' if merge_base else 'relocation'}")
        assert result.status == "fuzzy", result.message
        work = tmp_path / "work"
        work.mkdir()
        (work / "e.h").write_text(new)
        (tmp_path / "p.patch").write_bytes(result.new_text)
        subprocess.run(
            ["git", "apply", "--check", str(tmp_path / "p.patch")], cwd=work, check=True, capture_output=True
        )
        subprocess.run(["git", "apply", str(tmp_path / "p.patch")], cwd=work, check=True, capture_output=True)
        text = (work / "e.h").read_text()
        last_new = new.split("    E_UNKNOWN,\n")[0].rsplit("\n", 2)[-2] + "\n"
        assert last_new + entries + "    E_UNKNOWN,\n};\n" in text
