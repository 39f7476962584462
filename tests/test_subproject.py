"""Hierarchical config, `extend`, and stdin as editors use it (issue 12)."""
from __future__ import annotations

import textwrap
from pathlib import Path

from click.testing import CliRunner

from gnnlint.cli import main
from tests.project_files import run
from gnnlint.config import load_settings

HAZARD = textwrap.dedent("""\
    import torch

    class GCN(torch.nn.Module):
        def forward(self, x):
            return x * x.sum().item()

    model = GCN()
    torch.compile(model)
    fast = torch.compile(GCN())  # the bare compile above compiles nothing; this one does
""")




def _codes(output: str, path: str) -> set[str]:
    return {line.split()[1] for line in output.splitlines() if line.startswith(path + ":")}


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\nignore = ['GNN010']\n")
    (tmp_path / "a.py").write_text(HAZARD)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[tool.gnnlint]\nignore = ['GNN001']\n")
    (sub / "b.py").write_text(HAZARD)
    return tmp_path


def test_each_file_uses_its_closest_config(tmp_path):
    root = _tree(tmp_path)
    for args in (["."], ["sub/b.py", "a.py"], ["sub"]):
        out = run(["check", *args, "--no-cache"], root).output
        assert _codes(out, "sub/b.py") == {"GNN010"}, (args, out)
        if args != ["sub"]:
            assert _codes(out, "a.py") == {"GNN001"}
    # inside sub/, its own [tool.gnnlint] marks the project root
    assert _codes(run(["check", "b.py", "--no-cache"], root / "sub").output, "b.py") == {"GNN010"}


def test_config_overrides_the_hierarchy(tmp_path):
    root = _tree(tmp_path)
    out = run(["check", ".", "--no-cache", "--config", "pyproject.toml"], root).output
    assert _codes(out, "sub/b.py") == {"GNN001"} and _codes(out, "a.py") == {"GNN001"}
    out = run(["check", ".", "--no-cache", "--isolated"], root).output
    assert _codes(out, "sub/b.py") == {"GNN001", "GNN010"}


def test_extend_shares_a_config(tmp_path):
    root = _tree(tmp_path)
    (root / "sub" / "pyproject.toml").write_text(
        "[tool.gnnlint]\nextend = '../pyproject.toml'\nextend-select = ['GNN010']\nignore = ['GNN001']\n")
    settings = load_settings(cwd=root / "sub")
    # the base ignores GNN010, this file selects it again and ignores GNN001
    assert "GNN010" in settings.enabled_codes and "GNN001" not in settings.enabled_codes
    (root / "sub" / "pyproject.toml").write_text("[tool.gnnlint]\nextend = '../pyproject.toml'\n")
    settings = load_settings(cwd=root / "sub")
    assert "GNN010" not in settings.enabled_codes and "GNN001" in settings.enabled_codes
    assert settings.origins["ignore"] == str(root / "pyproject.toml")
    (root / "sub" / "pyproject.toml").write_text("[tool.gnnlint]\nextend = 'nope.toml'\n")
    out = run(["check", ".", "--no-cache"], root)
    assert out.exit_code == 2 and "nope.toml" in out.output


def test_cli_extend_select_beats_the_config(tmp_path):
    root = _tree(tmp_path)
    out = run(["check", "a.py", "--no-cache", "--extend-select", "GNN010"], root).output
    assert _codes(out, "a.py") == {"GNN001", "GNN010"}


