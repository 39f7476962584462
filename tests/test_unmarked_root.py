"""A file with nothing marking its project (no pyproject.toml, no .git above
it): the project root is only a guess -- its folder or the current one -- and
may be a home folder or /tmp. A small guessed root is still indexed for
cross-file facts; a large one is not walked to its end (a note says so and
how to mark the project)."""
from __future__ import annotations

from pathlib import Path

import pytest

import gnnlint.engine
from gnnlint.config import find_project_root
from tests.project_files import finding_lines, run, write_project

FILES = {
    "pkg/__init__.py": "",
    "pkg/model.py": """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, x):
                if x.sum().item() > 0:
                    return x
                return -x
        """,
    "train.py": """\
        import torch
        from pkg.model import Net

        model = torch.compile(Net())
        """,
}


@pytest.fixture
def unmarked(tmp_path) -> Path:
    root = write_project(tmp_path / "scripts", FILES)
    assert find_project_root(root)[1] == "cwd", "premise: nothing marks a project above the temporary folder"
    return root


def test_a_small_unmarked_folder_is_indexed(unmarked):
    result = run(["check", "--no-cache", "--output-format", "concise", "pkg/model.py"], unmarked)
    assert result.exit_code == 1, result.output
    assert any("GNN001" in line and line.startswith("pkg/model.py:6:") for line in finding_lines(result.output))
    assert "holds more than" not in result.output


def test_a_large_unmarked_folder_is_not_walked_and_the_user_is_told(unmarked, monkeypatch):
    monkeypatch.setattr(gnnlint.engine, "UNMARKED_ROOT_LIMIT", 2)
    result = run(["check", "--no-cache", "--output-format", "concise", "pkg/model.py"], unmarked)
    assert result.exit_code == 0, result.output
    assert "holds more than 2 Python files" in result.output
    assert "add a pyproject.toml" in result.output


def test_a_marker_lifts_the_limit(unmarked, monkeypatch):
    monkeypatch.setattr(gnnlint.engine, "UNMARKED_ROOT_LIMIT", 2)
    (unmarked / "pyproject.toml").write_text("[project]\nname = 'scripts'\n")
    result = run(["check", "--no-cache", "--output-format", "concise", "pkg/model.py"], unmarked)
    assert result.exit_code == 1, result.output
    assert "holds more than" not in result.output


def test_fix_gets_the_same_note(unmarked, monkeypatch):
    monkeypatch.setattr(gnnlint.engine, "UNMARKED_ROOT_LIMIT", 2)
    result = run(["fix", "--diff", "pkg/model.py"], unmarked)
    assert "holds more than 2 Python files" in result.output
