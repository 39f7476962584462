"""A finding never depends on how gnnlint was invoked (issue 12): one file, a
subset (pre-commit's staged files), stdin with --stdin-filename and the
whole project report the same findings for a file, because the cross-file
facts (what is compiled, run every step, fed) come from the whole project."""
from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

from gnnlint.config import load_settings
from gnnlint.discover import discover
from gnnlint.engine import apply_noqa, check_project, lint_source
from tests.project_files import assert_one_file_agrees, finding_lines, run, whole_tree_lines, write_project

LABELLED = Path(__file__).parent / "data" / "labelled"
SUITES = sorted(p.name for p in LABELLED.iterdir() if (p / "labels.json").is_file())

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "pkg/__init__.py": "",
    "pkg/layers.py": """\
        import torch


        class Block(torch.nn.Module):
            def forward(self, x):
                keep = x[x > 0]
                return keep.sum() + x.nonzero().shape[0]
    """,
    "pkg/models.py": """\
        import torch
        from .layers import Block


        class GCN(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                if x.sum().item() > 0:
                    x = x * 2
                return self.block(x)
    """,
    "train.py": """\
        import torch
        from pkg.models import GCN

        model = torch.compile(GCN())
        opt = torch.optim.Adam(model.parameters())
        for batch in range(10):
            loss = model(torch.randn(4)).sum()
            loss.backward()
            opt.step()
            print(loss.item())
    """,
    "tools/unrelated.py": "import os\nprint(os.getcwd())\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj", PROJECT)


def test_premise_the_project_has_cross_file_findings(project):
    whole = whole_tree_lines(project)
    assert any(line.startswith("pkg/models.py:") for line in whole)
    assert any(line.startswith("pkg/layers.py:") for line in whole)  # two files away from the compile
    alone = run(["check", "pkg/models.py", "--no-cache", "--no-project-facts"], project)
    assert alone.exit_code == 0, alone.output  # without the project's facts nothing is known


@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["no-cache", "cache"])
def test_every_file_alone_equals_the_whole_run(project, cache):
    whole = finding_lines(run(["check", ".", *cache], project).output)
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*.py"))
    for name in files:
        assert_one_file_agrees(project, name, whole=whole, cached=0 if cache else 1)
    staged = ["pkg/models.py", "tools/unrelated.py"]  # a pre-commit subset
    assert finding_lines(run(["check", *staged, *cache], project).output) == {
        line for line in whole if line.split(":")[0] in staged}


def test_stdin_gets_the_project_facts(project):
    whole = whole_tree_lines(project)
    for name in ("pkg/models.py", "pkg/layers.py", "train.py"):
        assert_one_file_agrees(project, name, whole=whole, stdin=True)


def test_stdin_buffer_replaces_the_file_on_disk(project):
    models = project / "pkg" / "models.py"
    settings = load_settings(cwd=project)
    # a buffer of models.py knows that train.py (on disk) compiles it
    assert {f.code for f in lint_source(models.read_text(), str(models), settings)} == {"GNN001"}
    # the unsaved buffer, not the file on disk, is what is linted
    edited = models.read_text().replace("x.sum().item() > 0", "x.sum() > 0")
    assert {f.code for f in lint_source(edited, str(models), settings)} == {"GNN001"}  # tensor truthiness
    edited = models.read_text().replace("if x.sum().item() > 0:", "if True:")
    assert lint_source(edited, str(models), settings) == []
    # a buffer of train.py that no longer compiles GCN: layers.py is not compiled any more
    layers = project / "pkg" / "layers.py"
    buffer = (project / "train.py").read_text().replace("torch.compile(GCN())", "GCN()")
    result = check_project([project / "train.py", layers], settings, use_cache=False,
                           contents={str(project / "train.py"): buffer.encode()})
    assert [f for f in result.findings if f.path == str(layers)] == []


def test_a_subdirectory_and_another_working_directory_agree(project):
    whole = whole_tree_lines(project)
    sub = finding_lines(run(["check", "models.py", "layers.py", "--no-cache"], project / "pkg").output)
    # paths are named relative to the project root, whatever the working directory
    assert sub == {line for line in whole if line.startswith("pkg/")}


def _findings(root: Path, files) -> set[tuple]:
    settings = load_settings(cwd=root)
    result = check_project(files, settings, use_cache=True)
    return {(os.path.relpath(os.path.abspath(f.path), root), f.line, f.col, f.code, f.message)
            for f in apply_noqa(result.findings)}


@pytest.mark.parametrize("suite", SUITES)
def test_labelled_suite_file_by_file(tmp_path, suite):
    root = tmp_path / suite
    shutil.copytree(LABELLED / suite / "programs", root)
    (root / "pyproject.toml").write_text("[tool.gnnlint]\n")
    files, _ = discover([root], load_settings(cwd=root))
    whole = _findings(root, files)
    assert whole, "premise: the suite has findings"
    for path in files:
        rel = os.path.relpath(path, root)
        assert _findings(root, [path]) == {f for f in whole if f[0] == rel}, rel


