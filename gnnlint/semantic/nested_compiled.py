"""Models that contain compiled code: "does running an instance of this class run compiled code below it?"

A model is often not compiled as a whole; one of its submodules is, somewhere down the tree::

    class FastEdgeAttention(nn.Module):
        @torch.compile                       # the compiled code
        def forward(self, q, k, v): ...

    class Layer(nn.Module):
        def __init__(self, dim, compiled=False):
            if compiled:                     # a constructor switch picks the compiled class
                self.attention = FastEdgeAttention(dim)
            else:
                self.attention = EdgeAttention(dim)

    class EdgeTransformer(nn.Module):
        def __init__(self, dim, compiled=False):
            self.layers = nn.ModuleList([Layer(dim, compiled=compiled) for _ in range(4)])

    model = EdgeTransformer(64, compiled=cfg.compiled)   # train.py: its loop drives compiled code

``nested_why(ctx, cls)`` answers for a local class: it holds (in an attribute, a ModuleList /
Sequential / ModuleDict, a comprehension) a submodule whose class has a compiled forward
(``@torch.compile`` on it or on a method the forward reaches), is compiled where it is stored
(``self.attn = torch.compile(Attn(...))``), compiles its own submodules (compiled_holders.py), or in
turn contains compiled code -- a local class, or an imported one another file told about
(``compiled_instances`` facts, which this answer also feeds: instances.py exports it). The forward of
the outer class itself stays eager (its lines are no compiled region); calling an instance runs the
compiled parts, so a loop running it per step drives compiled code (GNN013).

A submodule built only under ``if <param>:`` of an ``__init__`` parameter (or handed such a
parameter for its own switch: ``Layer(dim, compiled=compiled)``) makes the answer conditional on that
parameter: the why ends with ``SWITCH`` naming it and its position, and a construction leaving it at
its false default or passing a false constant builds no compiled code (``switch_off``). A switch some
construction may turn on (``compiled=cfg.compiled``) counts, as a compile under ``if args.compile:``
does elsewhere in gnnlint.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.compiled_calls import never_run
from gnnlint.semantic.compiled_holders import holder_why
from gnnlint.semantic.model import ClassInfo, walk

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext

NESTED_MARK = "which contains compiled code"
_SWITCH_RE = re.compile(r" \(when its `(\w+)` argument \(#(-?\d+)\) is true\)")
_FALSE = ("False", "None")
_MAX_DEPTH = 6


def _switch_text(param: str, position: int) -> str:
    return f" (when its `{param}` argument (#{position}) is true)"


def switch_of(why: str) -> Optional[tuple[str, int]]:
    """The constructor switch a ``nested_why`` answer depends on: (parameter, position), or None."""
    match = _SWITCH_RE.search(why)
    return (match.group(1), int(match.group(2))) if match else None


def _arg(call: cst.Call, param: str, position: int) -> tuple[bool, Optional[cst.BaseExpression]]:
    """(known, value): what ``call`` passes for the switch; (True, None) when it leaves the default."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param:
            return True, arg.value
        if arg.star:
            return False, None  # `**kwargs` / `*args` may pass it
    positional = [a for a in call.args if a.keyword is None]
    if 0 <= position < len(positional):
        return True, positional[position].value
    return True, None


def _false_constant(expr: Optional[cst.BaseExpression]) -> bool:
    if expr is None:
        return True
    if isinstance(expr, cst.Name):
        return expr.value in _FALSE
    return isinstance(expr, cst.Integer) and expr.value == "0"


def switch_off(why: str, call: cst.Call) -> bool:
    """``call`` constructs the class ``why`` describes with its compiled-code switch off
    (left at its false default, or a false constant): the instance holds no compiled code."""
    switch = switch_of(why)
    if switch is None:
        return False
    known, value = _arg(call, *switch)
    return known and _false_constant(value)


def _decorated_forward(ctx: "FileContext", cls: ClassInfo) -> Optional[str]:
    """A compile decorator on the class's forward or on a method the forward reaches on ``self``."""
    reached = None
    for node, site in ctx.compile_sites:
        if not isinstance(node, cst.Decorator) or site.target_kind != "function":
            continue
        info = ctx.func_info.get(ctx.parent.get(node))
        if info is None or info.cls is None or info.cls not in ctx.local_lineage(cls) or info.parent is not None:
            continue
        reached = ctx._self_reached(cls) if reached is None else reached
        if info in reached:
            return f"`{cls.name}`, whose `{info.name}` is compiled by `@{ctx.module.code_for_node(node.decorator)}`"
    return None


