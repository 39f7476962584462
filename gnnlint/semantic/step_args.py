"""Which branches of a per-step helper do its per-step callers never take?

A helper another file calls every step of a loop that drives compiled code
(a ``stepped`` fact: ``create_batch_graph_dict(pos, cell, ...)`` in an ASE
``calculate``) runs per step as a whole, but a branch under a test of its
parameters runs only for the values the per-step calls pass. ``if
max_num_neighbors_threshold > 0: mask = get_max_neighbors_mask(...)`` never
runs when every per-step call leaves the parameter at its default ``0``: a
sync there is no per-step sync, and the calls there are not followed.

The calling side tells the defining file what each per-step call passes
(``ExportedFacts.stepped_args``, next to its ``stepped`` fact): the constant of
each argument (``threshold=0``), ``!`` for one it cannot read that is never None
(``dim_size=graph.n_node.size(0)``: ``if dim_size is None:`` is false), ``?`` for one it cannot read, ``*`` for a call
with ``*args`` / ``**kw``; a parameter of the calling function forwarded as is
passes the one value the calling function's own per-step calls give it
(``radius_graph(..., max_num_neighbors_threshold=max_num_neighbors_threshold)``
in a helper whose callers leave it at ``0``). The engine joins the calls of
all files with ``|``, as ``compiled_passed``.

The defining side (``step_param_values``) reads them for a top-level function or a method
(``Class.method``; a ``forward`` by the ``Class.__call__`` an instance call is told as), with
what its local calls pass (a compiled forward here calling it runs per step too): an argument a
call leaves out has the parameter's default. A top-level helper no other file calls per step
but this file's per-step code does (``scatter_sum(src, index, dim_size=num_segments)`` in a
stepped ``segment_sum``) reads what those per-step calls pass, once the hot regions are known. ``step_arg_unreached(node)`` is
True when a line runs only under a test (an enclosing ``if``, an ``if <test>:
return`` before it) that is false for every combination of those values.
"""
from __future__ import annotations

import ast
import itertools
from typing import Optional

import libcst as cst

from gnnlint.semantic.literals import _NO_VALUE
from gnnlint.semantic.model import keyed_args

_UNKNOWN = object()
_MAX_COMBINATIONS = 16
_COMPARE = {
    cst.LessThan: lambda a, b: a < b, cst.GreaterThan: lambda a, b: a > b,
    cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
    cst.Is: lambda a, b: a is b, cst.IsNot: lambda a, b: a is not b,
}


class StepArgs:
    """Mixed into FileContext; reads the SemanticModel and ``ProjectFacts.stepped_args``."""

    # the calling side -------------------------------------------------------------------
    def step_args_spec(self, call: cst.Call) -> str:
        """What a per-step call passes: ``key=<constant>`` / ``key=?`` items, ``*`` when unknown."""
        args = keyed_args(call)
        if args is None:
            return "*"
        return ",".join(f"{key}={self._passed_constant(value, call)}" for key, value in args) or "-"

    def _passed_constant(self, expr: cst.BaseExpression, call: cst.Call) -> str:
        value = self.literal_value(expr, call)
        if value is _NO_VALUE and isinstance(expr, cst.Name):
            func = self.enclosing_function(call)
            reaching = self.reaching(expr.value, call) if func is not None and expr.value in func.params else []
            if reaching and all(binding.how == "param" for binding, _f in reaching):
                values = self.step_param_values(func).get(expr.value, ())
                value = next(iter(values)) if len(values) == 1 else _NO_VALUE
        if value is _NO_VALUE and (self._never_none(expr, call, 0) or self._assigned_never_none(expr, call)):
            return _SOME  # `dim_size=graph.n_node.size(0)`: unknown, but not None
        return _encode(value)

    def _assigned_never_none(self, expr: cst.BaseExpression, call: cst.Call) -> bool:
        """``dim_size`` re-bound before the call (``dim_size = out.size(dim)`` over a parameter
        of that name): every assignment reaching the call holds a value that is never None."""
        if not isinstance(expr, cst.Name):
            return False
        reaching = self.reaching(expr.value, call)
        return bool(reaching) and all(binding.how == "assign" and binding.value is not None
                                      and self._never_none(binding.value, binding.value, 1)
                                      for binding, _f in reaching)

    # the defining side ------------------------------------------------------------------
    def step_param_values(self, func) -> dict:
        """parameter -> the constants every per-step call from other files gives it (only the
        parameters all of them give a readable constant); {} when not known."""
        if func is None or func.parent is not None:
            return {}
        known = getattr(self, "_hot_known", True)
        return self._memoised(("step_params", id(func.node), known), lambda: self._step_param_values(func, known), {})

    def _step_param_values(self, func, hot_known: bool) -> dict:
        key = _stepped_key(self, func)
        spec = self.project.stepped_args.get(key)
        if spec and key in self.project.stepped:
            # a local caller may run per step too (a compiled forward calling the helper): its arguments count
            specs = spec.split("|") + [self.step_args_spec(call) for call in self.callers_of(func)]
        elif hot_known and func.cls is None and key not in self.project.stepped and func in self.hot_funcs:
            # a helper no other file calls per step (`scatter_sum(..., dim_size=n)` from a stepped
            # `segment_sum`): it runs per step through this file's per-step calls, with what they
            # pass (a parameter they forward carries their own per-step callers' value)
            specs = [self.step_args_spec(call) for call in self.callers_of(func) if self.hot_region(call)]
            if not specs:
                return {}  # hot for another reason (a dispatch table, a framework)
        else:
            return {}
        names = list(func.params)
        if func.cls is not None and names and names[0] in ("self", "cls"):
            names = names[1:]  # a method's positions count after the receiver
        values: dict = {}
        unknown: set = set()
        for one in specs:
            if one == "*":
                return {}
            given = {}
            for item in one.split(","):
                if item in ("", "-"):
                    continue
                key, _, text = item.partition("=")
                if key.isdigit():
                    if int(key) >= len(names):
                        return {}  # *args
                    key = names[int(key)]
                given[key] = text
            for name in names:
                if name in given:
                    value = _decode(given[name])
                else:
                    param = func.params[name]
                    value = self.literal_value(param.default) if isinstance(param, cst.Param) \
                        and param.default is not None else _NO_VALUE
                if value is _NO_VALUE:
                    unknown.add(name)
                else:
                    values.setdefault(name, set()).add(value)
        return {name: frozenset(vals) for name, vals in values.items() if name not in unknown}

    def step_arg_unreached(self, node: cst.CSTNode) -> bool:
        if not self.project.stepped_args:
            return False
        func = self.enclosing_function(node)
        values = self.step_param_values(func)
        if not values:
            return False
        for test, holds in self._conditions(node, func):
            # only names the test reads as the parameter (not rebound before it)
            env = {name: vals for name, vals in values.items()
                   if all(binding.how == "param" for binding, _f in self.reaching(name, test))}
            truth = _truth(test, env, self.literal_value)
            if truth is not None and truth != holds:
                return True
        return False


