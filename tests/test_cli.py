"""End-to-end behaviour of `gnnlint check` and friends, through the real CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from gnnlint.cli import main

ROOT = Path(__file__).resolve().parent.parent

HAZARD = textwrap.dedent("""\
    import torch

    class GCN(torch.nn.Module):
        def forward(self, x):
            return x * x.sum().item()

    model = GCN()
    torch.compile(model)
    fast = torch.compile(GCN())  # the bare compile above compiles nothing; this one does
""")
CLEAN = textwrap.dedent("""\
    import torch

    model = torch.compile(torch.nn.Linear(2, 2))
    print("ok")
""")


def run(args, cwd: Path, input: bytes | None = None, env: dict | None = None):
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, args, input=input, env=env, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_exit_codes(project: Path):
    assert run(["check", "clean.py", "--no-cache"], project).exit_code == 0
    result = run(["check", "hazard.py", "--no-cache"], project)
    assert result.exit_code == 1
    assert run(["check", "hazard.py", "--no-cache", "--exit-zero"], project).exit_code == 0


def test_concise_format_sorted_and_one_based(project: Path):
    result = run(["check", ".", "--no-cache", "--output-format", "concise"], project)
    lines = [l for l in result.output.splitlines() if l.startswith("hazard.py")]
    assert lines == [
        "hazard.py:5:20: GNN001 warning: `.item()` breaks the graph in the compiled forward of `GCN`. Keep the value "
        "on the device or move it out of the compiled code.",
        "hazard.py:8:1: GNN010 [*] error: The result of `torch.compile(model)` is discarded, so `model` is never "
        "compiled. Assign it: `model = torch.compile(model)`.",
    ]
    assert "Found 2 findings (1 fixable" in result.output


def test_output_format_env_and_file(project: Path, tmp_path: Path):
    out = project / "report.json"
    result = run(["check", "hazard.py", "--no-cache", "-o", str(out)], project,
                 env={"GNNLINT_OUTPUT_FORMAT": "json"})
    assert result.exit_code == 1
    data = json.loads(out.read_text())
    assert {d["code"] for d in data} == {"GNN001", "GNN010"}
    first = data[0]
    assert set(first) >= {"code", "name", "message", "filename", "location", "end_location", "fix",
                          "noqa_row", "url", "severity"}
    assert first["location"] == {"row": 5, "column": 20}


def test_github_format(project: Path):
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "github"], project)
    assert result.output.startswith("::warning title=gnnlint (GNN001),file=hazard.py,line=5,col=20,endLine=5,endColumn=")


def test_select_ignore_prefix(project: Path):
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise", "--select", "GNN01"], project)
    assert "GNN001" not in result.output and "GNN010" in result.output
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise", "--ignore", "GNN010"], project)
    assert "GNN010" not in result.output and "GNN001" in result.output
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise", "--select", "GNN001",
                  "--extend-select", "GNN010"], project)
    assert "GNN001" in result.output and "GNN010" in result.output


def test_config_from_pyproject_and_cli_wins(project: Path):
    (project / "pyproject.toml").write_text('[tool.gnnlint]\nignore = ["GNN001"]\n')
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise"], project)
    assert "GNN001" not in result.output and "GNN010" in result.output
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise", "--select", "ALL"], project)
    assert "GNN001" in result.output


@pytest.mark.parametrize("toml,needle", [
    ('[tool.gnnlint]\nselct = ["GNN001"]\n', "selct"),
    ('[tool.gnnlint]\nselect = ["GNN999"]\n', "GNN999"),
    ('[tool.gnnlint]\nassume-compiled = "sometimes"\n', "assume-compiled"),
    ('[tool.gnnlint\n', "pyproject.toml"),
])
def test_bad_config_exits_2_naming_the_key(project: Path, toml: str, needle: str):
    (project / "pyproject.toml").write_text(toml)
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "hazard.py", "--no-cache"],
                            cwd=project, capture_output=True, text=True)
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_cli_code_exits_2(project: Path):
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "--select", "XYZ1"],
                            cwd=project, capture_output=True, text=True)
    assert result.returncode == 2 and "XYZ1" in result.stderr


def test_noqa_forms(project: Path):
    src = HAZARD.replace("x.sum().item()", "x.sum().item()  # noqa: GNN001").replace(
        "torch.compile(model)", "torch.compile(model)  # noqa")
    (project / "hazard.py").write_text(src)
    assert run(["check", "hazard.py", "--no-cache"], project).exit_code == 0
    (project / "hazard.py").write_text("# gnnlint: noqa: GNN010\n" + HAZARD)
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise"], project)
    assert "GNN010" not in result.output and "GNN001" in result.output


def test_noqa_on_first_line_of_multiline_statement(project: Path):
    src = textwrap.dedent("""\
        import torch
        model = torch.compile(model)
        total = 0.0
        for batch in loader:
            loss = model(batch.x).sum()
            loss.backward()
            optimizer.step()
            total = total + float(  # noqa: GNN013
                loss
            )
    """)
    (project / "loop.py").write_text(src)
    assert run(["check", "loop.py", "--no-cache"], project).exit_code == 0
    (project / "loop.py").write_text(src.replace("  # noqa: GNN013", ""))
    assert run(["check", "loop.py", "--no-cache"], project).exit_code == 1


def test_syntax_error_is_a_finding_and_run_continues(project: Path):
    (project / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    result = run(["check", ".", "--no-cache", "--output-format", "concise"], project)
    assert result.exit_code == 1
    assert "broken.py:2:" in result.output and "GNN000" in result.output
    assert "hazard.py:5:20: GNN001" in result.output


def test_unreadable_files_are_reported_and_skipped(project: Path):
    (project / "latin.py").write_bytes(b"x = '\xff\xfe caf\xe9'\n")
    (project / "dir.py").mkdir()  # a folder named like a module: walked, not read
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    (project / "badcookie.py").write_bytes(b"# -*- coding: klingon -*-\nx = 1\n")
    result = subprocess.run(
        [sys.executable, "-m", "gnnlint", "check", "latin.py", "dir.py", "dangling.py", "badcookie.py",
         "hazard.py", "--no-cache", "--output-format", "concise"],
        cwd=project, capture_output=True, text=True)
    assert result.returncode == 1  # hazard.py was still checked
    assert "Traceback" not in result.stderr
    assert result.stderr.count("dangling.py") == 1, result.stderr  # unreadable: named and skipped
    # undecodable source is what py_compile rejects: GNN000, as a syntax error is
    for name in ("latin.py", "badcookie.py"):
        assert f"{name}:1:" in result.stdout and "GNN000" in result.stdout, result.stdout
    assert "hazard.py:5:20: GNN001" in result.stdout


def test_nothing_checkable_exits_2(project: Path):
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "dangling.py", "--no-cache"],
                            cwd=project, capture_output=True, text=True)
    assert result.returncode == 2 and "dangling.py" in result.stderr


def test_missing_path_exits_2_and_empty_dir_exits_0(project: Path):
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "nope.py"], cwd=project,
                            capture_output=True, text=True)
    assert result.returncode == 2 and "nope.py" in result.stderr
    (project / "empty").mkdir()
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "empty"], cwd=project,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_stdin(project: Path):
    result = run(["check", "-", "--stdin-filename", "snippet.py", "--output-format", "concise"], project,
                 input=HAZARD.encode())
    assert result.exit_code == 1
    assert "snippet.py:8:1: GNN010" in result.output


def test_gitignore_and_exclude(project: Path):
    (project / ".gitignore").write_text("ignored/\n")
    (project / "ignored").mkdir()
    (project / "ignored" / "h.py").write_text(HAZARD)
    (project / "vendor").mkdir()
    (project / "vendor" / "h.py").write_text(HAZARD)
    result = run(["check", ".", "--no-cache", "--output-format", "concise", "--extend-exclude", "vendor"], project)
    assert "ignored" not in result.output and "vendor" not in result.output
    result = run(["check", ".", "--no-cache", "--output-format", "concise", "--no-respect-gitignore"], project)
    assert "ignored/h.py" in result.output
    # explicitly named files are always checked ...
    result = run(["check", "vendor/h.py", "--no-cache", "--extend-exclude", "vendor"], project)
    assert result.exit_code == 1
    # ... unless --force-exclude (the pre-commit hook)
    result = run(["check", "vendor/h.py", "--no-cache", "--extend-exclude", "vendor", "--force-exclude"], project)
    assert result.exit_code == 0


def test_full_format_has_caret_and_no_color_when_piped(project: Path):
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "full"], project)
    assert "\x1b[" not in result.output
    lines = result.output.splitlines()
    source_index = next(i for i, l in enumerate(lines) if "x.sum().item()" in l)
    caret_line = next(l for l in lines[source_index + 1:] if "^" in l)
    src_line = lines[source_index]
    assert src_line.index("x.sum().item()") == caret_line.index("^")


def test_statistics(project: Path):
    result = run(["check", "hazard.py", "--no-cache", "--statistics"], project)
    assert "GNN001" in result.output and "GNN010" in result.output


def test_rules_and_rule_commands(project: Path):
    result = run(["rules"], project)
    assert "GNN001" in result.output and "host-sync" in result.output
    data = json.loads(run(["rules", "--output-format", "json"], project).output)
    assert any(r["code"] == "GNN010" and r["fix"] == "safe" for r in data)
    page = run(["rule", "GNN001"], project).output
    assert page.startswith("# GNN001 host-sync") and "## Why is this bad?" in page
    assert run(["rule", "GNN999"], project).exit_code == 2
    assert json.loads(run(["rule", "gnn010", "--output-format", "json"], project).output)["name"] == \
        "compile-result-discarded"


def test_version():
    result = subprocess.run([sys.executable, "-m", "gnnlint", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("gnnlint ")


def test_check_never_imports_torch(tmp_path: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gnnlint", "check", str(ROOT / "fixtures"), "--no-cache",
         "--output-format", "concise"],
        cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    imported = [line.split("|")[-1].strip() for line in result.stderr.splitlines() if "import time:" in line]
    assert "gnnlint.engine" in imported  # the measurement really saw our imports
    assert not [m for m in imported if m == "torch" or m.startswith("torch.") or m.startswith("torch_geometric")]


def test_linted_code_is_never_executed(project: Path):
    marker = project / "executed.txt"
    (project / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n" + HAZARD)
    result = run(["check", "evil.py", "--no-cache"], project)
    assert result.exit_code == 1
    assert not marker.exists()


def test_cache_follows_cross_file_facts(tmp_path: Path):
    """models.py's findings change when train.py starts compiling its class,
    although models.py's bytes did not change: the cache must notice."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(textwrap.dedent("""\
        import torch

        class GCN(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    x = x * 2
                return x
    """))
    (pkg / "train.py").write_text("from .models import GCN\nmodel = GCN()\nprint(model)\n")
    first = run(["check", ".", "--output-format", "concise"], tmp_path)
    assert first.exit_code == 0, first.output
    (pkg / "train.py").write_text("import torch\nfrom .models import GCN\nmodel = torch.compile(GCN())\n")
    second = run(["check", ".", "--output-format", "concise"], tmp_path)
    assert "pkg/models.py:5:12: GNN001" in second.output
    assert (tmp_path / ".gnnlint_cache").is_dir()
    third = run(["check", ".", "--output-format", "concise"], tmp_path)  # warm: same answer
    assert third.output == second.output


def test_parallel_run_matches_serial(tmp_path: Path):
    for i in range(40):
        (tmp_path / f"m{i}.py").write_text(HAZARD if i % 2 else CLEAN)
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    serial = run(["check", ".", "--no-cache", "--output-format", "concise", "-j", "1"], tmp_path)
    parallel = run(["check", ".", "--no-cache", "--output-format", "concise", "-j", "2"], tmp_path)
    assert serial.output == parallel.output
    assert serial.output.count("GNN010") == 20


def test_internal_error_names_the_file_and_exits_2(project: Path, monkeypatch):
    from gnnlint import engine

    def boom(*args, **kwargs):
        raise RuntimeError("rule exploded")

    monkeypatch.setattr(engine, "lint_bytes", boom)
    result = CliRunner(mix_stderr=False).invoke(main, ["check", str(project / "hazard.py"), "--no-cache", "-j", "1"]) \
        if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else \
        CliRunner().invoke(main, ["check", str(project / "hazard.py"), "--no-cache", "-j", "1"])
    assert result.exit_code == 2
    assert "hazard.py" in (result.stderr if hasattr(result, "stderr") else result.output)
    assert "rule exploded" in (result.stderr if hasattr(result, "stderr") else result.output)


def test_verbose_reports_parsed_and_cached_counts(project: Path):
    (project / "plain.py").write_text("x = 1\n")  # no trigger: never parsed
    cold = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "-v", "--exit-zero"], cwd=project,
                          capture_output=True, text=True)
    parsed_mb = sum(p.stat().st_size for p in project.glob("*.py") if p.name != "plain.py") / 1e6
    assert f"3 files checked, 2 parsed ({parsed_mb:.2f} MB), 0 from the cache" in cold.stderr, cold.stderr
    warm = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "-v", "--exit-zero"], cwd=project,
                          capture_output=True, text=True)
    assert "3 files checked, 0 parsed (0.00 MB), 3 from the cache" in warm.stderr, warm.stderr
    assert warm.stdout == cold.stdout


def test_verbose_counts_compile_sites_with_unreadable_options(tmp_path: Path):
    """Options gnnlint cannot read (a config object, a dict changed later) make
    GNN006/GNN007 say nothing; -v says how many such sites there are, cold and warm."""
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--dynamic', action='store_true')\n"
        "args = parser.parse_args()\n"
        "a = torch.compile(model, dynamic=args.dynamic)\n"  # readable: False by default
        "b = torch.compile(model, **cfg.compile.args)\n"  # a config: unreadable
        "c = torch.compile(model, mode=cfg.mode, dynamic=True)\n")  # mode unreadable
    (tmp_path / "clean.py").write_text("import torch\nm = torch.compile(model, dynamic=True)\n")
    for _ in ("cold", "warm"):
        result = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "-v", "--exit-zero"], cwd=tmp_path,
                                capture_output=True, text=True)
        assert "2 compile sites with options gnnlint could not read" in result.stderr, result.stderr
        assert "train.py" in result.stderr and "clean.py" not in result.stderr.split("could not read")[1]
    quiet = subprocess.run([sys.executable, "-m", "gnnlint", "check", ".", "--exit-zero"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert "could not read" not in quiet.stderr


def test_files_over_max_file_size_are_reported_and_skipped(project: Path):
    (project / "huge.py").write_text(HAZARD + "# " + "x" * 3000 + "\n")
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "huge.py", "hazard.py", "--no-cache",
                             "--max-file-size", "2", "--output-format", "concise"],
                            cwd=project, capture_output=True, text=True)
    assert result.returncode == 1  # hazard.py still checked
    assert "huge.py" in result.stderr and "max-file-size" in result.stderr
    assert "huge.py" not in result.stdout
    # the limit is checked on the bytes before anything parses them, even
    # Python's syntax check of a file no rule can fire on (a 51 MB file cost
    # 7.7 GB to compile); every file skipped: exit 2
    (project / "data.py").write_text("TABLE = [\n" + "    'x' * 80,\n" * 400 + "]\n")
    (project / "broken.py").write_text("TABLE = [\n" + "    'x' * 80,\n" * 400 + "\n")
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "data.py", "broken.py", "--no-cache",
                             "--max-file-size", "2", "--output-format", "concise"],
                            cwd=project, capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == "", result
    assert "data.py: 5 KiB to parse is over max-file-size" in result.stderr
    assert "broken.py: 5 KiB to parse is over max-file-size" in result.stderr
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "data.py", "broken.py", "--no-cache",
                             "--output-format", "concise"], cwd=project, capture_output=True, text=True)
    assert result.stderr == "" and result.stdout.startswith("broken.py:1:9: GNN000"), result
    (project / "pyproject.toml").write_text("[tool.gnnlint]\nmax-file-size = 0\n")
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "huge.py", "--no-cache",
                             "--output-format", "concise"], cwd=project, capture_output=True, text=True)
    assert "huge.py:5:20: GNN001" in result.stdout
    (project / "pyproject.toml").write_text('[tool.gnnlint]\nmax-file-size = "big"\n')
    result = subprocess.run([sys.executable, "-m", "gnnlint", "check", "huge.py"], cwd=project,
                            capture_output=True, text=True)
    assert result.returncode == 2 and "max-file-size" in result.stderr


def test_quiet_prints_findings_without_the_summary(project: Path):
    result = run(["check", "hazard.py", "--no-cache", "--output-format", "concise", "-q"], project)
    assert result.exit_code == 1
    assert "hazard.py:5:20: GNN001" in result.output and "Found" not in result.output


def test_bytes_parsed_counts_what_libcst_was_given(project: Path):
    from gnnlint.config import Settings
    from gnnlint.engine import check_files, options_from_settings

    (project / "plain.py").write_text("x = 1\n")  # no trigger: never parsed
    files = sorted(project.glob("*.py"))
    result = check_files(files, lambda p: options_from_settings(Settings(), p))
    assert result.files_parsed == 2
    assert result.bytes_parsed == sum(p.stat().st_size for p in files if p.name != "plain.py") > 0


def test_max_file_size_verdict_is_cached_and_follows_the_limit(project: Path):
    (project / "huge.py").write_text(HAZARD + "# " + "x" * 3000 + "\n")

    def check(*flags):
        return subprocess.run([sys.executable, "-m", "gnnlint", "check", "huge.py", "-v", "--output-format",
                               "concise", *flags], cwd=project, capture_output=True, text=True)

    cold, warm = check("--max-file-size", "2"), check("--max-file-size", "2")
    for run_ in (cold, warm):
        assert "huge.py: 3 KiB to parse is over max-file-size (2 KiB)" in run_.stderr, run_.stderr
        assert run_.stdout == ""
    assert '"too_big":' in (project / ".gnnlint_cache" / "pack.json").read_text()  # the warm run's answer
    raised = check("--max-file-size", "8")  # the cached skip does not outlive the limit
    assert "max-file-size" not in raised.stderr and "huge.py:5:20: GNN001" in raised.stdout


def test_warm_run_answers_a_max_file_size_skip_from_the_cache(project: Path, monkeypatch):
    from gnnlint import engine
    from gnnlint.config import Settings

    (project / "huge.py").write_text(HAZARD + "# " + "x" * 3000 + "\n")
    settings = Settings(cache_dir=str(project / "cache"), max_file_size=2, project_root=project, cwd=project)
    cold = engine.check_files_cached([project / "huge.py"], settings)

    def no_parse(*args, **kwargs):
        raise AssertionError("the warm run linted the file again")

    monkeypatch.setattr(engine, "lint_bytes", no_parse)
    warm = engine.check_files_cached([project / "huge.py"], settings)
    assert cold.errors == warm.errors and "over max-file-size" in warm.errors[0]


def test_factory_compiled_in_one_file_fed_batches_in_another(tmp_path: Path):
    """models.py returns torch.compile(...) from a factory; train.py feeds the
    result NeighborLoader batches: GNN007 reports at models.py's compile call,
    and only while train.py feeds it (the cache follows)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(textwrap.dedent("""\
        import torch
        from torch_geometric.nn import GraphSAGE

        def build_model(hidden):
            model = GraphSAGE(16, hidden, num_layers=2)
            return torch.compile(model)
    """))
    train = textwrap.dedent("""\
        from torch_geometric.loader import NeighborLoader
        from .models import build_model

        def train(model, loader):
            for batch in loader:
                model(batch.x, batch.edge_index)

        model = build_model(64)
        loader = NeighborLoader(data, num_neighbors=[10], batch_size=128)
        train(model, loader)
    """)
    (pkg / "train.py").write_text(train)
    fed = run(["check", ".", "--output-format", "concise", "--select", "GNN007"], tmp_path)
    assert "pkg/models.py:6:12: GNN007" in fed.output and "from train.py, via `build_model()`" in fed.output
    (pkg / "train.py").write_text(train.replace("\ntrain(model, loader)", "\nmodel(data.x, data.edge_index)"))
    full_batch = run(["check", ".", "--output-format", "concise", "--select", "GNN007"], tmp_path)
    assert full_batch.exit_code == 0, full_batch.output


def test_compiled_chain_crosses_three_files(tmp_path: Path):
    """train.py compiles models.Net, whose forward calls a layer class and a
    helper function from layers.py: facts travel train -> models -> layers."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "layers.py").write_text(textwrap.dedent("""\
        import torch

        def drop_edges(edge_index, p):
            keep = torch.where(torch.rand(edge_index.size(1)) >= p)[0]
            return edge_index[:, keep]

        class Layer(torch.nn.Module):
            def forward(self, x):
                if x.isnan().any():
                    x = torch.nan_to_num(x)
                return x
    """))
    (pkg / "models.py").write_text(textwrap.dedent("""\
        import torch
        from .layers import Layer, drop_edges

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()

            def forward(self, x, edge_index):
                edge_index = drop_edges(edge_index, 0.1)
                return self.layer(x)
    """))
    (pkg / "train.py").write_text("import torch\nfrom .models import Net\nmodel = torch.compile(Net())\n")
    result = run(["check", ".", "--output-format", "concise", "--no-cache"], tmp_path)
    assert "pkg/layers.py:4:12: GNN008" in result.output, result.output
    assert "pkg/layers.py:9:12: GNN001" in result.output, result.output
    (pkg / "train.py").write_text("from .models import Net\nmodel = Net()\n")
    assert run(["check", ".", "--output-format", "concise", "--no-cache"], tmp_path).exit_code == 0


def test_helper_called_through_a_sibling_module_name_is_compiled(tmp_path: Path):
    """`from . import ops` then `ops.check_finite(x)` in a compiled forward."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.gnnlint]\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text("import torch\n\ndef check_finite(x):\n    if not torch.isfinite(x).all():\n"
                                "        raise FloatingPointError('non-finite')\n    return x\n")
    (pkg / "model.py").write_text(textwrap.dedent("""\
        import torch
        from . import ops

        class Net(torch.nn.Module):
            def forward(self, x):
                return ops.check_finite(x * 2)

        model = torch.compile(Net())
    """))
    result = run(["check", ".", "--output-format", "concise", "--no-cache"], tmp_path)
    assert "pkg/ops.py:4:8: GNN001" in result.output, result.output


