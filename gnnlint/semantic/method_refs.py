"""Objects whose method is re-bound to a compiled version of itself: "does ``obj.step(...)`` run compiled code?"

A simulator or a sampler often compiles one method of a model and keeps the
rest eager: ``model.step = torch.compile(model.step)`` (a bound method
compiled and assigned back onto the object, often in a script, not in the
class's file), ``workload.loss_fn = torch.compile(workload.loss_fn)``, or in
the class itself ``self.encode = torch.compile(self.encode)``. The object is
no compiled wrapper -- ``model(x)`` still runs its eager forward -- but every
``obj.step(...)`` runs the compiled method, and so does ``model.step(...)`` in
a function the object is handed to (a rollout helper of another file).

The holder of such a method is a ref ``("method", base, attr)`` (``base`` a
``("name", ...)``/``("self", ...)`` ref of compile_sites.py): compile_sites
asks ``method_compile_refs`` for a compile site's refs, ``is_ref_expr``
matches ``obj.attr`` through ``method_ref_expr``, and ``ref_passes`` follows
the object into local functions (``method_ref_passes``); handoffs.py tells
other files with a parameter spec ending in ``@attr`` (``rollout:0@step``),
which ``handed_method`` reads back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from gnnlint.semantic.kinds import OPTIMIZER

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext

METHOD_SEP = "@"  # `rollout:0@step`: the parameter holds an object whose `step` is compiled


def _same_attr(ctx: "FileContext", target: cst.BaseExpression, site_node: cst.Call) -> bool:
    """``obj.attr = torch.compile(obj.attr, ...)``: the call compiles the attribute it is assigned to."""
    arg = site_node.args[0].value if site_node.args and site_node.args[0].keyword is None else None
    return arg is not None and ctx.module.code_for_node(arg) == ctx.module.code_for_node(target)


def method_compile_refs(ctx: "FileContext", targets: list, site_node: cst.Call) -> list[tuple]:
    """Refs of the objects a compile call re-binds one method (or callable
    attribute) of: ``model.step = torch.compile(model.step)`` gives
    ``("method", ("name", "model", ...), "step")``; ``self.encode =
    torch.compile(self.encode)`` in a class's method gives one for each local
    instance of the class (``vae = VAE()``: ``vae.encode(x)``)."""
    refs: list[tuple] = []
    for target in targets:
        if not (isinstance(target, cst.Attribute) and target.attr.value != "forward"
                and isinstance(target.value, (cst.Name, cst.Attribute)) and _same_attr(ctx, target, site_node)):
            continue
        owner, attr = target.value, target.attr.value
        if attr == "step" and (ctx.kind(owner) == OPTIMIZER or "opt" in (ctx.last_part(owner) or "")):
            continue  # torch.compile(opt.step): an optimizer's step (optim.py)
        if isinstance(owner, cst.Name) and owner.value == "self":
            func = ctx.enclosing_function(site_node)
            cls = func.cls if func is not None and func.parent is None else None
            if cls is not None and ctx.method_of(cls, attr) is not None:
                refs += [("method", inst, attr) for inst in ctx._instance_refs(cls)]
            continue
        base = ctx._ref_for_target(owner, site_node)
        if base is not None:
            refs.append(("method", base, attr))
    return refs


def method_ref_expr(ctx: "FileContext", expr: cst.CSTNode, ref: tuple, at: cst.CSTNode) -> bool:
    """``expr`` is the compiled method of the object a ``("method", ...)`` ref holds (``model.step``)."""
    return isinstance(expr, cst.Attribute) and expr.attr.value == ref[2] and ctx.is_ref_expr(expr.value, ref[1], at)


def method_ref_passes(ctx: "FileContext", ref: tuple) -> Iterator[tuple[str, object, Optional[cst.Call]]]:
    """The object handed to a local function (``rollout(model, ...)``): that
    function's parameter holds it, with the same method compiled; handed to
    another file's function: ``("handed", None, call)`` (not a wrapper of it)."""
    for how, new, call in ctx.ref_passes(ref[1]):
        if how == "ref" and isinstance(new, tuple) and new[0] in ("name", "self"):
            yield "ref", ("method", new, ref[2]), call
        elif how == "external" and call is not None and ctx._imported_function(call) is not None:
            yield "handed", None, call  # `ssm_rollout(model, ...)` of another file (handed_calls.py)


def passing_base(ref: tuple) -> tuple[tuple, str]:
    """(the ref to find among a call's arguments, the spec suffix telling the method)."""
    if ref[0] == "method":
        return ref[1], METHOD_SEP + ref[2]
    return ref, ""


def handed_method(spec: str) -> tuple[str, Optional[str]]:
    """``"0@step"`` -> ``("0", "step")``: a handed object whose ``step`` is compiled."""
    spec, sep, attr = spec.partition(METHOD_SEP)
    return spec, (attr if sep and attr else None)
