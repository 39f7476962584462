"""Does this line run only where a version test turned ``torch.compile`` down?

Code that supports old and new PyG picks the compiler by a version or
capability test: ``if check_pyg_full_compile(): return torch.compile(self)``
``else: self.compile_submodules()``, with ``torch_geometric.compile`` in that
fallback. ``torch_geometric.compile`` is deprecated only from PyG 2.5 on, and
the fallback runs only on the versions the test rejected, so GNN010's
deprecation is not true of it.

A fallback here: the line sits in one branch of an ``if`` whose test reads a
version or a capability (``__version__``, a name or zero-argument call
mentioning ``version``, ``compile``, ``WITH_PT``, ``available``,
``support``) and whose other branch calls ``torch.compile``; or in a
function of this file that is called only from such a branch (one level:
``compile_submodules`` above).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.model import iter_children

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_VERSIONISH = re.compile(r"version|compile|WITH_PT|available|support", re.I)


def version_fallback(ctx: "FileContext", node: cst.CSTNode) -> bool:
    if _fallback_branch(ctx, node) is not None:
        return True
    func = ctx.enclosing_function(node)
    if func is None:
        return False
    callers = ctx.callers_of(func)
    return bool(callers) and all(_fallback_branch(ctx, call) is not None for call in callers)


def _fallback_branch(ctx: "FileContext", node: cst.CSTNode) -> Optional[cst.If]:
    """The version-test ``if`` one of whose branches holds ``node`` while the other calls torch.compile."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(anc, cst.If) and child is not anc.test and _versionish(ctx, anc.test):
            other = anc.orelse if child is anc.body else anc.body
            if other is not None and _calls_torch_compile(ctx, other):
                return anc
        child = anc
    return None


def _versionish(ctx: "FileContext", test: cst.BaseExpression) -> bool:
    return bool(_VERSIONISH.search(ctx.module.code_for_node(test)))


def _calls_torch_compile(ctx: "FileContext", branch: cst.CSTNode) -> bool:
    stack = [branch]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and ctx.compile_api(node.func) == "torch.compile":
            return True
        stack.extend(iter_children(node))
    return False
