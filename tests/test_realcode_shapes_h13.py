"""heldout13 shapes (nequix, an ASE calculator with a JAX and a torch backend):

- ``energy, forces = (energy.detach().cpu(), forces.detach().cpu())`` after ``energy = scatter(...)`` in
  the same branch: the tuple's elements are host copies and the earlier binding never reaches the read
  (semantic/names.py ``reaching``, semantic/devices.py); the other branch's ``eqx.filter_jit(model)(g)``
  is a JAX value, no torch tensor;
- ``if dim_size is None: int(index.max())`` in a helper that every per-step call (another file's
  ``calculate``) and every local call (the compiled forward) passes ``dim_size=x.size(0)``: never None,
  so the branch is no per-step code (semantic/step_args.py).
Each VALID case has an INVALID twin that keeps the finding."""
from __future__ import annotations

from tests.project_files import finding_keys

CALC = """\
    import equinox as eqx
    import torch
    from ase.calculators.calculator import Calculator
    from demo.model import Model, scatter


    class Calc(Calculator):
        def __init__(self, backend="torch"):
            super().__init__()
            self.backend = backend
            self.model = torch.compile(Model(), dynamic=True)

        def calculate(self, atoms=None, properties=None, system_changes=None):
            Calculator.calculate(self, atoms)
            graph = self.make(atoms)
            if self.backend == "jax":
                energy, forces = eqx.filter_jit(self.jax_model)(graph)
            elif self.backend == "torch":
                per_atom, forces = self.model(graph.x, graph.pos)
                energy = scatter(per_atom, graph.batch, dim_size=DIM)
                energy, forces = (
                    energy.detach().cpu(),
                    forces.detach().cpu(),
                )
            self.results["energy"] = energy[0].item()
            self.results["forces"] = forces
"""
MODEL = """\
    import torch


    def scatter(src, index, dim_size=None):
        if dim_size is None:
            dim_size = int(index.max()) + 1
        out = torch.zeros(dim_size, device=src.device)
        return out.index_add_(0, index, src)


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)

        def forward(self, x, pos):
            e = self.lin(x).squeeze(-1)
            return scatter(e, torch.zeros_like(e, dtype=torch.long), dim_size=x.size(0)), pos
"""
def _lines(tmp_path, calc: str = CALC, dim: str = "graph.n_node.size(0)") -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/calc.py": calc.replace("DIM", dim),
        "demo/model.py": MODEL,
    })


def test_host_copies_unpacked_from_a_tuple_and_a_jax_branch_are_no_device_reads(tmp_path):
    found = _lines(tmp_path)
    assert not any(line.startswith("demo/calc.py:25:") for line in found), found
    assert "demo/calc.py:22:17: GNN013" in found  # the copy itself is the per-step sync


def test_a_torch_branch_without_the_copy_keeps_the_read(tmp_path):
    calc = CALC.replace("energy.detach().cpu(),", "energy.detach(),")
    assert "demo/calc.py:25:34: GNN013" in _lines(tmp_path, calc)


def test_a_branch_every_per_step_and_local_call_leaves_untaken(tmp_path):
    assert not any(line.startswith("demo/model.py:6:") for line in _lines(tmp_path))


def test_a_per_step_call_leaving_the_size_none_keeps_the_sync(tmp_path):
    assert "demo/model.py:6:20: GNN013" in _lines(tmp_path, dim="None")


# heldout13 NeuralCrush: `pred = model(batch)` then `loss = model.loss(pred, ...)` on the compiled wrapper,
# every batch of the training loop: the wrapper hands `loss` to the eager module, once per step of a loop
# that runs compiled code (semantic/steps.py). A loop calling only `model.encode(x)` runs nothing compiled.
NET = """\
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)

        def forward(self, x):
            return self.lin(x)

        def loss(self, pred, target):
            is_big = torch.abs(target) > 1
            if is_big.sum() > 0:
                return (pred[is_big] - target[is_big]).pow(2).mean()
            return pred.sum() * 0.0
"""
TRAIN_STEP = """\
    import torch
    from demo.net import Net


    def train_epoch(model, loader, optimizer):
        for x, y in loader:
            STEP
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


    def main(loader):
        model = Net()
        model = torch.compile(model, dynamic=True)
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(10):
            train_epoch(model, loader, optimizer)
"""


def _step_lines(tmp_path, step: str) -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/net.py": NET,
        "demo/train.py": TRAIN_STEP.replace("STEP", step),
    }, containing="net.py")


def test_a_method_of_the_compiled_wrapper_next_to_its_forward_runs_per_step(tmp_path):
    assert "demo/net.py:14:12: GNN013" in _step_lines(tmp_path, "pred = model(x)\n            loss = model.loss(pred, y)")


def test_a_method_of_the_wrapper_alone_runs_nothing_compiled(tmp_path):
    assert _step_lines(tmp_path, "loss = model.loss(x, y)") == []


# heldout13 torchani: a unit test compiling a library function into the throwaway `_` and never calling it
OPS = """\
    import torch


    def discard(x, cutoff: float):
        keep = (x < cutoff).nonzero().flatten()
        return x[keep]
"""


def test_a_compile_result_thrown_away_compiles_nothing(tmp_path):
    test = "import torch\nfrom demo.ops import discard\n\n\ndef test_compile():\n    COMPILE\n"
    for compile_line, expected in (("_ = torch.compile(discard, fullgraph=True)", []),
                                   ("f = torch.compile(discard, fullgraph=True)\n    f(torch.ones(3), 0.5)",
                                    ["demo/ops.py:5:12: GNN008"])):
        assert finding_keys(tmp_path / str(len(expected)), {
            "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
            "demo/__init__.py": "",
            "demo/ops.py": OPS,
            "tests/test_ops.py": test.replace("COMPILE", compile_line),
        }, containing="ops.py") == expected
