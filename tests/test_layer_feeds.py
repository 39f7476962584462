"""A library function running its compiled kernel on a graph it is handed
(semantic/layer_feeds.py): the kernel sees every graph's sizes (GNN007). A
layer's forward running a compiled function on its input is not enough."""
from __future__ import annotations

from gnnlint.engine import lint_source

LAYER = """\
import torch


def _harmonics(lmax, x, y, z):
    return torch.stack([x * y, y * z, z * x], dim=-1)


class Harmonics(torch.nn.Module):
    def __init__(self, lmax, inductor):
        super().__init__()
        self.lmax = lmax
        if inductor:
            self.fn = torch.compile(_harmonics, fullgraph=True)
        else:
            self.fn = _harmonics

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.normalize(x, dim=-1)
        return self.fn(self.lmax, x[..., 0], x[..., 1], x[..., 2])
"""


def _gnn007(source: str, path: str = "lib/harmonics.py") -> list:
    return [f for f in lint_source(source, path, project_facts=False, use_cache=False) if f.code == "GNN007"]


def test_a_layers_compiled_function_on_its_input_is_not_enough():
    # the input may be a fixed grid (a weather model's DropPath / ConditionalLayerNorm): one size
    assert not _gnn007(LAYER)


LIBRARY = """\
import torch

try:
    from torch_geometric.data import Data as PyGData
    HAVE_PYG = True
except ImportError:
    HAVE_PYG = False

if HAVE_PYG:
    @torch.compile
    def sum_edge_node_feat(efeat, src_feat, dst_feat, src_idx, dst_idx):
        return efeat + src_feat[src_idx] + dst_feat[dst_idx]

    def sum_efeat(efeat, nfeat, graph):
        src, dst = graph.edge_index.long()
        return sum_edge_node_feat(efeat, nfeat, nfeat, src, dst)
else:
    def sum_edge_node_feat(*args, **kwargs):
        raise ImportError("PyG")

    def sum_efeat(*args, **kwargs):
        raise ImportError("PyG")
"""


def test_a_library_function_runs_its_compiled_kernel_on_the_graph_it_is_handed():
    found = _gnn007(LIBRARY)
    assert [f.line for f in found] == [10], found
    assert "run by `sum_efeat` on the graph `graph` it is handed" in found[0].message
    assert not _gnn007(LIBRARY.replace("@torch.compile", "@torch.compile(dynamic=True)"))
    assert not _gnn007(LIBRARY, "tests/test_utils.py")


def test_a_script_or_a_function_called_here_decides_by_its_own_calls():
    assert not _gnn007(LIBRARY + "\nif __name__ == '__main__':\n    pass\n")
    assert not _gnn007(LIBRARY + "\nout = sum_efeat(e, n, fixed_graph)\n")
