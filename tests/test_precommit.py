"""The real pre-commit, in a temporary git repository, runs our hook.

The hook repository is this checkout at HEAD: pre-commit clones it and
installs gnnlint in its own environment (libcst, click, rich; no torch), as a
user's pre-commit does."""
from __future__ import annotations

import json
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
    for old in [*repo.glob("*.py"), *repo.glob("*.ipynb")]:
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


def test_hook_checks_staged_notebooks(hook_repo):
    """Like ruff's hook (>= 0.6), ours takes notebooks (pre-commit's ``jupyter`` type)."""
    repo, env = hook_repo
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["import torch\n", "model = object()\n", "torch.compile(model)\n"]}
    notebook = {"cells": [cell], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                "nbformat_minor": 5}
    result = _run_hook(repo, env, "explore.ipynb", json.dumps(notebook))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "explore.ipynb:cell 1:3:" in result.stdout and "GNN010" in result.stdout, result.stdout


def test_hook_passes_on_clean_code(hook_repo):
    repo, env = hook_repo
    result = _run_hook(repo, env, "train.py", "import torch\nmodel = torch.compile(object())\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


MODELS = textwrap.dedent("""\
    import torch
    from torch_geometric.nn import ModuleDict


    class Net(torch.nn.Module):
        def __init__(self, metadata):
            super().__init__()
            self.lins = ModuleDict({et: torch.nn.Linear(4, 4) for et in metadata[1]})

        def forward(self, x_dict):
            out = self.lins[("author", "writes", "paper")](x_dict["author"])
            return out * out.sum().item()
""")
TRAIN = textwrap.dedent("""\
    import torch
    from models import Net

    model = torch.compile(Net(([], [("author", "writes", "paper")])), dynamic=True)
""")


def test_commit_of_models_py_alone_is_blocked_by_its_cross_file_findings(hook_repo):
    """train.py (committed before) compiles models.Net; a commit that stages
    only models.py must fail on what train.py makes of it. The hook's
    environment has no torch: GNN003 (torch < 2.5) fires because the
    project declares torch>=2.4, the lowest version it allows."""
    repo, env = hook_repo
    for old in repo.glob("*.py"):
        old.unlink()
    (repo / "pyproject.toml").write_text("[project]\nname = 'demo'\ndependencies = ['torch>=2.4,<3']\n")
    (repo / "train.py").write_text(TRAIN)
    (repo / "models.py").write_text("import torch\n")
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "--no-verify", "-m", "base", cwd=repo)
    (repo / "models.py").write_text(MODELS)
    _git("add", "models.py", cwd=repo)
    hook = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert hook.returncode == 0, hook.stdout + hook.stderr
    commit = subprocess.run(["git", "commit", "-m", "models"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=900)
    out = commit.stdout + commit.stderr
    assert commit.returncode != 0, out
    assert "models.py:12:" in out and "GNN001" in out, out  # .item() in the forward train.py compiles
    assert "models.py:11:" in out and "GNN003" in out, out  # from the declared torch>=2.4
    assert _git("rev-list", "--count", "HEAD", cwd=repo) == "1"  # nothing was committed
    subprocess.run([sys.executable, "-m", "pre_commit", "uninstall"], cwd=repo, env=env, capture_output=True)
    _git("reset", "-q", "--hard", cwd=repo)
    (repo / "pyproject.toml").unlink()


def test_hooks_run_serially():
    """The project index is global: pre-commit must not split the files among
    parallel gnnlint processes."""
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert text.count("require_serial: true") == text.count("- id:") == 2


def test_forced_chunks_each_get_the_project_facts(tmp_path):
    """With require_serial: false pre-commit splits the files among parallel
    processes (chunks of max(4, files/CPUs)), and train.py, which compiles
    models.Net, is not even passed (excluded from the hook); models.py's
    cross-file findings are found anyway: every run reads the project's
    facts. (Our hooks run serially regardless.)"""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "train.py").write_text(TRAIN)
    (repo / "models.py").write_text(MODELS)
    for i in range(7):
        (repo / f"util_{i}.py").write_text(f"VALUE = {i}\n")
    log = tmp_path / "argv.log"
    wrapper = tmp_path / "hook.sh"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {sys.executable} -m gnnlint check --force-exclude "$@"\n')
    wrapper.chmod(0o755)
    (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(f"""\
        repos:
          - repo: local
            hooks:
              - id: gnnlint-chunked
                name: gnnlint (chunked)
                entry: {wrapper}
                language: system
                types_or: [python, pyi]
                exclude: ^train[.]py$
                require_serial: false
    """))
    _git("add", "-A", cwd=repo)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "home"))
    env.pop("PRE_COMMIT_NO_CONCURRENCY", None)
    result = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=600)
    chunks = [line.split() for line in log.read_text().splitlines()]
    assert len(chunks) >= 2, chunks  # premise: pre-commit did split the files
    assert not any("train.py" in c for c in chunks), chunks  # train.py is never named
    assert result.returncode == 1, result.stdout + result.stderr
    assert "models.py:12:" in result.stdout and "GNN001" in result.stdout, result.stdout
