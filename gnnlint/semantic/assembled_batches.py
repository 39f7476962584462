"""A compiled model run on a PyG ``Batch`` assembled per call: "does each call batch graphs of new sizes?"

A module may cut its own input into graphs and batch them before running a compiled GNN::

    def forward(self, batch):
        node_ft, edge_index, mask = self.construct_graph(batch)
        graphs = []
        for i, nodes in enumerate(node_ft):
            graphs.append(Data(x=nodes[mask[i]], edge_index=edge_index[i]))
        graphs = Batch.from_data_list(graphs)
        preds = self.gnn(graphs.x, graphs.edge_index)

No loader feeds ``self.gnn``, yet each call batches graphs cut from the input, each with its own
nodes and edges: the node and edge counts follow the caller's data, and without ``dynamic=True``
the first call with a new size recompiles it (GNN007 reports it when no loader feed is found).
Only where it is sure: the compiled object is called in a function on a value derived from
``torch_geometric``'s ``Batch.from_data_list(graphs)`` made there (or by a local helper it hands its
values), and ``graphs`` is built there from that function's parameters (appended to in a loop over
them, or a comprehension over them) as ``Data(...)`` whose ``edge_index`` comes from them: graphs
sharing one fixed ``self.edge_index`` have one size, and only their count follows the batch size (a
last partial batch), which is not reported.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

from gnnlint.semantic.per_call_feeds import per_call_feed

if TYPE_CHECKING:
    from gnnlint.context import FileContext


class AssembledFeed(NamedTuple):
    func: str  # the function batching the graphs and running the compiled object ("forward")
    batch: str  # the batching call's text ("Batch.from_data_list(graphs)")
    call: cst.Call


def assembled_batch_feed(ctx: "FileContext", site_node: cst.CSTNode) -> Optional[AssembledFeed]:
    """The function that runs what ``site_node`` compiles on a ``Batch`` it assembles per call from its
    parameters, or None (per_call_feeds.py)."""
    def made(func, call: cst.Call, from_params: set[str]) -> Optional[str]:
        return ctx.module.code_for_node(call) if _assembles(ctx, func, call, from_params) else None

    found = per_call_feed(ctx, site_node, made)
    return AssembledFeed(*found) if found is not None else None


def _assembles(ctx: "FileContext", func, call: cst.Call, from_params: set[str], depth: int = 0) -> bool:
    """``call`` batches graphs built from ``from_params``: ``Batch.from_data_list(graphs)``, or a
    local helper returning one built from the values it is passed (``to_pyg_batch(x, ei, mask)``)."""
    if _from_data_list(ctx, call):
        return bool(call.args) and _built_from(ctx, func, call.args[0].value, from_params)
    helper = ctx.local_callee(call) if depth < 2 else None
    if helper is None or not hasattr(helper, "returns") or not ctx._call_mentions(call, from_params):
        return False
    # the helper's parameters the call hands values of the caller's parameters (not `self.edge_index`)
    passed = {p for p in set(helper.params) - {"self", "cls"}
              if (arg := ctx.arg_for_param(helper, call, p)) is not None and ctx.names_in(arg) & from_params}
    own = ctx._tainted(helper, passed)
    for ret in helper.returns:
        if isinstance(ret.value, cst.Call) and _assembles(ctx, helper, ret.value, own, depth + 1):
            return True
    return False


def _from_data_list(ctx: "FileContext", call: cst.Call) -> bool:
    resolved = ctx.resolve(call.func) or ""
    return resolved.startswith("torch_geometric") and resolved.endswith("Batch.from_data_list")


def _built_from(ctx: "FileContext", func, graphs: cst.BaseExpression, from_params: set[str]) -> bool:
    """``graphs`` holds graphs whose structure comes from the parameters' values: a comprehension
    over them, or a list name appended to in a loop over them, making ``Data(x=..., edge_index=...)``
    with an ``edge_index`` computed from them (the same fixed ``self.edge_index`` for every graph
    makes graphs of one size: only their count follows the batch)."""
    if isinstance(graphs, cst.Name):
        binding = ctx.lookup(graphs.value, graphs)[0]
        if binding is not None and binding.how == "assign" and isinstance(binding.value, (cst.ListComp, cst.GeneratorExp)):
            graphs = binding.value  # data_list = [Data(...) for i in ...]
    if isinstance(graphs, (cst.ListComp, cst.GeneratorExp)):
        names = set(from_params)
        comp = graphs.for_in
        while comp is not None:
            if ctx.names_in(comp.iter) & names:
                names |= ctx.names_in(comp.target)
            comp = comp.inner_for_in
        return _varying_structure(ctx, func, graphs.elt, names)
    if not isinstance(graphs, cst.Name):
        return False
    for call in func.calls:
        target = call.func
        if isinstance(target, cst.Attribute) and target.attr.value in ("append", "extend") \
                and isinstance(target.value, cst.Name) and target.value.value == graphs.value and call.args:
            if _varying_structure(ctx, func, call.args[0].value, _with_loop_targets(ctx, func, call, from_params)):
                return True
    return False


def _varying_structure(ctx: "FileContext", func, graph: cst.BaseExpression, names: set[str]) -> bool:
    """``graph`` (or the ``Data(...)`` a name holds) takes its ``edge_index`` from ``names``."""
    if isinstance(graph, cst.Name):
        binding = ctx.lookup(graph.value, graph)[0]
        graph = binding.value if binding is not None and binding.how == "assign" else graph
    if not isinstance(graph, cst.Call) or (ctx.last_part(graph.func) or "") not in ("Data", "HeteroData"):
        return False
    edge_index = next((a.value for a in graph.args if a.keyword is not None and a.keyword.value == "edge_index"),
                      graph.args[1].value if len(graph.args) > 1 and graph.args[1].keyword is None else None)
    return edge_index is not None and bool(ctx.names_in(edge_index) & names)


def _with_loop_targets(ctx: "FileContext", func, node: cst.CSTNode, names: set[str]) -> set[str]:
    """``names`` plus what the loops around ``node`` bind from them (``for g in node_ft``), and what is
    computed from those."""
    out = set(names)
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(anc, cst.For) and ctx.names_in(anc.iter) & out:
            out |= ctx.names_in(anc.target)
    return ctx._tainted(func, out)
