"""What another file's compile call compiles (issue 10, real code: aimnetcentral,
gnnpp): ``torch.compile(calc.model)`` compiles what ``calc.model`` holds -- not
the calculator class that holds it -- and ``torch.compile(model)`` as a bare
statement compiles nothing (GNN010 says so; no other rule may say otherwise)."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

HELD = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "pkg/__init__.py": "",
    "pkg/calc.py": """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, x):
                return x[x > 0].sum()


        class Calculator:
            def __init__(self):
                self.model = Net()

            def __call__(self, x):
                if bool((x < 0).any()):
                    raise ValueError(x[x < 0].tolist())
                return self.model(x)
    """,
    "run_compiled.py": """\
        import torch
        from pkg.calc import Calculator

        calc = Calculator()
        calc.model = torch.compile(calc.model)
        print(calc(torch.randn(4)))
    """,
}


def test_a_compiled_attribute_compiles_what_the_class_holds_there(tmp_path):
    root = write_project(tmp_path, HELD)
    lines = whole_tree_lines(root)
    calc = sorted(line for line in lines if line.startswith("pkg/calc.py"))
    # Net.forward runs compiled: its boolean mask breaks the graph
    assert any(":6:" in line and "GNN008" in line and "`Net`" in line for line in calc), calc
    # the calculator's own __call__ is eager: its checks are no graph breaks
    assert not any("`Calculator`" in line for line in calc), calc
    assert_one_file_agrees(root, "pkg/calc.py", whole=lines, nonempty=True)


DISCARDED = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "model.py": """\
        import torch
        from torch_geometric.utils import scatter


        class Pool(torch.nn.Module):
            def forward(self, x, index):
                if x.sum().item() > 0:
                    x = x * 2
                return scatter(x, index, reduce="mean")
    """,
    "train.py": """\
        import torch
        from model import Pool

        model = Pool()
        torch.compile(model)
        for step in range(3):
            out = model(torch.randn(4, 2), torch.tensor([0, 0, 1, 1]))
    """,
}


def test_a_discarded_compile_compiles_nothing(tmp_path):
    root = write_project(tmp_path, DISCARDED)
    lines = whole_tree_lines(root)
    assert [line for line in lines if line.startswith("train.py")] and all(
        "GNN010" in line for line in lines if line.startswith("train.py")), lines
    assert not [line for line in lines if line.startswith("model.py")], lines


def test_the_same_compile_kept_compiles_the_model(tmp_path):
    files = dict(DISCARDED, **{"train.py": DISCARDED["train.py"].replace(
        "torch.compile(model)", "model = torch.compile(model)")})
    lines = whole_tree_lines(write_project(tmp_path, files))
    model = [line for line in lines if line.startswith("model.py")]
    assert any("GNN001" in line for line in model) and any("GNN009" in line for line in model), lines
