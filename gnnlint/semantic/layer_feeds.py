"""A library function's compiled kernel: "does a function other files call run this compiled function on a graph it is handed?"

A library may compile a kernel that a function of its API runs on the graph
its callers hand it (``@torch.compile def sum_edge_node_feat(efeat, src_feat,
dst_feat, src_idx, dst_idx)``, called by ``sum_efeat(efeat, nfeat, graph)``
with ``graph.edge_index``). No loader of the project feeds it: the callers in
other files do, with every graph of every batch -- new node and edge counts
each time. So the compiled kernel sees as many sizes as the graphs
(``layer_input_feed``; GNN007 reports it when no loader feed is found).

Only where it is sure to be so: the compiled object is a function (a compiled
model is fed by the project's own loops, feeds.py); it is called in a
top-level function that nothing in its file calls (so not one a script drives
on its own fixed graph; not in a file run as a script), with an argument
computed from a graph parameter of that function (``graph``, ``data``,
``batch``: a batch kind); the file is not a test (tests call on fixed inputs).
A layer's ``forward`` running a compiled function on its input ``x`` is not
enough: the input may be a fixed grid (a weather model's), one size always.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

from gnnlint.semantic.kinds import BATCH

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_TEST_DIRS = ("tests", "test", "testing", "unittests")


class LayerFeed(NamedTuple):
    layer: str  # the function running the compiled kernel ("sum_efeat")
    inputs: tuple[str, ...]  # its graph parameters the compiled call reads ("graph",)
    call: cst.Call


def layer_input_feed(ctx: "FileContext", site_node: cst.CSTNode) -> Optional[LayerFeed]:
    """The library function that runs the function compiled at ``site_node`` on a graph it is handed."""
    site = ctx.compile_site(site_node)
    if site is None or site.target_kind != "function" or test_file(ctx.path) or _runs_as_script(ctx):
        return None
    for ref in ctx.compiled_refs(site_node):
        for call in _calls(ctx, ref):
            func = ctx.enclosing_function(call)
            if func is None or func.cls is not None or func.parent is not None or _called_here(ctx, func):
                continue
            graphs = {p for p in func.params if ctx.kind(func.params[p].name) == BATCH}
            read = sorted(p for p in graphs if ctx._call_mentions(call, ctx._tainted(func, {p})))
            if read:
                return LayerFeed(func.name, tuple(read), call)
    return None


def _calls(ctx: "FileContext", ref: tuple) -> list:
    """The calls of a compiled object; for a compiled function also the calls by its name where every
    binding of the name is a definition (`if HAVE_PYG: def f ... else: def f` placeholders)."""
    calls = ctx.ref_calls(ref)
    if ref[0] != "func":
        return calls
    name = ref[1].name
    bindings = ctx.module_bindings.get(name, [])
    if len(bindings) > 1 and all(b.how == "def" for b in bindings):
        seen = {id(c) for c in calls}
        calls = calls + [c for c in ctx.all_calls() if isinstance(c.func, cst.Name) and c.func.value == name
                         and id(c) not in seen]
    return calls


def _called_here(ctx: "FileContext", func) -> bool:
    """Something in this file calls ``func`` (or a function of its name: an alternative definition)."""
    return bool(ctx.callers_of(func)) or any(isinstance(c.func, cst.Name) and c.func.value == func.name
                                             for c in ctx.all_calls())


def _runs_as_script(ctx: "FileContext") -> bool:
    """``if __name__ == "__main__":``: a script, whose own calls decide what its functions see."""
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.If) and "__main__" in ctx.module.code_for_node(stmt.test):
            return True
    return False


def test_file(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or any(p in _TEST_DIRS for p in parts[-4:-1])
