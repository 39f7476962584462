"""Extra tests for GNN003/004/005/008/009 and gnnlint/dataflow.py: version
gating, the PyG size table against the installed PyG, and dataflow cases the
rule examples do not cover."""
from __future__ import annotations

import inspect
import textwrap

import pytest

from gnnlint import pyg_sizes
from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules.gnn003_tuple_moduledict_key import pyg_internal_key


def _lint(code: str, codes: set[str], **options):
    opts = LintOptions(codes=frozenset(codes), **options)
    return lint_bytes("example.py", textwrap.dedent(code).encode(), opts).findings


HETERO = """
import torch
from torch_geometric.nn import ModuleDict
class Net(torch.nn.Module):
    def __init__(self, metadata):
        super().__init__()
        self.lins = ModuleDict({et: torch.nn.Linear(4, 4) for et in metadata[1]})
    def forward(self, x_dict):
        return self.lins["a", "to", "b"](x_dict["a"])
model = torch.compile(Net(metadata))
"""


@pytest.mark.parametrize("torch_version,fires", [
    ("2.1.0", True), ("2.4.1", True), ("2.5.0", False), ("2.13.0", False),
])
def test_gnn003_is_version_aware(torch_version, fires):
    findings = _lint(HETERO, {"GNN003"}, torch_version=torch_version, pyg_version="2.8.1")
    assert bool(findings) is fires


def test_pyg_internal_key_matches_pyg():
    module_dict = pytest.importorskip("torch_geometric.nn.module_dict")
    for key in [("a", "to", "b"), ("a.b", "rel", "c"), ("author", "writes", "paper")]:
        assert pyg_internal_key(key) == module_dict.ModuleDict.to_internal_key(key)
        # looking the string up goes through to_internal_key again: unchanged
        assert module_dict.ModuleDict.to_internal_key(pyg_internal_key(key)) == pyg_internal_key(key)


def _pyg_object(entry):
    import importlib
    for mod in ("torch_geometric.utils", "torch_geometric.index", "torch_geometric.nn", "torch_geometric.nn.pool",
                "torch_geometric.nn.aggr", "torch_geometric.nn.norm"):
        obj = getattr(importlib.import_module(mod), entry.name, None)
        if obj is not None:
            return obj
    return None


def test_pyg_size_table_matches_installed_signatures():
    pytest.importorskip("torch_geometric")
    for entry in pyg_sizes.TABLE:
        if entry.package != "torch_geometric":
            continue
        obj = _pyg_object(entry)
        assert obj is not None, entry.name
        if entry.module:
            func = obj.__call__ if "Aggregation" in entry.name else obj.forward
            params = [p for p in inspect.signature(func).parameters.values() if p.name != "self"]
        else:
            params = list(inspect.signature(obj).parameters.values())
        names = [p.name for p in params]
        for arg in entry.sizes + tuple(a for a in (entry.needs, entry.unless) if a is not None):
            assert arg.position < len(names) and names[arg.position] == arg.keyword, (entry.name, arg, names)


def test_gnn005_follows_param_through_alias_and_conditional_rebinding():
    code = """
    import torch
    import torch_geometric.transforms as T
    dataset = Reddit(root, transform=T.ToSparseTensor())
    def train_a(model, loader):
        for batch in loader:
            if "adj_t" in batch:
                edge_index = batch.adj_t
            else:
                edge_index = batch.edge_index
            out = model(batch.x, edge_index)
    def train_b(model, loader):
        for batch in loader:
            out = model(batch.x_dict, batch.edge_index_dict)
    def run(args, loader):
        model = get_model()
        if args.compile:
            model = torch.compile(model, dynamic=True)
        if args.device == "xpu":
            model, optimizer = ipex.optimize(model, optimizer=optimizer)
        train = train_b if args.hetero else train_a
        train(model, loader)
    """
    findings = _lint(code, {"GNN005"})
    assert [f.line for f in findings] == [4]  # the transform whose adj_t train_a feeds


def test_gnn005_quiet_without_compile():
    code = """
    import torch_geometric.transforms as T
    transform = T.Compose([T.RandomNodeSplit(), T.ToSparseTensor()])
    data = dataset[0]
    for epoch in range(10):
        out = model(data.x, data.adj_t)
    """
    assert _lint(code, {"GNN005"}) == []


