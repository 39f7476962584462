"""Hooks a trainer runs by name: "which methods does this call run without naming them?"

A custom trainer (no Lightning) keeps a list of hook or callback objects and
runs an event on all of them by the event's name::

    def _call_hooks(self, hook_name, *args, **kwargs):
        for hook in self.hooks:
            method = getattr(hook, hook_name, None)
            if method is not None:
                method(*args, **kwargs)
    ...
    for batch in loader:
        outputs = self.train_step.on_train_batch(self, self.state, batch)
        self._call_hooks("on_train_batch_end", self, self.state, batch, outputs)

The call names no class: every hook class's ``on_train_batch_end`` runs once per
step (``ProgressBarHook.on_train_batch_end`` reading ``outputs["loss"].item()``).
``dispatched_hook(call)`` gives the event name (the string literal passed for
the parameter the local dispatcher hands to ``getattr(obj, <param>)`` and calls
the result of) and the number of positional arguments it forwards;
``hook_methods`` the local methods of that name taking them (hot_loops.py marks
them hot, dispatch.extra_callers counts the call among their callers); steps.py
exports the call as a ``stepped`` fact addressed by name (``HOOK_METHOD``
marker), which the engine delivers to every project class defining such a
method (``gnnlint/entry_points.py``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.model import FuncInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def _getattr_param(ctx: "FileContext", call: cst.Call, func: FuncInfo) -> Optional[str]:
    """``getattr(obj, <param of func>[, default])``: the parameter."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(call.args) in (2, 3)):
        return None
    name = call.args[1].value
    if isinstance(name, cst.Name) and name.value in func.params and name.value != "self":
        return name.value
    return None


def dispatch_param(ctx: "FileContext", func: FuncInfo) -> Optional[tuple[str, cst.Call]]:
    """(the parameter ``func`` runs by name, the call running it): it calls what
    ``getattr(obj, param)`` gives, directly (``getattr(cb, event)(...)``) or through
    a local name (``method = getattr(hook, hook_name, None)`` ... ``method(...)``). Memoised."""
    memo = ctx.__dict__.setdefault("_dispatch_params", {})
    if func in memo:
        return memo[func]
    memo[func] = None
    if not _gated(ctx):
        return None
    held: dict = {}  # local name -> parameter
    for call in func.calls:
        param = _getattr_param(ctx, call, func)
        if param is None:
            continue
        parent = ctx.parent.get(call)
        if isinstance(parent, cst.Call) and parent.func is call:
            memo[func] = (param, parent)
            return memo[func]
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name):
            held[parent.targets[0].target.value] = param
    for call in func.calls:
        if isinstance(call.func, cst.Name) and call.func.value in held:
            memo[func] = (held[call.func.value], call)
            return memo[func]
    return None


def _gated(ctx: "FileContext") -> bool:
    """An exact cheap precondition: the file calls ``getattr`` at all (memoised)."""
    gate = ctx.__dict__.get("_dispatch_gate")
    if gate is None:
        gate = ctx.__dict__["_dispatch_gate"] = any(
            isinstance(c.func, cst.Name) and c.func.value == "getattr" for c in ctx.all_calls())
    return gate


def dispatched_hook(ctx: "FileContext", call: cst.Call) -> Optional[tuple[str, int]]:
    """(event name, positional arguments forwarded) when ``call`` runs a local
    dispatcher with a string literal for its dispatched parameter
    (``self._call_hooks("on_train_batch_end", self, state, batch, out)``), or a
    method it names itself (``getattr(model, "update_teacher", None)()``), or an
    event method of each object of a loop (``for cb in self.callbacks: cb.on_batch_end(...)``)."""
    looped = looped_hook(ctx, call)
    if looped is not None:
        return looped
    if not _gated(ctx):
        return None
    named = _named_getattr(ctx, call)
    if named is not None:  # `getattr(model, "update_teacher", None)()`: that method of whatever holds it
        return named
    callee = ctx.method_callee(call)
    if not isinstance(callee, FuncInfo):
        return None
    found = dispatch_param(ctx, callee)
    if found is None:
        return None
    param, runs = found
    arg = ctx.arg_for_param(callee, call, param)
    if not isinstance(arg, cst.SimpleString):
        return None
    name = arg.raw_value
    if not name.isidentifier() or "_" not in name.strip("_"):
        return None  # an event name (`on_train_batch_end`), not a bare word (`step`, `update`)
    return name, _forwarded(ctx, callee, call, runs)


_EVENT_WORDS = ("on", "before", "after")


def event_name(name: str) -> bool:
    """A hook's event name: ``on_batch_end``, ``before_train_iter``, ``track_after_update_step``
    (a word saying *when*), not a plain verb (``update``, ``reset_parameters``)."""
    words = name.strip("_").split("_")
    return len(words) > 1 and not name.startswith("__") and (
        words[0] in _EVENT_WORDS or any(w in ("before", "after") for w in words[1:]))