def test_every_format_names_files_from_the_project_root(project, monkeypatch):
    import json

    sub = project / "pkg"
    out = run(["check", "models.py", "--no-cache", "--output-format", "json"], sub)
    assert {e["filename"] for e in json.loads(out.output)} == {"pkg/models.py"}
    out = run(["check", "models.py", "--no-cache", "--output-format", "json", "--absolute-paths"], sub)
    assert {e["filename"] for e in json.loads(out.output)} == {str(project / "pkg" / "models.py")}
    log = json.loads(run(["check", "models.py", "--no-cache", "--output-format", "sarif"], sub).output)
    the_run = log["runs"][0]
    assert the_run["originalUriBaseIds"] == {"PROJECTROOT": {"uri": project.as_uri() + "/"}}
    locations = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0]
                 ["physicalLocation"]["artifactLocation"].get("uriBaseId") for r in the_run["results"]}
    assert locations == {"pkg/models.py": "PROJECTROOT"}
    # GitHub resolves annotations against the repository root, whatever the job's working-directory
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project.parent))
    out = run(["check", "models.py", "--no-cache", "--output-format", "github"], sub)
    assert "file=proj/pkg/models.py," in out.output
    monkeypatch.delenv("GITHUB_WORKSPACE")
    (project / ".git").mkdir()
    out = run(["check", "models.py", "--no-cache", "--output-format", "github"], sub)
    assert "file=pkg/models.py," in out.output


def test_a_warm_one_file_run_reads_no_other_file_and_sees_edits(project, monkeypatch):
    from gnnlint import engine

    settings = load_settings(cwd=project)
    files, _ = discover([project], settings)
    check_project(files, settings)  # fills the cache (and its stat index)
    read = []
    real = engine.read_source
    monkeypatch.setattr(engine, "read_source", lambda path, decode=True: (read.append(path), real(path, decode))[1])
    models = project / "pkg" / "models.py"
    found = check_project([models], load_settings(cwd=project)).findings
    assert {f.code for f in found} == {"GNN001"}
    assert set(read) == {str(models)}  # the other files' facts came from the cache, by their stat
    # train.py stops compiling GCN: its new bytes are read, the finding goes
    train = project / "train.py"
    train.write_text(train.read_text().replace("torch.compile(GCN())", "GCN()"))
    read.clear()
    after = check_project([models], load_settings(cwd=project)).findings
    assert str(train) in read
    assert not any("compiled forward" in f.message for f in after)
    assert _findings(project, [models]) == {f for f in _findings(project, files) if f[0] == "pkg/models.py"}


SWEEP_PROJECT = {
    "pyproject.toml": "[project]\nname = 'sweep'\n\n[tool.gnnlint]\n",
    "models.py": """\
        import torch
        from torch_geometric.nn import GCNConv


        class Net(torch.nn.Module):
            def __init__(self, hidden):
                super().__init__()
                self.convs = torch.nn.ModuleList([GCNConv(16, hidden), GCNConv(hidden, 2)])

            def forward(self, x, edge_index):
                for conv in self.convs:
                    x = conv(x, edge_index)
                return x
    """,
    "train_utils.py": """\
        import torch
        from models import Net


        def run_config(hidden, data):
            model = torch.compile(Net(hidden), fullgraph=True)
            return model(data.x, data.edge_index)


        def run_reset(hidden, data):
            torch._dynamo.reset()
            return torch.compile(Net(hidden), fullgraph=True)(data.x, data.edge_index)
    """,
    "sweep.py": """\
        from train_utils import run_config, run_reset

        for hidden in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096):
            run_config(hidden, data)
            run_reset(hidden, data)
    """,
}


def test_a_sweep_driven_from_another_file_and_the_compile_sites_fullgraph(tmp_path):
    # issue 15: GNN015 (a) sees the trial loop in sweep.py that calls
    # run_config, which compiles a new Net from its parameter; GNN014 takes
    # fullgraph from the compile site in train_utils.py that compiles Net
    # (one graph: the GCNConv loop break is captured), not from models.py
    root = write_project(tmp_path / "sweep", SWEEP_PROJECT)
    whole = whole_tree_lines(root)
    assert {line.split(" ")[0] for line in whole} == {"train_utils.py:6:13:"}, whole
    (line,) = whole
    assert "on every call of `run_config` (called in every iteration of `for hidden in ...`, from sweep.py)" in line
    for name in ("train_utils.py", "models.py"):  # one file alone, with the project's facts
        alone = finding_lines(run(["check", name, "--no-cache", "--output-format", "concise"], root).output)
        assert alone == {x for x in whole if x.startswith(name + ":")}, name
    # one compile site without fullgraph=True: Net's layer loop breaks again
    (root / "eval.py").write_text("import torch\nfrom models import Net\nmodel = torch.compile(Net(32))\n")
    codes = {(x.split(":")[0], x.split(" ")[1]) for x in finding_lines(run(["check", ".", "--no-cache", "--output-format",
                                                                      "concise"], root).output)}
    assert ("models.py", "GNN014") in codes


