"""A compiled model builds its layers from a project module it imports as a
module (``from pkg.layers import conv`` ... ``self.layers.append(conv.Conv(16))``,
``import pkg.layers.conv as conv``): those layers run in the compiled forward,
so the file defining them is told, as it is for ``from pkg.layers.conv import
Conv`` (ProteinWorkshop's GearNet builds its ``gear_net.GeometricRelationalGraphConv``
layers so). A branch of such a layer's forward that only an optional argument
opens (``if node_mask is not None:``) runs compiled only when the compiled
calls pass it."""
from __future__ import annotations

import pytest

from tests.project_files import whole_tree_lines, write_project

CONV = """\
    import torch
    import torch.nn as nn


    class Conv(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.lin = nn.Linear(d, d)

        def forward(self, graph, x, node_mask=None):
            adj = torch.sparse_coo_tensor(graph.edge_index, graph.edge_weight)
            out = adj @ self.lin(x)
            if node_mask is not None:
                out = out[node_mask]
            return out
"""
MODEL = """\
    import torch
    import torch.nn as nn
    {imports}


    class Enc(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.layers = nn.ModuleList()
            for _ in range(n):
                self.layers.append({ctor}(16))

        def forward(self, batch):
            x = batch.x
            for layer in self.layers:
                x = layer(batch, x{mask})
            return x


    model = {compile}(Enc(3))
"""


def _project(imports: str, ctor: str, mask: str = "", compile_: str = "torch.compile") -> dict:
    return {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/layers/__init__.py": "",
        "demo/layers/conv.py": CONV,
        "demo/model.py": MODEL.format(imports=imports, ctor=ctor, mask=mask, compile=compile_),
    }


@pytest.mark.parametrize("imports, ctor", [
    ("from demo.layers import conv", "conv.Conv"),
    ("from .layers import conv", "conv.Conv"),
    ("import demo.layers.conv as conv", "conv.Conv"),
    ("from demo.layers.conv import Conv", "Conv"),
])
def test_layers_of_a_module_imported_as_a_module_run_compiled(tmp_path, imports, ctor):
    root = write_project(tmp_path, _project(imports, ctor))
    lines = whole_tree_lines(root, "--select", "GNN005,GNN008", "--output-format", "concise")
    # the sparse adjacency is built in the compiled forward; the mask branch is never opened
    assert [line.split(" ")[0] for line in sorted(lines)] == ["demo/layers/conv.py:11:15:"], lines
    assert "compiled forward of `Conv`" in next(iter(lines))


def test_the_optional_branch_runs_when_a_compiled_call_passes_it(tmp_path):
    root = write_project(tmp_path, _project("from demo.layers import conv", "conv.Conv", mask=", batch.mask"))
    lines = whole_tree_lines(root, "--select", "GNN008", "--output-format", "concise")
    assert [line.split(" ")[0] for line in sorted(lines)] == ["demo/layers/conv.py:14:19:"], lines


def test_nothing_without_the_compile(tmp_path):
    root = write_project(tmp_path, _project("from demo.layers import conv", "conv.Conv", compile_="list"))
    assert not whole_tree_lines(root, "--select", "GNN005,GNN008")


MP_METHODS = """
import torch
import torch.nn as nn
from torch_geometric.nn import MessagePassing


class Base(nn.Module):
    def forward(self, x, edge_index):
        return self.message_and_aggregate(x, edge_index)


class Conv(Base):
    def aggregate(self, x, index):  # never called: no propagate runs it
        return x[index > 0]

    def message_and_aggregate(self, x, edge_index):
        return x[edge_index[0]]


class Sub(Conv):
    def message_and_aggregate(self, x, edge_index):  # the base's forward calls this override
        return x[edge_index[0] > 0]


class PygConv(MessagePassing):
    def forward(self, x, edge_index):
        return self.propagate(edge_index, x=x)

    def message(self, x_j):
        return x_j[x_j.sum(-1) > 0]


model = torch.compile(Conv())
pyg = torch.compile(PygConv())
sub = torch.compile(Sub())
"""


def test_message_passing_hooks_run_compiled_only_under_propagate():
    from gnnlint.engine import LintOptions, lint_bytes

    result = lint_bytes("model.py", MP_METHODS.encode(), LintOptions(codes=frozenset({"GNN008"})))
    assert [f.line for f in result.findings] == [22, 30], [(f.line, f.message) for f in result.findings]