def looped_hook(ctx: "FileContext", call: cst.Call) -> Optional[tuple[str, int]]:
    """``cb.on_batch_end(self, batch, loss)`` with ``cb`` the variable of a ``for cb in
    self.callbacks:`` loop whose elements' class nothing here tells (handed in, built from a
    config): (the event name, positional arguments) -- every project class's method of that
    name may run. A known class is the ordinary callee, not this."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and event_name(func.attr.value)):
        return None
    binding, _scope = ctx.lookup(func.value.value, call)
    if binding is None or binding.how != "iter" or ctx.class_of(func.value, call) is not None:
        return None
    if any(a.star == "*" for a in call.args):
        return func.attr.value, -1
    return func.attr.value, sum(1 for a in call.args if a.keyword is None and not a.star)


def _named_getattr(ctx: "FileContext", call: cst.Call) -> Optional[tuple[str, int]]:
    """``getattr(obj, "update_teacher")(...)``, or ``f(...)`` with ``f`` bound only to
    ``getattr(obj, "update_teacher", None)``: (the method name, positional arguments)."""
    func = call.func
    if isinstance(func, cst.Name):
        binding = ctx.sole_binding(func.value, call, "assign")
        if binding is None:
            return None
        func = binding.value
    if not (isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr"
            and len(func.args) in (2, 3) and isinstance(func.args[1].value, cst.SimpleString)):
        return None
    name = func.args[1].value.raw_value
    if not name.isidentifier() or "_" not in name.strip("_") or any(a.star for a in call.args):
        return None
    return name, sum(1 for a in call.args if a.keyword is None)


def _forwarded(ctx: "FileContext", callee: FuncInfo, call: cst.Call, runs: cst.Call) -> int:
    """How many positional arguments the hook receives: those the dispatcher's
    own call passes, with its ``*args`` standing for the caller's extra ones
    (-1: unknown)."""
    if any(a.star == "*" for a in call.args):
        return -1
    given = sum(1 for a in call.args if a.keyword is None and not a.star)
    if not (isinstance(call.func, cst.Attribute) and callee.cls is not None):
        given += 1 if list(callee.params)[:1] == ["self"] else 0  # `Trainer._call_hooks(self, ...)`: rare
    return forwarded_count(ctx, callee, given, runs)


def forwarded_count(ctx: "FileContext", callee: FuncInfo, given: int, runs: cst.Call) -> int:
    """How many positional arguments the hook gets when a caller passes ``given``
    positional arguments (after ``self``) to the dispatcher ``callee`` (-1: unknown)."""
    star = callee.node.params.star_arg
    star_name = star.name.value if isinstance(star, cst.Param) else None
    count = 0
    for arg in runs.args:
        if arg.keyword is not None or arg.star == "**":
            continue
        if arg.star == "*":
            if not (isinstance(arg.value, cst.Name) and arg.value.value == star_name):
                return -1
            named = len(callee.node.params.posonly_params) + len(callee.node.params.params)
            if callee.cls is not None and list(callee.params)[:1] in (["self"], ["cls"]):
                named -= 1  # `self.fire(...)`: self is not among the caller's arguments
            count += max(0, given - named)
            continue
        count += 1
    return count


def dispatch_text(ctx: "FileContext", call: cst.Call, name: str) -> str:
    """How a message names the dispatching call: ``self._call_hooks("on_train_batch_end")``,
    ``getattr(…, "update_teacher")()``."""
    if _named_getattr(ctx, call) is not None:
        return f'getattr(…, "{name}")()'
    if looped_hook(ctx, call) is not None:
        return f"{ctx.module.code_for_node(call.func)}()"
    return f'{ctx.module.code_for_node(call.func)}("{name}")'


def hook_methods(ctx: "FileContext", name: str, count: int) -> list[FuncInfo]:
    """The methods of this file's classes named ``name`` that take ``count``
    positional arguments after ``self``."""
    out = []
    for cls in ctx.class_info.values():
        method = cls.methods.get(name)
        if method is not None and takes(method.node, count):
            out.append(method)
    return out


def takes(node: cst.FunctionDef, count: int) -> bool:
    """The method accepts ``count`` positional arguments after ``self`` (-1: any)."""
    if count < 0:
        return True
    params = node.params
    positional = list(params.posonly_params) + list(params.params)
    if positional[:1] and positional[0].name.value in ("self", "cls"):
        positional = positional[1:]
    if isinstance(params.star_arg, cst.Param):
        return True
    required = [p for p in positional if p.default is None]
    return len(required) <= count <= len(positional)


def dispatch_callers(ctx: "FileContext", func: FuncInfo) -> list[cst.Call]:
    """The calls that run the method ``func`` by its name (for steps.py's callers)."""
    if func.cls is None or not (_gated(ctx) or event_name(func.name)):
        return []
    memo = ctx.__dict__.get("_dispatch_calls")
    if memo is None:
        memo = {}
        for call in ctx.all_calls():
            found = dispatched_hook(ctx, call)
            if found is not None:
                memo.setdefault(found[0], []).append((call, found[1]))
        ctx.__dict__["_dispatch_calls"] = memo
    return [call for call, count in memo.get(func.name, ()) if takes(func.node, count)]