def test_a_sweep_of_a_file_that_compiles_nothing_follows_that_file_when_it_starts_to(tmp_path):
    # sweep.py is not parsed while train_utils.py compiles nothing (the
    # prefilter asks the imported file); its cached answer must not outlive
    # that: once train_utils.py compiles, a warm one-file run equals a cold one
    eager = dict(SWEEP_PROJECT)
    eager["train_utils.py"] = SWEEP_PROJECT["train_utils.py"].replace(
        "torch.compile(Net(hidden), fullgraph=True)", "Net(hidden)")
    root = write_project(tmp_path / "sweep", eager)
    assert not any("GNN015" in x for x in finding_lines(run(["check", ".", "--output-format", "concise"], root).output))
    (root / "train_utils.py").write_text(textwrap.dedent(SWEEP_PROJECT["train_utils.py"]))
    warm = finding_lines(run(["check", "train_utils.py", "--output-format", "concise"], root).output)
    cold = whole_tree_lines(root)
    assert any("called in every iteration of `for hidden in ...`, from sweep.py" in x for x in warm), warm
    assert warm == {x for x in cold if x.startswith("train_utils.py:")}


def test_a_sweep_of_an_eager_helper_does_not_make_its_file_parsed(tmp_path):
    # sweep.py is parsed (it compiles), and its loop calls helpers imported
    # from files that compile nothing, one of them through a package
    # __init__: a sweep matters only to a function that compiles (GNN015),
    # so neither file is parsed for it; the compiling one still hears of it
    files = dict(SWEEP_PROJECT)
    files["sweep.py"] = """\
        import torch
        from pkg import normalize
        from train_utils import run_config

        model = torch.compile(Net(16))
        for hidden in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096):
            normalize(hidden)
            run_config(hidden, data)
    """
    files["pkg/__init__.py"] = "from .norm import normalize\n"
    files["pkg/norm.py"] = "def normalize(x):\n    return x / 2\n"
    root = write_project(tmp_path / "sweep", files)
    result = run(["check", ".", "--no-cache", "--verbose", "--output-format", "concise"], root)
    assert any("on every call of `run_config` (called in every iteration of `for hidden in ...`, from sweep.py)" in x
               for x in finding_lines(result.output)), result.output
    # parsed: sweep.py, train_utils.py (told of the sweep), models.py (told it is compiled); not pkg/*
    assert "5 files checked, 3 parsed" in result.stderr, result.stderr


STEPPED_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/util.py": """\
        def to_item(x):
            return x.cpu().item()
    """,
    "pkg/metrics.py": """\
        from .util import to_item


        def get_metrics(pred, y):
            return {"mae": to_item((pred - y).abs().mean())}


        class Tracker:
            def update(self, metrics):
                for k, v in metrics.items():
                    if v.isnan().any():
                        continue

            def unused(self, v):
                return v.item()


        def once(v):
            return v.item()
    """,
    "pkg/train.py": """\
        import torch
        from .metrics import Tracker, get_metrics, once


        class Net(torch.nn.Module):
            def forward(self, x):
                return x * 2


        def main(loader, opt):
            model = torch.compile(Net())
            tracker = Tracker()
            for x, y in loader:
                pred = model(x)
                loss = (pred - y).pow(2).mean()
                loss.backward()
                opt.step()
                tracker.update({"loss": loss.detach()})
                m = get_metrics(pred, y)
            once(loss)
    """,
}


def test_per_step_helpers_in_other_files(tmp_path):
    # a function or method another file calls every step of a loop that drives
    # compiled code is per-step code in its own file (and what it calls, in a
    # third file); the message names the loop's file and the call it makes. The per-step call of the
    # helper that copies its argument (`to_item(...)`, semantic/synced_params.py) is a sync there too
    root = write_project(tmp_path / "stepped", STEPPED_PROJECT)
    whole = whole_tree_lines(root)
    assert {line.split(" ")[0] for line in whole} == {"pkg/metrics.py:5:20:", "pkg/metrics.py:11:16:",
                                                      "pkg/util.py:2:12:"}, whole
    assert all(" GNN013 " in line and "(train.py, through `" in line for line in whole), whole
    alone = finding_lines(run(["check", "pkg/util.py", "--no-cache", "--output-format", "concise"], root).output)
    assert alone == {x for x in whole if x.startswith("pkg/util.py:")}
    # the same loop without a compiled model: nothing anywhere
    train = root / "pkg" / "train.py"
    train.write_text(train.read_text().replace("torch.compile(Net())", "Net()"))
    assert not whole_tree_lines(root)
