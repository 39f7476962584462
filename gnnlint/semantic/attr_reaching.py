"""Which of a class's ``self.<attr>`` assignments reach a line of the same method?

A constructor often picks a submodule in an ``if``/``elif`` and compiles only
one arm's choice::

    if hierarchical:
        self.gnn = GnnHier(...)          # never compiled
    else:
        self.gnn = GnnFlat(...)
        self.gnn = torch.compile(self.gnn)

``self.gnn`` read at the compile call holds what the method assigned last on
the way there -- ``GnnFlat`` -- not every value the class ever stores in it.
``attr_values_reaching`` keeps, of the values assigned in the method holding
``at`` before it, the last one in a block that holds ``at`` and the
conditional ones after it (``x = A(); if c: x = B()`` -> both), as
``names.reaching`` does for local names. Assignments that merely re-bind the
attribute to itself (``self.gnn = torch.compile(self.gnn)``) pass through.
When no such dominating assignment exists (a read in another method, or only
conditional assignments before ``at``) every value is kept. Asked by
``choices._attr_choices`` (which classes a compiled ``self.<attr>`` may be).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.kinds import _MODEL_METHODS_SELF

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext



def attr_values_reaching(ctx: FileContext, cls, attr: str, at: cst.CSTNode) -> list:
    """The values assigned to ``self.<attr>`` in ``cls`` (``class_attr_values``)
    that may be the one read at ``at``."""
    values = ctx.class_attr_values(cls, attr)
    func = ctx.enclosing_function(at)
    if func is None or len(values) < 2:
        return values
    use = ctx.order.get(ctx.statement_of(at), ctx.order.get(at))
    if use is None:
        return values
    before = []
    for value in values:
        stmt = ctx.statement_of(value)
        order = ctx.order.get(stmt)
        if order is not None and order < use and ctx.enclosing_function(value) is func:
            before.append((order, value, stmt))
    before.sort(key=lambda item: item[0])
    kept = []
    for _, value, stmt in reversed(before):
        if rebinds_itself(ctx, value, attr):
            continue
        kept.append(value)
        if not _conditional(ctx, stmt, at):
            return list(reversed(kept))
    return values


def _conditional(ctx: FileContext, stmt: cst.CSTNode, at: cst.CSTNode) -> bool:
    """``stmt`` sits in the body of an if/for/while/try arm that does not hold
    ``at`` (a ``with`` body runs unconditionally)."""
    use_ancestors = set(map(id, ctx.ancestors(at)))
    for anc in ctx.ancestors(stmt):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return False
        if isinstance(anc, cst.BaseSuite) and not isinstance(ctx.parent.get(anc), cst.With):
            return id(anc) not in use_ancestors
    return False


def rebinds_itself(ctx: FileContext, value: cst.CSTNode, attr: str) -> bool:
    """``self.model = torch.compile(self.model)`` / ``self.model.to(device)``:
    the value is what ``self.<attr>`` already held."""
    while isinstance(value, cst.Call):
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in _MODEL_METHODS_SELF:
            value = value.func.value
        elif ctx.compile_api(value.func) and value.args:
            value = value.args[0].value
        else:
            return False
    return isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
        and value.value.value == "self" and value.attr.value == attr