def _compiled_attr(ctx: "FileContext", cls: ClassInfo) -> Optional[str]:
    """``self.attn = torch.compile(Attn(...))`` in a method of the class (not ``self.forward``)."""
    for call in ctx.compile_calls:
        stmt = ctx.parent.get(call)
        if not (isinstance(stmt, cst.Assign) and stmt.value is call and call.args
                and call.args[0].keyword is None):
            continue
        func = ctx.enclosing_function(call)
        if func is None or func.cls is not cls or never_run(ctx, call):
            continue  # only the wrapper's other methods run (`self.ae.encode(x)`): no compiled forward
        for target in stmt.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" \
                    and ctx.method_of(cls, t.attr.value) is None:
                reachable, switch = _guard(ctx, cls, call)  # `if use_fast: self.attn = torch.compile(...)`
                if reachable:
                    return f"`{cls.name}`, whose submodule `self.{t.attr.value}` is compiled" \
                        + (_switch_text(*switch) if switch else "")
    return None


def _init_switch(ctx: "FileContext", cls: ClassInfo, name: str) -> Optional[tuple[str, int]]:
    """``name`` is a parameter of the class's ``__init__`` defaulting to a false constant (or with no
    default: every construction passes it), never rebound there: (name, position without ``self``)."""
    init = ctx.method_of(cls, "__init__")
    if init is None:
        return None
    params = list(init.node.params.params)
    param = next((p for p in params if p.name.value == name), None)
    if param is None:
        kwonly = next((p for p in init.node.params.kwonly_params if p.name.value == name), None)
        if kwonly is None:
            return None
        param, position = kwonly, -1
    else:
        position = params.index(param) - 1
    if param.default is not None and not _false_constant(param.default):
        return None
    if any(b.how != "param" for b in init.bindings.get(name, ())):
        return None
    return name, position


def _self_switch_param(ctx: "FileContext", cls: ClassInfo, expr: cst.BaseExpression) -> Optional[str]:
    """``compiled`` for the test ``compiled`` or ``self.compiled`` (``self.compiled = compiled`` only)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        values = ctx.class_attr_values(cls, expr.attr.value)
        if values and all(isinstance(v, cst.Name) and v.value == values[0].value for v in values):
            return values[0].value
    return None


def _guard(ctx: "FileContext", cls: ClassInfo, value: cst.CSTNode) -> tuple[bool, Optional[tuple[str, int]]]:
    """(reachable, switch): the ``__init__`` switch ``value`` is built under (``if compiled:``, the
    ``else`` of ``if not compiled:``, ``Fast() if compiled else Plain()``); reachable False when it is
    built only if a switch is off."""
    child = value
    for parent in ctx.ancestors(value):
        if isinstance(parent, cst.FunctionDef):
            break
        if isinstance(parent, (cst.If, cst.IfExp)) and child in (parent.body, parent.orelse):
            test, negated = parent.test, False
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, negated = test.expression, True
            name = _self_switch_param(ctx, cls, test)
            switch = _init_switch(ctx, cls, name) if name is not None else None
            if switch is not None:
                return (child is parent.body) != negated, switch
        child = parent
    return True, None


def submodule_values(ctx: "FileContext", cls: ClassInfo) -> list:
    """The expressions a class stores as submodules its forward reads (``self.layers`` in
    ``for layer in self.layers:``), containers opened; what its methods add to a ModuleDict."""
    from gnnlint.semantic import flow

    reached = ctx._self_reached(cls)
    read = set()
    for attr in cls.attrs:
        for node in flow.attribute_nodes(ctx, attr):
            if isinstance(node.value, cst.Name) and node.value.value == "self" \
                    and ctx.enclosing_function(node) in reached:
                read.add(attr)
                break
    values = [v for attr, vs in cls.attrs.items() if attr in read for v in vs] + ctx._appended_modules(cls)
    branches: list = []  # `Fast(d) if compiled else Plain(d)`, also as a container's element
    for value in values:
        walk(value, lambda node, _p: branches.extend((node.body, node.orelse)) if isinstance(node, cst.IfExp)
             else None)
    return ctx._container_elements(values + branches)


def _sub_why(ctx: "FileContext", value: cst.BaseExpression, seen: set) -> Optional[str]:
    """Why the submodule ``value`` builds holds compiled code: its class (``class_of``), else one of
    the classes a factory or a config may build there (``self.attn = build_attention(cfg)``)."""
    if not isinstance(value, (cst.Call, cst.Name, cst.Attribute)):
        return None
    sub = ctx.class_of(value, value) if isinstance(value, cst.Call) else None
    choices = [(sub, None)] if sub is not None else ctx.model_choices(value, value)
    for choice, _when in choices:
        if isinstance(choice, ClassInfo):
            if choice.name in seen:
                continue
            why = _own_why(ctx, choice) or _nested(ctx, choice, seen)
        elif isinstance(choice, ImportRef):
            why = ctx.project.compiled_instances.get(choice.name)
        else:
            continue
        if why is not None and not (sub is not None and isinstance(value, cst.Call) and switch_off(why, value)):
            return why
    return None


def _leaf(why: str) -> str:
    """The compiled part a (possibly nested, possibly told) why names: ``FastEdgeAttention``'s forward."""
    why = _SWITCH_RE.sub("", why).split(", from ")[0]
    return why.partition(NESTED_MARK + ": ")[2] or why