def test_gnn008_integer_index_and_eager_masks_are_quiet():
    code = """
    import torch
    class Net(torch.nn.Module):
        def forward(self, x, batch, idx, edge_label_index):
            g = x.sum(0)
            return x[idx] + g[batch] + x[edge_label_index[0]] + x[:10]
    model = torch.compile(Net())
    out = model(x, batch, idx, eli)
    loss = out[data.train_mask].sum()
    """
    assert _lint(code, {"GNN008"}) == []


def test_gnn009_quiet_when_sizes_given_or_kwargs():
    code = """
    import torch
    from torch_geometric.nn import global_mean_pool
    from torch_geometric.utils import scatter, to_dense_batch
    class Net(torch.nn.Module):
        def forward(self, x, batch, num_graphs: int, **kw):
            a = global_mean_pool(x, batch, num_graphs)
            b = scatter(x, batch, 0, num_graphs)
            c, m = to_dense_batch(x, batch, 0.0, 32, num_graphs)
            d = scatter(x, batch, **kw)
            return a
    model = torch.compile(Net())
    """
    assert _lint(code, {"GNN009"}) == []


def test_gnn004_output_size_tensor_and_int_repeats():
    code = """
    import torch
    class Net(torch.nn.Module):
        def forward(self, x, counts, ptr):
            a = x.repeat_interleave(2, dim=0)
            b = x.repeat_interleave(counts, dim=0, output_size=x.size(0))
            c = x.repeat_interleave(counts, dim=0, output_size=int(ptr[-1]))
            return a, b, c
    """
    assert _lint(code, {"GNN004"}) == []


def test_code_after_is_compiling_early_return_is_eager():
    code = """
    import torch
    from torch_geometric.utils import is_compiling
    class Net(torch.nn.Module):
        def forward(self, x, mask):
            if not WITH_PYG_LIB or is_compiling():
                return x * mask
            return x[mask]
    class Net2(torch.nn.Module):
        def forward(self, x, mask):
            if is_compiling():
                y = x * 2
            return x[mask]
    model = torch.compile(Net())
    model2 = torch.compile(Net2())
    """
    assert [f.line for f in _lint(code, {"GNN008"})] == [13]


def test_basic_gnn_norm_options_match_installed_pyg():
    # GNN009's BasicGNN(norm=...) case: the constructor's norm options, the
    # forward's batch / batch_size positions, and which norms take `batch`
    pytest.importorskip("torch_geometric")
    from torch_geometric.nn import models, norm
    from torch_geometric.nn.resolver import normalization_resolver

    for name in pyg_sizes.BASIC_GNN_MODELS:
        cls = getattr(models, name)
        init = [p for p in inspect.signature(models.basic_gnn.BasicGNN.__init__).parameters if p != "self"]
        for arg in (pyg_sizes.BASIC_GNN_NORM, pyg_sizes.BASIC_GNN_NORM_KWARGS):
            assert init[arg.position] == arg.keyword, (name, init)
        fwd = [p for p in inspect.signature(cls.forward).parameters if p != "self"]
        for arg in (pyg_sizes.BASIC_GNN_BATCH, pyg_sizes.BASIC_GNN_BATCH_SIZE):
            assert fwd[arg.position] == arg.keyword, (name, fwd)
    for query in ("graph_norm", "GraphNorm", "layer", "instance_norm", "pair_norm", "mean_subtraction_norm"):
        built = type(normalization_resolver(query, 16) if query not in ("pair_norm", "mean_subtraction_norm")
                     else normalization_resolver(query))
        assert pyg_sizes.basic_gnn_norm("torch_geometric.nn.models.GIN", query) == built.__name__
        assert "batch" in inspect.signature(built.forward).parameters
    assert pyg_sizes.basic_gnn_norm("torch_geometric.nn.models.GIN", "batch_norm") is None
    assert pyg_sizes.basic_gnn_norm("torch_geometric.nn.conv.GINConv", "graph_norm") is None
    assert "batch" not in inspect.signature(norm.BatchNorm.forward).parameters
