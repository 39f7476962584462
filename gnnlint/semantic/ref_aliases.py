"""Other names for a compiled object: ``eval_model = ema.module if ema is not None else model``.

A training script keeps the compiled model under one name and evaluates
through another: ``eval_model = ema_model.module if ema_model is not None else
model``, ``net = model or fallback``, ``eval_model = default(self.ema_model,
self.model)`` with a local helper returning one of its parameters (``def
default(v, d): return v if exists(v) else d``). The new name may hold the
compiled object (one branch of the choice is it), as ``model =
torch.compile(model) if flag else model`` may: what it runs is compiled code
when the program takes that branch.

``alias_refs(ref)`` answers with the refs (compile_sites.py's tuples) of the
names assigned such a choice after the ref's binding, in the same function;
``returned_param(callee, param)`` says whether a local function returns its
parameter (so the name its call is assigned to aliases what was passed).
compile_sites.py's ``ref_passes`` yields both as local hand-offs.
"""
from __future__ import annotations

from typing import Iterator

import libcst as cst

from gnnlint.semantic.model import FuncInfo, assigned_targets


def choice_values(expr: cst.BaseExpression, depth: int = 0) -> Iterator[cst.BaseExpression]:
    """The values ``expr`` may evaluate to: both branches of ``a if c else b``, each operand of ``a or b``."""
    if depth > 3:
        return
    if isinstance(expr, cst.IfExp):
        yield from choice_values(expr.body, depth + 1)
        yield from choice_values(expr.orelse, depth + 1)
    elif isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
        yield from choice_values(expr.left, depth + 1)
        yield from choice_values(expr.right, depth + 1)
    else:
        yield expr


class RefAliases:
    """Names that may hold a compiled object under another name. Mixed into FileContext."""

    def alias_refs(self, ref: tuple) -> list[tuple]:
        """Refs of the names assigned a choice one of whose values is ``ref``'s object
        (``eval_model = ema.module if ema is not None else model``), or the object itself
        (``model_dp = model``, also in a function reading the module-level name)."""
        if ref[0] not in ("name", "self"):
            return []
        if ref[0] == "name":  # the ref's own scope (None: the module's top level)
            scopes = [(ref[2], ref[2].bindings if ref[2] is not None else self.module_bindings)]
            if ref[2] is None:  # `def main(): model_dp = model` reading the module-level compiled model
                scopes += [(func, func.bindings) for func in self.func_info.values()
                           if ref[1] not in func.bindings and func.bindings]
        else:  # `self.model`: any method of the class
            scopes = [(method, method.bindings) for method in ref[2].methods.values()]
        out = []
        for func, scope_bindings in scopes:
            for name, bindings in scope_bindings.items():
                for binding in bindings:
                    value = binding.value
                    if binding.how != "assign" or not isinstance(value, (cst.IfExp, cst.BooleanOperation, cst.Name)):
                        continue
                    if isinstance(value, cst.Name) and name == ref[1]:
                        continue  # `model = model`: the name itself
                    if not any(self.is_ref_expr(choice, ref, choice) for choice in choice_values(value)):
                        continue
                    stmt = self.statement_of(value)
                    out.append(("name", name, func, self.order.get(stmt, 0), stmt))
        return out

    def returned_param(self, callee: FuncInfo, param: str) -> bool:
        """``def default(v, d): return v if exists(v) else d``: ``callee`` returns ``param``
        (or a choice including it), and never rebinds it."""
        if any(b.how != "param" for b in callee.bindings.get(param, [])):
            return False
        return any(ret.value is not None and any(isinstance(choice, cst.Name) and choice.value == param
                                                 for choice in choice_values(ret.value))
                   for ret in callee.returns)

    def call_result_refs(self, call: cst.Call) -> list[tuple]:
        """The refs of the names a local call's result is assigned to (``m = default(a, model)``)."""
        parent = self.parent.get(call)
        if not isinstance(parent, (cst.Assign, cst.AnnAssign)) or parent.value is not call:
            return []
        return [r for r in (self._ref_for_target(t, call) for t in assigned_targets(parent)) if r is not None]
