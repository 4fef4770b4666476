"""`make bench`'s synthetic review upstream has llama.cpp's shape, so its figures move when the real ones do."""

from __future__ import annotations

import posixpath

import pygit2

from bench.synthetic import build_review
from bot.review import upstream_changes


def test_the_synthetic_upstream_has_large_cpp_files_a_deep_cmake_tree_and_gguf_binaries(tmp_path):
    up = build_review(tmp_path)
    old, new = (up.repo.revparse_single(t).peel(pygit2.Commit) for t in ("v1", "v2"))
    sizes = {path: len(data) for path, data in up.files.items()}
    cmake = [p for p in sizes if posixpath.basename(p) == "CMakeLists.txt" or p.endswith(".cmake")]
    assert 3000 <= len(sizes) <= 3600  # llama.cpp has 3,310 files
    assert len(cmake) >= 80 and max(p.count("/") for p in cmake) >= 6
    assert sum(1 for s in sizes.values() if s > 500_000) >= 4  # ggml-vulkan.cpp, ggml-opencl.cpp, ...

    diff = old.tree.diff_to_tree(new.tree)
    changed = {d.new_file.path for d in diff.deltas}
    assert 350 <= len(changed) <= 450 and 55_000 <= diff.stats.insertions + diff.stats.deletions <= 80_000
    assert sum(1 for p in changed if sizes[p] > 300_000) >= 4  # the bump keeps changing the large files
    assert any(p in changed for p in cmake)

    gguf = [p for p in sizes if p.endswith(".gguf")]
    assert len(gguf) >= 5 and min(sizes[p] for p in gguf) >= 1 << 20
    assert "models/ggml-vocab-0.gguf" in changed  # and the review's diff leaves the binary out
    changes, _ = upstream_changes(up.repo, old.tree, new.tree)
    assert not any(c.path.endswith(".gguf") for c in changes) and len(changes) >= len(changed) - 1
