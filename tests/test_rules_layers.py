"""GNN014's table (gnnlint/pyg_layers.py) against the installed PyG, and the
rule's decisions that the examples do not pin down."""
from __future__ import annotations

import importlib
import inspect
import textwrap

import pytest

from gnnlint import pyg_layers
from gnnlint.engine import LintOptions, lint_bytes

# the conv a BasicGNN model forwards its **kwargs to
_MODEL_CONV = {"GCN": "GCNConv", "GAT": "GATConv", "GraphSAGE": "SAGEConv"}


def _pyg(name: str):
    for module in ("torch_geometric.nn", "torch_geometric.nn.models", "torch_geometric.utils"):
        obj = getattr(importlib.import_module(module), name, None)
        if obj is not None:
            return obj
    return None


def _params(obj) -> list[str]:
    func = obj.__init__ if inspect.isclass(obj) else obj
    return [p.name for p in inspect.signature(func).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def test_layer_table_matches_installed_signatures():
    pytest.importorskip("torch_geometric")
    for entry in pyg_layers.TABLE:
        obj = _pyg(entry.name)
        assert obj is not None, entry.name
        assert inspect.isclass(obj) == (entry.kind != "function"), entry.name
        names = _params(obj)
        for option in entry.avoid + ((entry.when,) if entry.when else ()):
            if option.position >= 0:
                assert option.position < len(names) and names[option.position] == option.keyword, \
                    (entry.name, option, names)
            else:  # forwarded through **kwargs to the model's conv
                assert option.keyword in _params(_pyg(_MODEL_CONV[entry.name])), (entry.name, option)


def test_layer_table_avoiding_options_default_to_breaking():
    """An option that avoids the break must not already be the default."""
    pytest.importorskip("torch_geometric")
    for entry in pyg_layers.TABLE:
        obj = _pyg(entry.name)
        func = obj.__init__ if inspect.isclass(obj) else obj
        params = inspect.signature(func).parameters
        for option in entry.avoid:
            if option.keyword in params:
                assert params[option.keyword].default != option.value, (entry.name, option)


def _lint(code: str, **options):
    opts = LintOptions(codes=frozenset({"GNN014"}), **options)
    return lint_bytes("example.py", textwrap.dedent(code).encode(), opts).findings


LOOP_MODEL = """
import torch
from torch_geometric.nn import GATConv
class Net(torch.nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        convs = []
        for _ in range(layers):
            convs.append(GATConv(hidden, hidden, heads=1))
        self.convs = torch.nn.ModuleList(convs)
    def forward(self, x, edge_index):
        for i in range(len(self.convs)):
            x = self.convs[i](x, edge_index)
        return x
"""


def test_local_list_and_indexed_loop_escalate():
    findings = _lint(LOOP_MODEL + "model = torch.compile(Net(16, 3))\n")
    assert [(f.line, f.severity) for f in findings] == [(9, "error")]
    assert "all of `Net.forward` runs eagerly" in findings[0].message


def test_not_compiled_or_fullgraph_or_captured_is_quiet():
    assert _lint(LOOP_MODEL + "model = Net(16, 3)\n") == []
    assert _lint(LOOP_MODEL + "model = torch.compile(Net(16, 3), fullgraph=True)\n") == []
    captured = LOOP_MODEL + "torch._dynamo.config.capture_dynamic_output_shape_ops = True\n" \
                            "model = torch.compile(Net(16, 3))\n"
    assert _lint(captured) == []


def test_library_mode_flags_the_loop_model():
    findings = _lint(LOOP_MODEL, assume_compiled="modules")
    assert [(f.line, f.severity) for f in findings] == [(9, "error")]


def test_options_hidden_in_kwargs_or_variables_are_not_guessed():
    code = """
    import torch
    from torch_geometric.nn import GCNConv
    class Net(torch.nn.Module):
        def __init__(self, loops, **kw):
            super().__init__()
            self.a = GCNConv(16, 16, add_self_loops=loops)
            self.b = GCNConv(16, 16, **kw)
        def forward(self, x, edge_index):
            return self.b(self.a(x, edge_index), edge_index)
    model = torch.compile(Net(False))
    """
    assert _lint(code) == []


def test_fullgraph_does_not_silence_what_raises_under_it():
    code = """
    import torch
    from torch_geometric.nn import RGCNConv
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = RGCNConv(16, 16, num_relations=3)
        def forward(self, x, edge_index, edge_type):
            return self.conv(x, edge_index, edge_type)
    model = torch.compile(Net(), fullgraph=True)
    """
    findings = _lint(code)
    assert [f.line for f in findings] == [7] and "FastRGCNConv" in findings[0].message


def test_version_gating_is_declared_and_applied():
    # The layers' breaks live in PyG's code paths under dynamo: torch.compile
    # (torch >= 2.0) and PyG's compile support (torch_geometric >= 2.3); the
    # page says which versions were measured (torch 2.13.0 + PyG 2.8.1)
    from gnnlint.docs import expected_pages
    from gnnlint.rules import all_rules

    (rule,) = [r for r in all_rules() if r.code == "GNN014"]
    assert (rule.torch_versions, rule.pyg_versions) == (">=2.0", ">=2.3")
    page = expected_pages()["GNN014.md"]
    assert "torch `>=2.0`" in page and "torch_geometric `>=2.3`" in page and "torch 2.13.0 + PyG 2.8.1" in page
    code = LOOP_MODEL + "model = torch.compile(Net(16, 3))\n"
    for torch_version, pyg_version, found in (("2.13.0", "2.8.1", True), ("2.0", "2.3", True),
                                              ("2.4.1", "2.4.0", True), ("1.13.1", "2.8.1", False),
                                              ("2.13.0", "2.2.0", False)):
        got = _lint(code, torch_version=torch_version, pyg_version=pyg_version)
        assert bool(got) == found, (torch_version, pyg_version, got)
