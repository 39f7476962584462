"""Does this line run only when an opt-in constructor switch is on, in a class another file compiles?

A library class takes a switch for eager-only runtime checks, off by default::

    class TBGFlowNet(TrajectoryBasedGFlowNet):
        def __init__(self, pf, pb, init_logZ=0.0, debug: bool = False):
            super().__init__(pf, pb, debug=debug)        # the base stores self.debug

        def loss(self, env, trajectories):               # compiled by another file's program
            ...
            if self.debug and torch.isnan(loss).any():   # not compiled: debug is off there
                raise ValueError("loss is nan")

The file compiles nothing itself; its methods run compiled because a program elsewhere compiles them
(a ``compiled`` fact), and that program builds the class with what it passes. A switch defaulting to
``False`` is off unless turned on; the check behind it is the eager debugging path, not the compiled one.
``default_off_branch(ctx, node)`` is True for a line in the body of ``if self.<flag>`` /
``if self.<flag> and ...`` or in the right operand of ``self.<flag> and ...``, where ``<flag>`` is a
parameter of the class's ``__init__`` (here, through the class's local bases) defaulting to ``False``,
and the class stores nothing but that parameter in ``self.<flag>`` here. Gate: the file has no compile call
and some ``compiled`` fact names a ``Class.method`` (asked by ``compiled_region``).

The same holds wherever the class is compiled when no construction in the project turns the switch on
(``Normalizer(size=4, zscore=True)`` in model.py, never ``scale_by_max=True``): ``export_ctor_switches``
names the switches this file never turns on (no call here passes the keyword, no construction passes
``*args`` or enough positional arguments, the class name is read only as a call), the engine reads the
other files' bytes (gnnlint/constructions.py) and tells back ``ctor_switches`` "off" -- or "on" when another
file may turn it on (``SO3Rotation(lmax, use_rotation_mask=(not self.direct))``): then the switch is no debugging
switch presumed off either, and the branch behind it runs compiled.

"Off" means "left at its default", and a default need not be ``False``: a mode string keeps its
default the same way (``HierarchicalPooling(hidden_dim=64)``, never ``pooling_method=``)::

    def __init__(self, hidden_dim, pooling_method="attention"):
        if pooling_method == "gated":                   # never built
            self.gated = GatedPooling(hidden_dim)
    def forward(self, x, cluster):
        if self.pooling_method == "attention": ...
        else:
            return self._simple_pooling(x, cluster)     # never runs
so ``at_default_branch`` reads the tests of a told class (``==`` / ``!=`` / ``in`` a literal, ``not``,
``and`` / ``or``, plain truth) with every told parameter at its literal default, and a branch whose test
then fails (or an ``else`` whose test then holds) never runs. Only the told fact answers this (no gate:
a mode string is no debugging switch), and only a compiled class's parameters are candidates.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import ClassInfo, walk

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def _gate(ctx: "FileContext") -> bool:
    key = ("default_off_flags.gate",)
    if key not in ctx._memo:
        ctx._memo[key] = not ctx.compile_calls and any("." in name for name in ctx.project.compiled)
    return ctx._memo[key]


def _self_flag(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _guard_flags(ctx: "FileContext", node: cst.CSTNode) -> list:
    """The ``self.<flag>`` names whose truth this line needs (an enclosing ``if`` body or ``and`` operand)."""
    out = []
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) \
            and (flag := _self_flag(node.left)) is not None:
        out.append(flag)  # `self.debug and x.isnan().any()` as a whole: its tensor is read only when on
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, cst.FunctionDef):
            break
        if isinstance(parent, cst.If) and child is parent.body:
            tests = [parent.test]
            while tests:
                test = tests.pop()
                if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                    tests += [test.left, test.right]
                elif (flag := _self_flag(test)) is not None:
                    out.append(flag)
        elif isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And) \
                and child is parent.right and (flag := _self_flag(parent.left)) is not None:
            out.append(flag)
        child = parent
    return out


def _default_off(ctx: "FileContext", cls, flag: str) -> bool:
    """``flag`` is an ``__init__`` parameter defaulting to False, and ``self.<flag>`` holds only it here."""
    return _default_value(ctx, cls, flag) is False


_NO = object()  # not a constant


def _literal(expr: cst.BaseExpression):
    """The value of a literal (a string, a number, ``True`` / ``False`` / ``None``, a tuple / list / set of
    them), else ``_NO``."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        try:
            return expr.evaluated_value
        except (ValueError, SyntaxError):
            return _NO
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _literal(expr.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else _NO
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        items = [_literal(e.value) for e in expr.elements if not isinstance(e, cst.StarredElement)]
        return tuple(items) if len(items) == len(expr.elements) and _NO not in items else _NO
    return _NO


def _default_value(ctx: "FileContext", cls, flag: str):
    """The literal default of ``__init__``'s ``flag`` when ``self.<flag>`` holds only that parameter, else ``_NO``."""
    init = ctx.method_of(cls, "__init__")
    param = init.params.get(flag) if init is not None else None
    if not isinstance(param, cst.Param) or param.default is None:
        return _NO
    value = _literal(param.default)
    if value is _NO or isinstance(value, tuple):
        return _NO
    for current in ctx.local_lineage(cls):
        for held in current.attrs.get(flag, ()):
            if not (isinstance(held, cst.Name) and held.value == flag):
                return _NO
    return value


def _param_default_value(init, name: str):
    """The literal default of ``init``'s parameter ``name``, never rebound there, else ``_NO``."""
    param = init.params.get(name)
    if not isinstance(param, cst.Param) or param.default is None \
            or not all(b.how == "param" for b in init.bindings.get(name, ())):
        return _NO
    value = _literal(param.default)
    return _NO if isinstance(value, tuple) else value


_COMPARE = {cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
            cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
            cst.GreaterThan: lambda a, b: a > b, cst.GreaterThanEqual: lambda a, b: a >= b,
            cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b}


def _truth(test: cst.BaseExpression, value_of) -> Optional[bool]:
    """``test``'s truth when ``value_of(expr)`` knows some operands' values (else ``_NO``); None: unknown."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _truth(test.expression, value_of)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = _truth(test.left, value_of), _truth(test.right, value_of)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is False and right is False else None)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left, right = value_of(test.left), _literal(target.comparator)
        if left is _NO or right is _NO:
            return None
        if isinstance(target.operator, (cst.Is, cst.IsNot)) and (right is None or isinstance(right, bool)):
            return (left is right) == isinstance(target.operator, cst.Is)
        compare = _COMPARE.get(type(target.operator))
        if compare is None or isinstance(target.operator, (cst.In, cst.NotIn)) and not isinstance(right, tuple):
            return None
        try:
            return bool(compare(left, right))
        except TypeError:
            return None
    value = value_of(test)
    return None if value is _NO else bool(value)


def _fails_on_the_way(ctx: "FileContext", node: cst.CSTNode, stop: cst.CSTNode, value_of) -> bool:
    """Some test on the way from ``node`` up to ``stop`` must fail for ``node`` to run (an ``if`` / ``elif`` /
    conditional expression whose test is then false, an ``else`` whose test is then true, the right operand of
    an ``and`` whose left is false / of an ``or`` whose left is true)."""
    child = node
    for parent in ctx.ancestors(node):
        if parent is stop:
            return False
        if isinstance(parent, (cst.If, cst.IfExp)) and child in (parent.body, parent.orelse):
            if _truth(parent.test, value_of) is (child is not parent.body):
                return True
        elif isinstance(parent, cst.BooleanOperation) and child is parent.right:
            if _truth(parent.left, value_of) is isinstance(parent.operator, cst.Or):
                return True
        child = parent
    return False


def at_default_branch(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``node`` runs only when a test of ``self.<param>`` fails for a constructor parameter no construction in
    the project passes (a ``ctor_switches`` fact), the parameter at its literal default."""
    told = ctx.project.ctor_switches
    func = ctx.enclosing_function(node) if told else None
    if func is None or func.cls is None:
        return False
    cls = func.cls

    def value_of(expr):
        flag = _self_flag(expr)
        if flag is None or told.get(f"{cls.name}:{flag}") != "off":
            return _NO
        return _default_value(ctx, cls, flag)
    return _fails_on_the_way(ctx, node, func.node, value_of)


def default_off_branch(ctx: "FileContext", node: cst.CSTNode) -> bool:
    told = ctx.project.ctor_switches
    if not told and not _gate(ctx):
        return False
    if at_default_branch(ctx, node):
        return True
    func = ctx.enclosing_function(node)
    if func is None or func.cls is None:
        return False
    flags = _guard_flags(ctx, node)
    return any(_default_off(ctx, func.cls, flag) and (told.get(f"{func.cls.name}:{flag}") == "off" or _gate(ctx)
                                                      and (told.get(f"{func.cls.name}:{flag}") != "on"
                                                           or _checks_only(ctx, node, flag)))
               for flag in flags)


def _checks_only(ctx: "FileContext", node: cst.CSTNode, flag: str) -> bool:
    """The ``if self.<flag>`` around ``node`` guards runtime checks (its body raises, asserts or warns: ``if self.debug:
    if torch.isnan(x).any(): raise ValueError``): a debugging switch, off under compile even when some construction
    may pass it; also the ``self.<flag> and ...`` operand form. A switch choosing a computation
    (``if self.use_rotation_mask: alpha = alpha[~mask]``) is not one."""
    for parent in ctx.ancestors(node):
        if isinstance(parent, cst.FunctionDef):
            return True
        if isinstance(parent, cst.If) and flag in _tested_flags(parent.test):
            found = [False]
            walk(parent.body, lambda n, _p: found.__setitem__(0, True) if isinstance(n, (cst.Raise, cst.Assert))
                 or isinstance(n, cst.Call) and ctx.last_part(n.func) in _REPORTS else None)
            return found[0]
    return True


_REPORTS = frozenset(("warn", "print", "debug", "info", "warning", "log"))  # a check's report, not a computation


def _tested_flags(test: cst.BaseExpression) -> set:
    return {flag for sub in _operands(test) if (flag := _self_flag(sub)) is not None}


def switched_off(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``node`` runs only behind a switch no construction in the project turns on (a ``ctor_switches``
    fact): it never runs, so it is no per-step code either (asked by ``step_unreached``)."""
    told = ctx.project.ctor_switches
    if not told:
        return False
    func = ctx.enclosing_function(node)
    if func is None or func.cls is None:
        return False
    return any(told.get(f"{func.cls.name}:{flag}") == "off" and _default_off(ctx, func.cls, flag)
               for flag in _guard_flags(ctx, node)) or at_default_branch(ctx, node)


def built_only_when_on(ctx: "FileContext", cls, value: cst.CSTNode) -> bool:
    """``value`` (a submodule ``__init__`` builds) is built only under ``if <switch>:`` of a parameter
    no construction turns on (``if magnitude_zscore: self.mag_zscore = MagnitudeZScoreNormalizer()``):
    the submodule never exists, so the compiled forward runs none of it (asked by regions.py)."""
    told = ctx.project.ctor_switches
    if not told:
        return False
    init = ctx.method_of(cls, "__init__")
    if init is None or ctx.enclosing_function(value) is not init:
        return False
    if any(told.get(f"{cls.name}:{flag}") == "off" for flag in _init_guard_params(ctx, value, init)):
        return True

    def value_of(expr):  # `elif pooling_method == "gated":` with the default "attention"
        if not isinstance(expr, cst.Name) or told.get(f"{cls.name}:{expr.value}") != "off":
            return _NO
        return _param_default_value(init, expr.value)
    return _fails_on_the_way(ctx, value, init.node, value_of)


def never_built(ctx: "FileContext", func: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """``self.<attr>(...)`` where ``__init__`` builds that submodule only behind such a switch and
    otherwise stores ``None``: the call never runs a module (asked by regions.py's callee walk)."""
    if not ctx.project.ctor_switches or (attr := _self_flag(func)) is None:
        return False
    owner = ctx.enclosing_function(at)
    cls = owner.cls if owner is not None else None
    if cls is None:
        return False
    values = [v for c in ctx.local_lineage(cls) for v in c.attrs.get(attr, ())]
    built = [v for v in values if not (isinstance(v, cst.Name) and v.value == "None")]
    return bool(built) and all(built_only_when_on(ctx, cls, v) for v in built)


def _init_guard_params(ctx: "FileContext", node: cst.CSTNode, init) -> list:
    """The default-``False`` parameters of ``init`` (never rebound) whose truth the line needs."""
    out, child = [], node
    for parent in ctx.ancestors(node):
        if parent is init.node:
            break
        if isinstance(parent, cst.If) and child is parent.body:
            for test in _operands(parent.test):
                if isinstance(test, cst.Name) and _param_off_by_default(init, test.value):
                    out.append(test.value)
        child = parent
    return out


def _param_off_by_default(init, name: str) -> bool:
    param = init.params.get(name)
    return isinstance(param, cst.Param) and isinstance(param.default, cst.Name) \
        and param.default.value == "False" and all(b.how == "param" for b in init.bindings.get(name, ()))


class _SwitchReads(cst.CSTVisitor):
    """The ``self.<name>`` attributes an ``if`` / ``and`` of a method tests, and where a class's name is read."""

    def __init__(self, names: set) -> None:
        self.tested: set = set()
        self.valued: set = set()
        self.names = names
        self.reads: list = []

    def visit_If(self, node: cst.If) -> None:
        for sub in _operands(node.test):
            if (flag := _self_flag(sub)) is not None:
                self.tested.add(flag)
            elif isinstance(sub, cst.Name):
                self.tested.add("=" + sub.value)  # `if magnitude_zscore:` in __init__
        for sub in _compared(node.test):  # `self.mode == "gated"`, `mode in ("a", "b")` (literal defaults)
            if (flag := _self_flag(sub)) is not None:
                self.valued.add(flag)
            elif isinstance(sub, cst.Name):
                self.valued.add("=" + sub.value)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # `torch._assert(not self.symmetric or torch.equal(x, y))`: the right operand runs only as the left says
        left = node.left
        while isinstance(left, cst.UnaryOperation) and isinstance(left.operator, cst.Not):
            left = left.expression
        if (flag := _self_flag(left)) is not None:
            self.tested.add(flag)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.reads.append(node)


def _compared(test: cst.BaseExpression):
    """The left operands of the comparisons with a literal a test makes (through ``not`` / ``and`` / ``or``)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from _compared(test.expression)
    elif isinstance(test, cst.BooleanOperation):
        yield from _compared(test.left)
        yield from _compared(test.right)
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and _literal(test.comparisons[0].comparator) is not _NO:
        yield test.left


def _operands(test: cst.BaseExpression):
    while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _operands(test.right)
        test = test.left
    yield test


def export_ctor_switches(ctx: "FileContext") -> None:
    """``Class:flag:position`` for each default-``False`` switch a method of a class here tests
    (``if self.scale_by_max:``) that nothing in this file turns on; only in compiled code's files."""
    if not (ctx.project.compiled or ctx.compile_calls) or not ctx.classes:
        return
    candidates = []
    compiled = {func.cls.name for func in ctx.compiled_funcs if func.cls is not None}
    for cls in ctx.classes.values():
        init = ctx.method_of(cls, "__init__")
        if init is None or not any(isinstance(p.default, cst.Name) and p.default.value == "False"
                                   or cls.name in compiled and p.default is not None
                                   for p in init.params.values() if isinstance(p, cst.Param)):
            continue
        tests = _SwitchReads(set())
        for method in cls.methods.values():
            method.node.visit(tests)
        valued = tests.valued if cls.name in compiled else set()  # mode strings: only compiled classes
        for flag in sorted(tests.tested | valued):
            if flag.startswith("=") and _param_off_by_default(init, flag[1:]) \
                    or not flag.startswith("=") and _default_off(ctx, cls, flag) \
                    or flag in valued and (_param_default_value(init, flag[1:]) if flag.startswith("=")
                                           else _default_value(ctx, cls, flag)) is not _NO:
                candidates.append((cls, init, flag.lstrip("=")))
    if not candidates:
        return
    reads = _SwitchReads({cls.name for cls, _init, _flag in candidates})
    ctx.module.visit(reads)
    for cls, init, flag in candidates:
        if not _off_here(ctx, cls, init, flag, reads.reads):
            continue
        positional = [p for p in init.node.params.params][1:]
        position = next((i for i, p in enumerate(positional) if p.name.value == flag), -1)
        ctx.exported.ctor_switches.append((ImportRef("", f"{cls.name}:{flag}:{position}"), ""))


def _off_here(ctx: "FileContext", cls, init, flag: str, reads: list) -> bool:
    """No call of this file passes ``flag=`` (but ``__init__`` handing it to a base), no construction
    of ``cls`` passes ``*args`` or a positional argument at the switch's place, ``cls`` is read only as a
    call's callee here."""
    positional = [p for p in init.node.params.params][1:]
    position = next((i for i, p in enumerate(positional) if p.name.value == flag), -1)
    for call in ctx.calls_any_order():
        if any(arg.keyword is not None and arg.keyword.value == flag for arg in call.args) \
                and ctx.enclosing_function(call) is not init and not _other_callee(ctx, call, cls):
            return False
    constructions = ctx.constructions(cls)
    for call in constructions:
        plain = [arg for arg in call.args if arg.keyword is None]
        if any(arg.star for arg in call.args) or 0 <= position < len(plain):
            return False
    for name in reads:
        if name.value != cls.name:
            continue
        parent = ctx.parent.get(name)
        if isinstance(parent, cst.ClassDef) and parent.name is name:
            continue
        if isinstance(parent, cst.Call) and parent.func is name and parent in constructions:
            continue
        if _old_style_super(ctx, name, cls):
            continue
        return False
    return True


def _other_callee(ctx: "FileContext", call: cst.Call, cls) -> bool:
    """``call`` runs a local function, or builds a local class that is not ``cls`` nor derives from it
    (``_get_n_paths(..., symmetric=symmetric)`` in another class's ``__init__``): it builds no ``cls``."""
    callee = ctx.local_callee(call)
    if callee is None or callee is cls:
        return False
    if isinstance(callee, ClassInfo):
        return all(base is not cls for base in ctx.local_lineage(callee))
    return True


def _old_style_super(ctx: "FileContext", name: cst.Name, cls) -> bool:
    """``super(Cls, self)`` in a method of ``cls`` itself: names the class, builds nothing."""
    arg = ctx.parent.get(name)
    call = ctx.parent.get(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "super"
            and call.args and call.args[0] is arg):
        return False
    func = ctx.enclosing_function(call)
    return func is not None and func.cls is cls
