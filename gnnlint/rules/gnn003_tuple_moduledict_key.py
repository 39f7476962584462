from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import literal_string_tuple
from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid

# Old versions (the only ones this rule runs for): see the page.
_OLD = (("torch_version", "2.1.0"), ("pyg_version", "2.4.0"))


def pyg_internal_key(parts: tuple[str, ...]) -> str:
    """The string PyG's ModuleDict stores a tuple key under.

    Mirrors ``torch_geometric.nn.ModuleDict.to_internal_key`` (2.4 – 2.8):
    ``("a.b", "to", "c")`` -> ``"<a#b___to___c>"``. Looking the string up goes
    through ``to_internal_key`` again, which leaves it unchanged.
    """
    return f"<{'___'.join(parts)}>".replace(".", "#")


class TupleModuleDictKey(Rule):
    """
    ## What it does
    Flags a `ModuleDict` — `torch_geometric.nn.ModuleDict` (and
    `ParameterDict`), `torch.nn.ModuleDict` or a subclass, `HeteroConv.convs`,
    an attribute assigned one in `__init__` — indexed with a **tuple** key
    inside a compiled region: a literal (`self.convs[("author", "writes",
    "paper")]`) or an edge-type variable (the loop variable of `for edge_type
    in self.edge_types`, of `for et in edge_index_dict.keys()`, a parameter
    annotated `EdgeType`).

    This rule is **version-aware**: it only runs when the target torch is
    older than 2.5 (`--torch-version 2.4`, `torch-version = "2.1"` in
    `[tool.gnnlint]`, or an installed torch < 2.5). On torch ≥ 2.5 dynamo
    inlines `ModuleDict.__getitem__` and the tuple key compiles without a
    break (checked on torch 2.13 + PyG 2.8.1 with `torch._dynamo.explain`:
    one graph, zero breaks, for literal keys, loop-variable keys and
    `HeteroConv`).

    ## Why is this bad?
    PyG's `ModuleDict` accepts tuple keys by overriding `__getitem__` and
    converting the tuple to a string. Before torch 2.5, dynamo traced a
    module's custom `__getitem__` only for `str`/`int` keys: a tuple key hit an
    assertion in `torch/_dynamo/variables/nn_module.py` and **broke the
    graph** at every lookup (pytorch/pytorch#111551, reported on torch 2.1.0;
    closed once `inline_inbuilt_nn_modules` became the default, pytorch PR
    #131275, released in torch 2.5.0). In a hetero model that looks up one
    module per edge type, that is one graph break per edge type per layer.
    With PyG < 2.5 even the string lookup broke the graph (`hasattr` in
    `to_internal_key`, fixed by pyg-team/pytorch_geometric#8363, PyG 2.5.0).

    Not flagged: string keys (`self.convs["author__writes__paper"]`,
    `self.convs["__".join(edge_type)]`), plain Python dicts keyed by tuples
    (`edge_index_dict[edge_type]`, `self.rel_index[edge_type]`), `HeteroData`
    lookups (`data["author", "writes", "paper"]`), and lookups outside the
    compiled region (`__init__`, `reset_parameters`).

    ## Example
    ```python
    class HeteroGNN(torch.nn.Module):
        def __init__(self, metadata):
            super().__init__()
            self.lins = ModuleDict({et: Linear(-1, 64) for et in metadata[1]})

        def forward(self, x_dict, edge_index_dict):
            out = self.lins[("author", "writes", "paper")](x_dict["author"])
            for edge_type in edge_index_dict.keys():
                out = out + self.lins[edge_type](x_dict[edge_type[0]])
            ...
    ```

    ## Use instead
    ```python
        def forward(self, x_dict, edge_index_dict):
            out = self.lins["<author___writes___paper>"](x_dict["author"])
            for edge_type, lin in self.lins.items():  # no __getitem__ at all
                out = out + lin(x_dict[edge_type[0]])
            ...
    ```

    ## Fix safety
    Safe for a literal tuple of strings on PyG's `ModuleDict`/`ParameterDict`:
    the fix writes the exact string PyG stores the module under
    (`ModuleDict.to_internal_key`: `"<src___rel___dst>"`, dots as `#`), and a
    string lookup returns the same module. Unsafe on a `torch.nn.ModuleDict`
    or an unknown subclass, whose key scheme gnnlint cannot see. No fix for
    variable keys: iterate `self.convs.items()` instead, or precompute the
    string keys in `__init__`.

    ## References
    - [pytorch/pytorch#111551: custom `ModuleDict.__getitem__(key: tuple)` produces a graph break](https://github.com/pytorch/pytorch/issues/111551)
    - [pytorch/pytorch#131275: turn on `inline_inbuilt_nn_modules` (torch 2.5)](https://github.com/pytorch/pytorch/pull/131275)
    - [pyg-team/pytorch_geometric#8363: avoid a graph break in `ModuleDict` and `ParameterDict` (PyG 2.5.0)](https://github.com/pyg-team/pytorch_geometric/pull/8363)
    - [pyg-team/pytorch_geometric#8344: `torch.compile` support in `HeteroConv` (iterate `.items()`)](https://github.com/pyg-team/pytorch_geometric/pull/8344)
    """

    code = "GNN003"
    name = "tuple-moduledict-key"
    summary = "ModuleDict indexed with a tuple key in a compiled region (graph break on torch < 2.5)"
    region = "compiled"
    triggers = (b"ModuleDict", b"ParameterDict", b"HeteroConv", b"convs")
    fix_applicability = "safe"
    torch_versions = "<2.5"

    VALID = (
        Valid("""
import torch
class Net(torch.nn.Module):
    def __init__(self, edge_types):
        super().__init__()
        self.convs = torch.nn.ModuleDict({"__".join(et): torch.nn.Linear(4, 4) for et in edge_types})
        self.rel_index = {et: i for i, et in enumerate(edge_types)}
        self.edge_types = edge_types

    def forward(self, x_dict, edge_index_dict):
        out = {}
        for et in self.edge_types:
            out[et] = self.convs["__".join(et)](x_dict[et[0]]) * self.rel_index[et]
            out[et] = out[et] + edge_index_dict[et].sum()
        return out
model = torch.compile(Net([("a", "to", "b")]))
"""),
        Valid("""
from torch_geometric.nn import ModuleDict
class Net(ModuleDict):
    pass
d = ModuleDict({("a", "to", "b"): Lin()})
print(d[("a", "to", "b")])  # eager
"""),
    )
    INVALID = (
        Invalid("""
import torch
from torch_geometric.nn import ModuleDict
class Net(torch.nn.Module):
    def __init__(self, metadata):
        super().__init__()
        self.lins = ModuleDict({et: torch.nn.Linear(4, 4) for et in metadata[1]})
        self.edge_types = metadata[1]

    def forward(self, x_dict):
        out = self.lins[("author", "writes", "paper")](x_dict["author"])
        for edge_type in self.edge_types:
            out = out + self.lins[edge_type](x_dict[edge_type[0]])
        return out
model = torch.compile(Net(metadata))
""", lines=(11, 13), options=_OLD, expected_fix="""
import torch
from torch_geometric.nn import ModuleDict
class Net(torch.nn.Module):
    def __init__(self, metadata):
        super().__init__()
        self.lins = ModuleDict({et: torch.nn.Linear(4, 4) for et in metadata[1]})
        self.edge_types = metadata[1]

    def forward(self, x_dict):
        out = self.lins["<author___writes___paper>"](x_dict["author"])
        for edge_type in self.edge_types:
            out = out + self.lins[edge_type](x_dict[edge_type[0]])
        return out
model = torch.compile(Net(metadata))
"""),
        Invalid("""
import torch
from torch_geometric.nn import HeteroConv, SAGEConv
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = HeteroConv({("a", "to", "b"): SAGEConv(-1, 8)})

    def forward(self, x_dict, edge_index_dict):
        out = {}
        for et, edge_index in edge_index_dict.items():
            out[et[-1]] = self.conv.convs[et]((x_dict[et[0]], x_dict[et[-1]]), edge_index)
        return out
model = torch.compile(Net())
""", lines=(12,), options=_OLD),
    )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        ctx = self.context
        key = _key_of(node)
        if key is None or not ctx.tuple_key(key):
            return
        kind = ctx.module_dict_kind(node.value, node)
        if kind is None:
            return
        region = ctx.compiled_region(node)
        if region is None:
            return
        container = ctx.module.code_for_node(node.value)
        fix: Optional[FixSpec] = None
        parts = literal_string_tuple(key)
        if parts is not None and not any("___" in p for p in parts):
            internal = pyg_internal_key(parts)
            applicability = "safe" if kind == "pyg" else "unsafe"
            replacement = cst.SimpleString(repr(internal) if '"' in internal else f'"{internal}"')
            edit = NodeEdit(node, node.with_changes(slice=[cst.SubscriptElement(cst.Index(replacement))]))
            fix = FixSpec(applicability, f"Index with the string key `\"{internal}\"`", (edit,))
            advice = f"Index with the string key `\"{internal}\"`."
        else:
            advice = (f"Iterate `{container}.items()` instead of looking modules up by edge type, or "
                      f"precompute string keys in `__init__`.")
        self.report(node, f"`{container}[...]` with a tuple key breaks the graph in the {region} on "
                          f"torch < 2.5. Dynamo cannot trace a custom `__getitem__` with a tuple "
                          f"(pytorch#111551). {advice}", fix)


def _key_of(node: cst.Subscript) -> Optional[cst.BaseExpression]:
    if len(node.slice) > 1:
        if all(isinstance(e.slice, cst.Index) for e in node.slice):
            return cst.Tuple([cst.Element(e.slice.value) for e in node.slice])  # type: ignore[union-attr]
        return None
    index = node.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    return index.value
