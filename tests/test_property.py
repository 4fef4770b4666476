"""Property: upstream edits that leave a hunk's own lines alone never lose the patch."""

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
    return "int f(void) {\n" + "".join(lines) + "}\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(new=upstream_edits(), added=st.lists(st.sampled_from(["hook();", "ollama_extra(ctx);", "if (x) y();"]),
                                              min_size=1, max_size=3))
def test_regenerated_patch_applies_and_keeps_every_added_line(new, added):
    old = "int f(void) {\n" + "".join(LINES) + "}\n"
    ours = "int f(void) {\n" + "".join(LINES[:AT]) + "".join(f"    {a}\n" for a in added) + "".join(LINES[AT:]) + "}\n"
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
        subprocess.run(["git", "apply", "--check", str(tmp_path / "p.patch")], cwd=work, check=True,
                       capture_output=True)
        subprocess.run(["git", "apply", str(tmp_path / "p.patch")], cwd=work, check=True, capture_output=True)
        text = (work / "f.c").read_text()
        for line in added:
            assert text.count(line) == added.count(line) + new.count(line)
