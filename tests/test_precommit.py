"""The real pre-commit, in a temporary git repository, runs our hook."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _git(*args, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, dict]:
    if shutil.which("git") is None:
        pytest.fail("git is required for the pre-commit test")
    head = _git("rev-parse", "HEAD", cwd=ROOT)
    repo = tmp_path_factory.mktemp("precommit-repo")
    _git("init", "-q", cwd=repo)
    _git("config", "user.email", "t@example.com", cwd=repo)
    _git("config", "user.name", "t", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(f"""\
        repos:
          - repo: {ROOT}
            rev: {head}
            hooks:
              - id: gnnlint
    """))
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")))
    env.pop("PYTHONPATH", None)
    return repo, env


def _run_hook(repo: Path, env: dict, filename: str, source: str) -> subprocess.CompletedProcess:
    for old in repo.glob("*.py"):
        old.unlink()
    (repo / filename).write_text(source)
    _git("add", "-A", cwd=repo)
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def test_hook_fails_on_hazard(hook_repo):
    repo, env = hook_repo
    result = _run_hook(repo, env, "train.py", "import torch\nmodel = object()\ntorch.compile(model)\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "GNN010" in result.stdout and "is never compiled" in result.stdout


def test_hook_passes_on_clean_code(hook_repo):
    repo, env = hook_repo
    result = _run_hook(repo, env, "train.py", "import torch\nmodel = torch.compile(object())\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