def _own_why(ctx: "FileContext", cls: ClassInfo) -> Optional[str]:
    own = ctx.compiled_classes.get(cls.name)
    if own is not None and "(compiled by `" in own:
        return f"`{cls.name}`, which compiles its own forward"
    return _decorated_forward(ctx, cls) or _compiled_attr(ctx, cls) or holder_why(ctx, cls)


def _gate(ctx: "FileContext") -> bool:
    key = ("nested_compiled.gate",)
    if key not in ctx._memo:
        ctx._memo[key] = bool(ctx.compile_sites or ctx.project.compiled_instances)
    return ctx._memo[key]


def nested_why(ctx: "FileContext", cls: ClassInfo) -> Optional[str]:
    """Why running an instance of ``cls`` runs compiled code of its own (a compiled forward, a submodule
    compiled where it is stored) or below it (a submodule's), or None;
    the why ends with the constructor switch it needs, if any (``switch_of``)."""
    if not _gate(ctx):
        return None
    return _decorated_forward(ctx, cls) or _compiled_attr(ctx, cls) or (_nested(ctx, cls, set())
                                                                       if _has_leaves(ctx) else None)


def _has_leaves(ctx: "FileContext") -> bool:
    """Some class here holds compiled code of its own, or another file told about one: else no class
    can contain any (an exact, cheap precondition for the submodule walk)."""
    key = ("nested_compiled.leaves",)
    if key not in ctx._memo:
        ctx._memo[key] = bool(ctx.project.compiled_instances) or any(
            _own_why(ctx, cls) is not None for cls in ctx.classes.values())
    return ctx._memo[key]


def _nested(ctx: "FileContext", cls: ClassInfo, seen: set) -> Optional[str]:
    key = ("nested_compiled", cls.name)
    if key in ctx._memo:
        return ctx._memo[key]
    if len(seen) > _MAX_DEPTH:
        return None
    seen = seen | {cls.name}
    found: Optional[str] = None
    for value in submodule_values(ctx, cls):
        sub = _sub_why(ctx, value, seen)
        if sub is None:
            continue
        reachable, switch = _guard(ctx, cls, value)
        if not reachable:
            continue
        inner = switch_of(sub)
        if inner is not None and switch is None:  # `Layer(dim, compiled=compiled)`: our switch is its
            known, passed = _arg(value, *inner)
            name = _self_switch_param(ctx, cls, passed) if known and passed is not None else None
            switch = _init_switch(ctx, cls, name) if name is not None else None
        why = f"`{cls.name}`, {NESTED_MARK}: {_leaf(sub)}" + (_switch_text(*switch) if switch else "")
        if switch is None:
            found = why
            break
        found = found or why
    ctx._memo[key] = found
    return found
