"""Which argument does this call give back?

A training script hands its (compiled) model to a set-up helper that moves
or wraps it and returns it, often with something else::

    # utils/parallel.py
    def setup_model_parallel(model, device):
        if torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
            return model.to(device), True
        return model.to(device), False

    # train.py
    model = torch.compile(model)
    model, is_parallel = setup_model_parallel(model, device)   # still the compiled model
    net = setup_model_parallel(net, device)[0]                 # likewise

``returned_argument(call, index)`` answers with the argument expression of
``call`` that element ``index`` of its result holds (``-1``: the whole
result): a local function's ``return`` statements read here, another project
file's through its ``returned_args`` facts (``export_returned_args``: a
top-level function that moves or wraps a parameter -- ``.to()``, ``.cuda()``,
``DataParallel`` / ``DistributedDataParallel`` -- and returns it at one
position in every ``return``). flow.py (``compiled_value``) and
compile_sites.py (``ref_passes``) ask it, so the name the result is bound to
keeps the compiled object.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import FuncInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_MOVES = ("to", "cuda", "float", "double", "half", "train", "eval")
_WRAPPERS = ("DataParallel", "DistributedDataParallel", "DDP", "FullyShardedDataParallel", "FSDP")


def returned_argument(ctx: "FileContext", call: cst.Call, index: int) -> Optional[cst.BaseExpression]:
    """The argument of ``call`` that element ``index`` of its result (-1: the result) is, moved or wrapped."""
    callee = ctx.local_callee(call)
    if isinstance(callee, FuncInfo):
        found = _returned_param(ctx, callee)
        if found is None or found[1] != index:
            return None
        return ctx.arg_for_param(callee, call, found[0])
    facts = ctx.project.returned_args
    if not facts:
        return None
    told = facts.get(ctx.imported_function_key(call) or "")
    if told is None:
        return None
    position, _, at = told.split(",")[0].partition(">")  # (the engine appends ", from <file>")
    if int(at or -1) != index:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[int(position)].value if int(position) < len(positional) else None


def result_index(ctx: "FileContext", binding) -> Optional[tuple[cst.Call, int]]:
    """(call, index) when ``binding`` binds ``name`` to element ``index`` of a call's result
    (``model, ok = setup(model)``; ``model = setup(model)[0]``; -1: ``model = setup(model)``)."""
    value = binding.value
    if binding.how == "unpack" and isinstance(value, cst.Call) and binding.index >= 0:
        return value, binding.index
    if binding.how != "assign":
        return None
    if isinstance(value, cst.Call):
        return value, -1
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call) and len(value.slice) == 1 \
            and isinstance(value.slice[0].slice, cst.Index) and isinstance(value.slice[0].slice.value, cst.Integer):
        return value.value, int(value.slice[0].slice.value.value)
    return None


def _returned_param(ctx: "FileContext", func: FuncInfo, wraps_only: bool = False) -> Optional[tuple[str, int]]:
    """(parameter, result index) when every ``return`` of ``func`` gives that parameter, moved or wrapped,
    at that position (-1: as the whole value), and the function moves or wraps it somewhere (``wraps_only``:
    wraps it -- what another file is told, as the engine's byte test sees it: ``facts.may_export_wrapper``)."""
    def compute():
        if not func.returns:
            return None
        params = [p.name.value for p in func.node.params.params if p.name.value not in ("self", "cls")]
        for param in params:
            spots = set()
            for ret in func.returns:
                spots.add(_spot(ctx, ret.value, param))
            if len(spots) == 1 and None not in spots and _moves_or_wraps(ctx, func, param, wraps_only):
                return param, spots.pop()
        return None
    return ctx._memoised((func, "returned_param", wraps_only), compute, None)


def _spot(ctx: "FileContext", value: Optional[cst.BaseExpression], param: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, cst.Tuple):
        hits = [i for i, e in enumerate(value.elements) if _is_param(ctx, e.value, param, 0)]
        return hits[0] if len(hits) == 1 else None
    return -1 if _is_param(ctx, value, param, 0) else None


def _is_param(ctx: "FileContext", expr: cst.BaseExpression, param: str, depth: int) -> bool:
    """``param``, ``param.to(device)``, ``DataParallel(param)``, or a name every reaching binding of
    which is one of these."""
    if depth > 4:
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MOVES:
            return _is_param(ctx, func.value, param, depth + 1)
        if (ctx.last_part(func) or "") in _WRAPPERS and expr.args:
            return _is_param(ctx, expr.args[0].value, param, depth + 1)
        return False
    if not isinstance(expr, cst.Name):
        return False
    reaching = ctx.reaching(expr.value, expr)
    if not reaching:
        return False
    for binding, _scope in reaching:
        if binding.how == "param":
            if expr.value != param:
                return False
        elif binding.how != "assign" or binding.value is None or not _is_param(ctx, binding.value, param, depth + 1):
            return False
    return True


def _moves_or_wraps(ctx: "FileContext", func: FuncInfo, param: str, wraps_only: bool) -> bool:
    """The function moves or wraps the parameter (a set-up helper, not any function returning its input)."""
    for call in func.calls:
        f = call.func
        if not wraps_only and isinstance(f, cst.Attribute) and f.attr.value in ("to", "cuda") \
                and isinstance(f.value, cst.Name) and f.value.value == param:
            return True
        if (ctx.last_part(f) or "") in _WRAPPERS and call.args and isinstance(call.args[0].value, cst.Name) \
                and call.args[0].value.value == param:
            return True
    return False


def export_returned_args(ctx: "FileContext") -> None:
    """Tell the importers of each top-level set-up helper which parameter it returns, and where."""
    for name, func in ctx.functions.items():
        if func.cls is not None or func.parent is not None or func.is_async or not func.returns:
            continue
        found = _returned_param(ctx, func, wraps_only=True)
        if found is None:
            continue
        params = [p.name.value for p in func.node.params.params]
        ctx.exported.returned_args.append((ImportRef("", name), f"{params.index(found[0])}>{found[1]}"))


def returned_targets(ctx: "FileContext", call: cst.Call, arg: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The assignment targets that receive ``arg`` back from ``call`` (``model, ok = setup(model, dev)``:
    ``model``; ``net = setup(net)[0]``: ``net``)."""
    parent, index = ctx.parent.get(call), -1
    if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1 \
            and isinstance(parent.slice[0].slice, cst.Index) and isinstance(parent.slice[0].slice.value, cst.Integer):
        index, call_or_sub, parent = int(parent.slice[0].slice.value.value), parent, ctx.parent.get(parent)
    else:
        call_or_sub = call
    if not isinstance(parent, cst.Assign) or parent.value is not call_or_sub or len(parent.targets) != 1:
        return []
    target = parent.targets[0].target
    if isinstance(target, (cst.Tuple, cst.List)):
        if index != -1:
            return []
        out = []
        for i, element in enumerate(target.elements):
            if returned_argument(ctx, call, i) is arg:
                out.append(element.value)
        return out
    return [target] if returned_argument(ctx, call, index) is arg else []