def _stepped_key(ctx, func):
    """The key other files' ``stepped`` / ``stepped_args`` facts name ``func`` by: ``helper``,
    ``Class.method``, or ``Class.__call__`` for the forward an instance call runs (instance_calls.py)."""
    if func.cls is None:
        return func.name
    key = f"{func.cls.name}.{func.name}"
    if key not in ctx.project.stepped and func.name == "forward":
        return f"{func.cls.name}.__call__"
    return key


class _NotNone:
    """A passed value known only not to be None: ``is None`` tests read it, nothing else does."""

    def __bool__(self):
        raise TypeError("unknown truth")

    def __eq__(self, other):
        raise TypeError("unknown value")

    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __hash__(self):
        return id(self)  # no number's hash: a set of passed values never compares it with one

    def __repr__(self):
        return "!"


NOT_NONE = _NotNone()
_SOME = "!"


def _encode(value) -> str:
    if value is NOT_NONE:
        return _SOME
    if value is _NO_VALUE or not isinstance(value, (int, float, str, type(None))):
        return "?"
    text = repr(value)
    return "?" if any(c in text for c in ",|=@") else text


def _decode(text: str):
    if text == "?":
        return _NO_VALUE
    if text == _SOME:
        return NOT_NONE
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _NO_VALUE


def _truth(test: cst.BaseExpression, values: dict, literal) -> Optional[bool]:
    """The truth of ``test`` for every combination of the parameters' values, when one."""
    names = sorted({n.value for n in _names(test)} & set(values))
    if not names:
        return None
    combos = list(itertools.islice(itertools.product(*(sorted(values[n], key=repr) for n in names)),
                                   _MAX_COMBINATIONS + 1))
    if len(combos) > _MAX_COMBINATIONS:
        return None
    seen = set()
    for combo in combos:
        result = _eval(test, dict(zip(names, combo)), literal)
        if result is _UNKNOWN:
            return None
        try:
            seen.add(bool(result))
        except Exception:  # noqa: BLE001 - a value without a truth
            return None
    return seen.pop() if len(seen) == 1 else None


def _names(expr: cst.CSTNode):
    if isinstance(expr, cst.Name):
        yield expr
    elif isinstance(expr, cst.Attribute):
        return  # `obj.threshold`: not the parameter
    else:
        for child in expr.children:
            yield from _names(child)


def _eval(expr: cst.BaseExpression, env: dict, literal):
    """``expr``'s value with the parameters in ``env``, or ``_UNKNOWN``."""
    try:
        if isinstance(expr, cst.Name) and expr.value in env:
            return env[expr.value]
        if isinstance(expr, cst.UnaryOperation):
            inner = _eval(expr.expression, env, literal)
            if inner is _UNKNOWN:
                return _UNKNOWN
            if isinstance(expr.operator, cst.Not):
                return not inner
            return -inner if isinstance(expr.operator, cst.Minus) else _UNKNOWN
        if isinstance(expr, cst.BooleanOperation):
            left = _eval(expr.left, env, literal)
            if left is _UNKNOWN:
                return _UNKNOWN
            if isinstance(expr.operator, cst.And):
                return left if not left else _eval(expr.right, env, literal)
            return left if left else _eval(expr.right, env, literal)
        if isinstance(expr, cst.Comparison):
            left = _eval(expr.left, env, literal)
            for target in expr.comparisons:
                op = _COMPARE.get(type(target.operator))
                right = _eval(target.comparator, env, literal)
                if op is None or left is _UNKNOWN or right is _UNKNOWN:
                    return _UNKNOWN
                if not op(left, right):
                    return False
                left = right
            return True
        value = literal(expr)
        return _UNKNOWN if value is _NO_VALUE else value
    except Exception:  # noqa: BLE001 - `None > 0`: not a value this code runs with
        return _UNKNOWN