def test_stdin_fix_writes_the_fixed_source_to_stdout(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    source = "import torch\nmodel = torch.nn.Linear(2, 2)\ntorch.compile(model)\n"
    result = CliRunner().invoke(main, ["check", "--fix", "-", "--stdin-filename", str(tmp_path / "x.py"),
                                       "--no-cache"], input=source.encode())
    assert result.stdout == "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel = torch.compile(model)\n"
    assert "Fixed 1 finding" in result.stderr
    assert result.exit_code == 0
    # what cannot be fixed is reported on stderr, the source still on stdout
    result = CliRunner().invoke(main, ["check", "--fix", "-", "--stdin-filename", str(tmp_path / "y.py"),
                                       "--no-cache"], input=HAZARD.encode())
    assert result.stdout == HAZARD.replace("\ntorch.compile(model)\n", "\nmodel = torch.compile(model)\n")
    assert "GNN001" in result.stderr and "GNN001" not in result.stdout
    assert result.exit_code == 1


def test_force_exclude_applies_to_stdin_filename(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\nextend-exclude = ['gen/']\n")
    name = str(tmp_path / "gen" / "x.py")
    args = ["check", "-", "--stdin-filename", name, "--no-cache"]
    assert run(args, tmp_path, input=HAZARD.encode()).exit_code == 1
    result = run([*args, "--force-exclude"], tmp_path, input=HAZARD.encode())
    assert result.exit_code == 0 and "GNN" not in result.output
    result = run([*args, "--force-exclude", "--fix"], tmp_path, input=HAZARD.encode())
    assert result.stdout == HAZARD  # an editor gets its buffer back as it was


def test_show_settings_names_where_each_value_came_from(tmp_path):
    root = _tree(tmp_path)
    (root / "sub" / "pyproject.toml").write_text(
        "[tool.gnnlint]\nextend = '../pyproject.toml'\nassume-compiled = 'modules'\n")
    out = run(["check", "--show-settings", "sub/b.py", "--torch-version", "2.4"], root)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert f"config: {root / 'sub' / 'pyproject.toml'}" in lines
    assert f"assume-compiled = 'modules'  # {root / 'sub' / 'pyproject.toml'}" in lines
    assert f"ignore = ['GNN010']  # {root / 'pyproject.toml'}" in lines  # from the extended base
    assert "torch-version = '2.4'  # command line" in lines
    assert "target torch: 2.4  # set on the command line" in lines
    assert "GNN010" not in next(line for line in lines if line.startswith("enabled codes:"))


def test_show_files_lists_and_explains(tmp_path):
    root = _tree(tmp_path)
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("x = 1\n")
    (root / "skip.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("skip.py\n")
    (root / ".git").mkdir()
    out = run(["check", "--show-files"], root)
    assert out.stdout.split() == ["a.py", "sub/b.py"]
    out = run(["check", "--show-files", "-v"], root)
    assert "excluded: build/ (exclude / extend-exclude)" in out.stderr
    assert "excluded: skip.py (.gitignore)" in out.stderr


def test_a_subproject_excludes_apply_below_it(tmp_path):
    root = _tree(tmp_path)
    (root / "sub" / "pyproject.toml").write_text("[tool.gnnlint]\nextend-exclude = ['gen_*.py']\n")
    (root / "sub" / "gen_x.py").write_text(HAZARD)
    (root / "gen_y.py").write_text(HAZARD)  # the root's config does not exclude it
    out = run(["check", "--show-files"], root)
    assert out.stdout.split() == ["a.py", "gen_y.py", "sub/b.py"]
    assert run(["check", "--show-files", "sub"], root).stdout.split() == ["sub/b.py"]


def test_a_broken_config_elsewhere_does_not_stop_a_one_file_run(tmp_path):
    root = _tree(tmp_path)
    (root / "other").mkdir()
    (root / "other" / "pyproject.toml").write_text("[tool.gnnlint]\nselct = ['GNN001']\n")
    one = run(["check", "a.py", "--no-cache"], root)
    assert one.exit_code == 1 and _codes(one.output, "a.py") == {"GNN001"}
    assert "not read for cross-file facts" in one.stderr and "selct" in one.stderr
    whole = run(["check", ".", "--no-cache"], root)  # where it applies, it is an error
    assert whole.exit_code == 2 and "selct" in whole.output
