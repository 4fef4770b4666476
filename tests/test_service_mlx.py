"""The service on a pull request bumping only MLX_VERSION: Ollama's real MLX bump that broke mlx-c."""

from __future__ import annotations

import dataclasses

import pygit2
import pytest

from tests.conftest import NAME, OWNER, Bot, bot_settings
from tests.fakegithub import commit
from tests.mlxcases import mlx_case
from tests.test_service_e2e import runs_by_name


@pytest.fixture
async def mlx_pull(fake_github, scenario, tmp_path):
    """PR 8: the first push of Ollama's MLX bump, on a repository holding the base's files."""
    case = mlx_case(tmp_path, "mlx-breaks-mlx-c")
    git = pygit2.init_repository(str(tmp_path / "ollama-mlx.git"), bare=True)
    base = commit(git, case.ollama("base"), ref="refs/heads/main", message="pin MLX")
    head = commit(git, case.ollama("first-push"), parents=[base], ref="refs/heads/mlx", message="mlx update")
    fake_github.repos.pop(f"{OWNER}/{NAME}", None)
    fake_github.add_repo(OWNER, NAME, git)
    fake_github.add_pull(OWNER, NAME, 8, head, "mlx")
    settings = bot_settings(fake_github, scenario, tmp_path / "var")
    rewrites = f"{case.mlx.path}=https://github.com/ml-explore/mlx,{case.mlx_c.path}=https://github.com/ml-explore/mlx-c"
    running = await Bot(dataclasses.replace(settings, url_instead_of=rewrites)).start()
    yield (
        running,
        dataclasses.replace(
            scenario, git=git, base_sha=str(base), head_sha=str(head), number=8, branch="mlx"
        ),
    )
    await running.close()


async def test_an_mlx_only_bump_gets_mlx_check_runs_and_an_mlx_checklist(mlx_pull):
    bot, scenario = mlx_pull
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    runs = runs_by_name(scenario, scenario.head_sha)
    assert set(runs) == {"mlx: patches", "mlx: upstream review"}
    assert runs["mlx: upstream review"]["conclusion"] == "neutral"  # findings to read; success without
    (comment,) = scenario.bot_comments()
    body = comment["body"]
    assert "1 high review item to check." in body
    assert "`mlx-c:mlx/c/compile.cpp:54`" in body
    assert "-DOLLAMA_MLX_BACKENDS=cuda_v13" in body and "id:platform-mlx-cuda" in body
    assert "go generate ./x/mlxrunner/mlx" in body
    assert "llama/server" not in body and "id:platform-rocm" not in body and "llama.cpp" not in body
