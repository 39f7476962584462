"""A compiled submodule next to one compiled with ``dynamic=True``: "does the class say its inputs change size?"

A model compiling its own submodules one by one says which of them see changing shapes::

    self.features_embedder = torch.compile(self.features_embedder, dynamic=True)
    self.node_type_embedder = torch.compile(self.node_type_embedder)
    ...
    def forward(self, obs):
        g, num_nodes, ... = obs
        features[:num_nodes, :k] = self.node_type_embedder(torch.LongTensor([2] * num_nodes))
        features[:num_nodes, k:] = self.features_embedder(orig_features[:num_nodes])

Both run in the same method on values computed from its inputs (the same per-call graph), and the
class declares that the inputs of one change size; the other, compiled without ``dynamic=``, sees the
same changing sizes (GNN007 reports it when no loader feed is found). Only a submodule the class
compiles itself (``self.<a> = torch.compile(self.<a>)``) with a sibling compiled ``dynamic=True`` in
the same class, both called in one method with arguments computed from that method's parameters, and
not on the sibling's output (``self.a(self.b(x))``: what ``b`` returns may have one size), and not
when the sibling runs only under an optional flag of the method (``if return_pma_attention:``, the
parameter defaulting to False or None): that branch is no evidence for the method's own path.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


class SiblingFeed(NamedTuple):
    sibling: str  # the submodule compiled with dynamic=True ("self.features_embedder")
    method: str  # the method running both ("forward")
    call: cst.Call  # the call of the submodule compiled without dynamic=


def dynamic_sibling_feed(ctx: "FileContext", site_node: cst.CSTNode) -> Optional[SiblingFeed]:
    """The sibling compiled with ``dynamic=True`` whose inputs come from the same per-call data as the
    submodule compiled (without ``dynamic=``) at ``site_node``, or None."""
    own = _self_refs(ctx, site_node)
    if not own:
        return None
    cls = own[0][2]
    siblings = [(node, refs) for node, _site in ctx.compile_sites if node is not site_node
                and ctx.compile_dynamic(node) is True and (refs := _self_refs(ctx, node)) and refs[0][2] is cls]
    if not siblings:
        return None
    mine = _fed_calls(ctx, own)
    for node, refs in siblings:
        # a sibling run only when an optional flag is set (`if return_attention:`) is no evidence
        # that the per-call inputs of the method's own path change size
        theirs = [(f, c) for f, c in _fed_calls(ctx, refs) if not ctx._params_set_for(c, f)]
        for func, call in mine:
            # run in the same method on values of the same parameter (`obs` of both; not
            # `pathology` beside the sibling's `cell_data`)
            same = [c for f, c in theirs if f is func and _sources(ctx, func, c) & _sources(ctx, func, call)]
            # fed the sibling's output (`self.a(self.b(x))`): what the sibling returns may have one size
            if same and not any(_feeds_into(ctx, func, c, call) for c in same):
                return SiblingFeed(ctx.module.code_for_node(_target(node)), func.name, call)
    return None


def _feeds_into(ctx: "FileContext", func, sibling_call: cst.Call, call: cst.Call) -> bool:
    """``call`` takes what ``sibling_call`` returns: nested in its arguments, or through names."""
    if any(a is call for a in ctx.ancestors(sibling_call)):
        return True
    assign = ctx.parent.get(sibling_call)
    names = set()
    for target in assign.targets if isinstance(assign, cst.Assign) else ():
        # `out = self.b(x)`, `out, attn = self.b(x)`
        elements = [e.value for e in target.target.elements] if isinstance(target.target, (cst.Tuple, cst.List)) \
            else [target.target]
        names |= {e.value for e in elements if isinstance(e, cst.Name)}
    return bool(names) and ctx._call_mentions(call, ctx._tainted(func, names))


def _sources(ctx: "FileContext", func, call: cst.Call) -> set:
    """The parameters of ``func`` whose values ``call``'s arguments are computed from."""
    return {p for p in set(func.params) - {"self", "cls"} if ctx._call_mentions(call, ctx._tainted(func, {p}))}


def _target(site_node: cst.CSTNode) -> cst.CSTNode:
    return site_node.args[0].value if isinstance(site_node, cst.Call) and site_node.args else site_node


def _self_refs(ctx: "FileContext", site_node: cst.CSTNode) -> list[tuple]:
    """``self.<a> = torch.compile(self.<a>, ...)`` in a method of a class: its ``("self", a, cls)`` refs."""
    if not isinstance(site_node, cst.Call):
        return []
    target = _target(site_node)
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
        return []
    return [ref for ref in ctx.compiled_refs(site_node) if ref[0] == "self" and ref[1] == target.attr.value]


def _fed_calls(ctx: "FileContext", refs: list[tuple]) -> list[tuple]:
    """``(method, call)`` for each call of the compiled submodule whose arguments come from the
    parameters of the method making it."""
    out = []
    for ref in refs:
        for call in ctx.ref_calls(ref):
            func = ctx.enclosing_function(call)
            if func is None or func.cls is not ref[2]:
                continue
            params = set(func.params) - {"self", "cls"}
            if params and ctx._call_mentions(call, ctx._tainted(func, params)):
                out.append((func, call))
    return out
