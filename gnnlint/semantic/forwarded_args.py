"""Arguments a compiling helper forwards: "what does the compiled object of ``check(model, x, n=2)`` get?"

A test utility or a runner compiles the module it is handed and runs it on the rest of its
arguments::

    def assert_compiles(module, *args, **kwargs):         # tests/utils.py
        compiled = torch.compile(module, backend="eager")
        return compiled(*args, **kwargs)

    assert_compiles(EnergyAggregation(), energy, batch, num_graphs=2)   # tests/test_heads.py

The compiled forward then sees exactly what the caller passes after the module: ``energy,
batch, num_graphs=2``, so ``if num_graphs is None: int(batch.max().item()) + 1`` never runs
compiled (heldout14 molnex). The helper's file says it (``star_forward``: the
``compiled_params`` fact's why carries ``[forwards N/a,b]``: N named positional parameters
before ``*args``, the named parameters a keyword may bind); the caller's file turns its call
into a ``compiled_passed`` spec for the class (``forwarded_spec``, optional_inputs.py's format),
which the defining file reads as for a direct compiled call.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.compiled_calls import entry_calls

if TYPE_CHECKING:
    from gnnlint.context import FileContext, FuncInfo

_MARK = re.compile(r" \[forwards (\d+)/([\w,]*)\]")


def star_forward(ctx: "FileContext", func: "FuncInfo", param: str) -> str:
    """`` [forwards N/names]`` when every compile of ``func``'s parameter ``param`` runs the
    compiled object only on ``func``'s own ``*args`` / ``**kwargs``, never rebound; else ``""``."""
    params = func.node.params
    star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
    kwargs = params.star_kwarg.name.value if params.star_kwarg is not None else None
    if star is None and kwargs is None:
        return ""
    if any(len(func.bindings.get(name, ())) != 1 for name in (star, kwargs) if name is not None):
        return ""
    sites = [call for call in ctx.compile_calls if ctx.enclosing_function(call) is func
             and call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == param]
    if not sites:
        return ""
    for site in sites:
        parent = ctx.parent.get(site)
        calls = [parent] if isinstance(parent, cst.Call) and parent.func is site else entry_calls(ctx, site)
        if not calls or not all(_only_forwards(call, star, kwargs) for call in calls):
            return ""
    named = [p.name.value for p in params.params] + [p.name.value for p in params.kwonly_params]
    return f" [forwards {len(params.params)}/{','.join(named)}]"


def _only_forwards(call: cst.Call, star: Optional[str], kwargs: Optional[str]) -> bool:
    """``compiled(*args, **kwargs)``: every argument is the helper's star parameter, unpacked."""
    for arg in call.args:
        name = arg.value.value if isinstance(arg.value, cst.Name) else None
        if not (arg.star == "*" and name == star or arg.star == "**" and name == kwargs):
            return False
    return bool(call.args)


def forwarded_spec(ctx: "FileContext", call: cst.Call, why: str) -> Optional[str]:
    """What the compiled object gets from ``call`` of a helper whose fact ``why`` carries the
    forwards mark (``0,1!,num_graphs!``: optional_inputs.py's ``passed_spec`` format); ``*`` when
    the call unpacks arguments itself; None without the mark."""
    mark = _MARK.search(why)
    if mark is None:
        return None
    count, named = int(mark.group(1)), set(mark.group(2).split(","))
    items, position = [], 0
    for arg in call.args:
        if arg.star:
            return "*"
        if arg.keyword is None:
            position += 1
            if position <= count:
                continue
            key = str(position - count - 1)
        elif arg.keyword.value in named:
            continue
        else:
            key = arg.keyword.value
        if not ctx._optional_value(arg.value, call):
            items.append(key + ("!" if ctx._never_none(arg.value, call, 0) else ""))
    return ",".join(items) or "-"


def strip_mark(why: str) -> str:
    return _MARK.sub("", why)
