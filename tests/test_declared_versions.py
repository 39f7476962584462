"""Target versions from the project's declared dependencies (issue 12): a
pre-commit environment has no torch, so the lowest version the project allows
is the one to warn for."""
from __future__ import annotations

import textwrap

import pytest

from gnnlint import versions
from gnnlint.versions import _declared_in, lowest_allowed, target_version


@pytest.mark.parametrize("spec, lowest", [
    (">=2.2,<3", "2.2"), ("==2.4.*", "2.4"), ("=2.4", "2.4"), ("^2.4", "2.4"), ("~=2.1.0", "2.1.0"),
    ("<3", None), ("", None), ("<=2.6", None), ("!=2.3,>=2.1", "2.1"), (">=2.5; python_version>'3.8'", "2.5"),
])
def test_lowest_allowed(spec, lowest):
    assert lowest_allowed(spec) == lowest


def test_every_declaration_file_is_read_and_the_lowest_wins(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        dependencies = ["numpy", "torch>=2.3"]
        [project.optional-dependencies]
        graph = ["torch-geometric>=2.5"]
    """))
    (tmp_path / "requirements-dev.txt").write_text("# pinned\ntorch==2.4.1  # dev\n-e .\n")
    (tmp_path / "environment.yml").write_text("dependencies:\n  - pytorch::pytorch=2.2\n  - pip:\n    - pyg==2.6\n")
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    torch_geometric>=2.4.0\n")
    torch = _declared_in(str(tmp_path), "torch")
    assert sorted(v for v, _ in torch) == ["2.2", "2.3", "2.4.1"]
    pyg = _declared_in(str(tmp_path), "torch_geometric")
    assert sorted(v for v, _ in pyg) == ["2.4.0", "2.5", "2.6"]


def test_installed_wins_then_declared_then_newest(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("torch>=2.1\n")
    monkeypatch.setattr(versions, "installed_version", lambda dist: None)
    target_version.cache_clear()
    try:
        version, origin = target_version("torch", str(tmp_path))
        assert version == "2.1" and "requirements.txt" in origin and "'torch>=2.1'" in origin
        assert target_version("torch_geometric", str(tmp_path))[0] is None  # not declared: newest
        monkeypatch.setattr(versions, "installed_version", lambda dist: "2.13.0")
        target_version.cache_clear()
        assert target_version("torch", str(tmp_path)) == ("2.13.0", "installed torch 2.13.0 (its metadata)")
    finally:
        target_version.cache_clear()