def test_severity_filter_from_cli_and_config(project: Path):
    """HAZARD has a warning (GNN001: a break per call) and an error (GNN010:
    never compiled). --severity / `severity` keep that level and above; the
    exit code follows what is reported."""
    def codes(*args):
        result = run(["check", "hazard.py", "--no-cache", "--output-format", "json", *args], project)
        return result.exit_code, sorted(d["code"] for d in json.loads(result.output))

    assert codes() == (1, ["GNN001", "GNN010"])
    assert codes("--severity", "warning") == (1, ["GNN001", "GNN010"])
    assert codes("--severity", "error") == (1, ["GNN010"])
    (project / "pyproject.toml").write_text('[tool.gnnlint]\nseverity = "error"\n')
    assert codes() == (1, ["GNN010"])
    assert codes("--severity", "info") == (1, ["GNN001", "GNN010"])  # the command line wins
    (project / "hazard.py").write_text(HAZARD.replace("torch.compile(model)", "model = torch.compile(model)"))
    assert codes() == (0, [])  # only a warning left, below the configured minimum
    (project / "pyproject.toml").write_text('[tool.gnnlint]\nseverity = "fatal"\n')
    result = run(["check", "hazard.py", "--no-cache"], project)
    assert result.exit_code == 2 and "'severity' must be one of 'info', 'warning', 'error'" in result.output
