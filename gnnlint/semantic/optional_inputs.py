"""Does this line of a library function run for what compiled callers pass?

A function another file calls from compiled code (``remove_self_loops(edge_index)``
inside a compiled ``GATConv.forward``, ``gcn_norm`` -> ``add_remaining_self_loops``)
is compiled as a whole, but its optional branches run only for optional
inputs: ``if edge_attr is not None: ... edge_attr[mask]`` runs only when a
caller passes edge features, ``if is_torch_sparse_tensor(edge_index): ...``
only for a sparse adjacency. The calling file tells the defining file which
parameters its compiled calls give (``ExportedFacts.compiled_passed``:
``ImportRef(module, "remove_self_loops")`` -> ``"0,edge_attr"``; ``!`` marks
a value that is never None, ``*`` a call that cannot be read), and the
engine joins the calls of all files with ``|``. A parameter the caller only
forwards from its own ``= None`` parameter (``gcn_norm(edge_index,
edge_weight)`` with ``edge_weight=None`` in the caller) is not given: it is
optional data there too.

``optional_input_unreached(node)`` is True when ``node`` sits in such a
function (compiled only through another file's calls) and runs only

- when a parameter defaulting to None is given, and no compiled call gives it;
- when a parameter is None, and every compiled call gives a never-None value
  (``index2ptr(batch, batch_size)`` after ``batch_size`` was computed);
- when a parameter with a constant default that fails the test is switched on
  (``if preserve_features:`` with ``= False``, ``if convergence > 0:`` with
  ``= 0.0``), and no compiled call gives it (physicsnemo's compiled
  ``smooth`` -> ``smooth_laplacian(m, n_iter=...)``);
- for a sparse input (``if isinstance(adj, SparseTensor):``, after ``if not
  is_torch_sparse_tensor(src): raise``, ``if layout is not None:`` where
  ``layout`` is set only in a sparse branch): a sparse adjacency fed to a
  compiled model is GNN005's finding where it is built, and nothing says the
  compiled callers pass one.

The compiled-region question (regions.py) then says "not compiled" for it,
and the calls made there are not followed.
"""
from __future__ import annotations

import os
from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.model import keyed_args


class OptionalInputs:
    """Mixed into FileContext; reads the SemanticModel and the Regions' fact roots."""

    # the calling side -------------------------------------------------------------------
    def _export_passed(self, ref: ImportRef, call: Optional[cst.Call], why: Optional[str] = None) -> None:
        """What a compiled call of the imported ``ref`` gives (``*``: unknown),
        with ``@<why it is compiled here>, from <this file>`` when known: the
        defining file names the compiled code that reaches a line through this
        call (``origin_reaching``), not whichever fact arrived first."""
        spec = "*" if call is None else self.passed_spec(call)
        if why and call is not None:
            spec += "@" + f"{why}, from {os.path.basename(self.path)}".replace("|", "/")
        self.exported.compiled_passed.append((ref, spec))

    def passed_spec(self, call: cst.Call) -> str:
        """What ``call`` gives: its keyed arguments (``0,reduction``; ``!``: never None) that are not
        None or an optional parameter passed through; ``-``: nothing; ``*``: unknown (``*args``)."""
        args = keyed_args(call)
        if args is None:
            return "*"
        items = [key + ("!" if self._never_none(value, call, 0) else "")
                 for key, value in args if not self._optional_value(value, call)]
        return ",".join(items) or "-"

    def _optional_value(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``None``, or a parameter of the calling function that defaults to
        None, not rebound before the call (optional data passed through)."""
        if isinstance(expr, cst.Name) and expr.value == "None":
            return True
        if not isinstance(expr, cst.Name):
            return False
        reaching = self.reaching(expr.value, at)
        if not reaching:
            return False
        for binding, _func in reaching:
            if binding.how != "param" or not isinstance(binding.node, cst.Param):
                return False
            default = binding.node.default
            if not (isinstance(default, cst.Name) and default.value == "None"):
                return False
        return True

    # the defining side ------------------------------------------------------------------
    def optional_input_unreached(self, node: cst.CSTNode) -> bool:
        func = self.enclosing_function(node)
        if func is None or func not in self._fact_roots:
            return False
        if self._sparse_only(node, func):
            return True
        if func in self._compiled_via:
            return False  # also called from compiled code here, with its own arguments
        calls = self._passed_calls(func)
        if calls is None:
            return False
        for param, needs_none in self._none_conditions(node, func):
            if needs_none and calls and all(param in call and call[param] for call in calls):
                return True
            if not needs_none and self._defaults_to_none(func, param) and not any(param in call for call in calls):
                return True
        # `if preserve_features:` / `if convergence > 0:` with the default False / 0.0, which no compiled call
        # overrides: the branch runs only for a caller that switches it on, and none does
        return any(not any(param in call for call in calls) for param in self._default_fails(node, func))

    def origin_reaching(self, node: cst.CSTNode) -> Optional[str]:
        """For a line of a function compiled only through other files' calls
        that runs under ``P is None`` / ``P is not None`` tests of its
        parameters: why the first compiled call whose arguments take it there
        is compiled (``@...`` of ``compiled_passed``), or None."""
        func = self.enclosing_function(node)
        if func is None or func not in self._fact_roots or func in self._compiled_via:
            return None
        conditions = self._none_conditions(node, func)
        spec = self.project.compiled_passed.get(_passed_key(func))
        if not conditions or not spec:
            return None
        calls = self._passed_calls(func)
        if calls is None:
            return None
        # first a call that leaves the parameter out (surely takes the branch), then one
        # that passes a value which may be None (`index2ptr(batch, batch_size)`)
        for strict in (True, False):
            for given, one in zip(calls, spec.split("|")):
                origin = one.partition("@")[2]
                if origin and all((param not in given if strict else not given.get(param, False))
                                  if needs_none else param in given for param, needs_none in conditions):
                    return origin
        return None

    def _passed_calls(self, func) -> Optional[list]:
        """[{parameter: never None}] for each compiled call another file makes, or None when unknown."""
        spec = self.project.compiled_passed.get(_passed_key(func))
        if not spec:
            return None
        names = list(func.params)[1:] if func.cls is not None else list(func.params)  # not `self`
        calls = []
        for one in spec.split("|"):
            one = one.partition("@")[0]
            if one == "*":
                return None
            given = {}
            for item in one.split(","):
                if item in ("", "-"):
                    continue
                key, never_none = item.rstrip("!"), item.endswith("!")
                if key.isdigit():
                    if int(key) >= len(names):
                        return None  # *args
                    key = names[int(key)]
                given[key] = never_none
            calls.append(given)
        return calls

    @staticmethod
    def _defaults_to_none(func, param: str) -> bool:
        node = func.params.get(param)
        return isinstance(node, cst.Param) and isinstance(node.default, cst.Name) and node.default.value == "None"

    def _none_conditions(self, node: cst.CSTNode, func) -> list:
        """(parameter, needs it None) for each ``P is None`` / ``P is not None``
        test the line runs under: enclosing ``if``s and earlier ``if P is None:
        return`` guard clauses."""
        out = []
        for test, holds in self._conditions(node, func):
            name, is_none = self._none_test(test)
            if name in func.params:
                out.append((name, is_none == holds))
        return out

    def _default_fails(self, node: cst.CSTNode, func) -> list:
        """The parameters whose constant default (``False``, ``0``, ``0.0``) fails a test
        the line runs under (``P``, ``not P``, ``P > 0``; one operand of an ``and`` that
        must hold), the parameter never rebound in the function."""
        out = []
        for test, holds in self._conditions(node, func):
            tests = [test]
            if holds and isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                tests = _conjuncts(test)
            for one in tests:
                param, value = _default_test(one, func)
                if param is not None and value is not None and value != holds \
                        and all(b.how == "param" for b in func.bindings.get(param, ())):
                    out.append(param)
        return out

    def _conditions(self, node: cst.CSTNode, func) -> list:
        """(test, whether it holds) for each condition the line runs under."""
        out, child = [], node
        for anc in self.ancestors(node):
            if anc is func.node:
                break
            if isinstance(anc, (cst.If, cst.IfExp)) and child in (anc.body, anc.orelse):
                out.append((anc.test, child is anc.body))
            if isinstance(anc, cst.IndentedBlock) and isinstance(self.parent.get(anc), cst.FunctionDef):
                for stmt in anc.body:
                    if stmt is child:
                        break
                    if isinstance(stmt, cst.If) and stmt.orelse is None and _exits(stmt.body):
                        out.append((stmt.test, False))
            child = anc
        return out

    def _sparse_only(self, node: cst.CSTNode, func) -> bool:
        if self.sparse_input_guard(node) is not None:
            return True
        for test, holds in self._conditions(node, func):
            if isinstance(test, cst.Name):  # `is_sparse = is_torch_sparse_tensor(edge_index)` ... `if is_sparse:`
                values = [b.value for b, _f in self.reaching(test.value, test)
                          if b.how == "assign" and b.value is not None]
                test = values[0] if len(values) == 1 else test
            for name in func.params:
                if self._implies(test, name, holds, self._is_sparse_check):
                    return True
            local, is_none = self._none_test(test)
            if local is not None and local not in func.params and is_none != holds \
                    and self._set_only_when_sparse(local, func):
                return True
        return False

    def _set_only_when_sparse(self, name: str, func) -> bool:
        """Every non-None value of local ``name`` is assigned in a sparse branch
        (``layout = None`` ... ``if is_torch_sparse_tensor(edge_index): layout = edge_index.layout``)."""
        values = [b for b in func.bindings.get(name, ()) if b.how != "param"]
        set_ = [b for b in values if not (isinstance(b.value, cst.Name) and b.value.value == "None")]
        return bool(set_) and len(set_) < len(values) and all(
            b.value is not None and self.sparse_input_guard(b.value) is not None for b in set_)


def _passed_key(func) -> str:
    """The ``compiled_passed`` key of a fact root: a function's name, or the
    class whose ``forward`` another file's compiled code calls (``layer(x,
    edge_index, edge_attr)`` on a submodule built from this file's class)."""
    return func.cls.name if func.cls is not None else func.name


def _exits(body: cst.BaseSuite) -> bool:
    """The block ends in ``return`` / ``raise``."""
    stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = stmts[-1] if stmts else None
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], (cst.Return, cst.Raise))
    return isinstance(last, cst.SimpleStatementSuite) and bool(last.body) \
        and isinstance(last.body[-1], (cst.Return, cst.Raise))


def _conjuncts(test: cst.BaseExpression) -> list:
    """The operands of ``a and b and c``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


_COMPARE = {cst.GreaterThan: lambda a, b: a > b, cst.GreaterThanEqual: lambda a, b: a >= b,
            cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b,
            cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b}


def _constant(expr: Optional[cst.BaseExpression]):
    """The value of ``False`` / ``True`` / an int or float literal (``-1`` too), else None."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _constant(expr.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else None
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return expr.evaluated_value
        except (ValueError, SyntaxError):
            return None
    return None


def _default_test(test: cst.BaseExpression, func) -> tuple:
    """(parameter, the test's truth with the parameter at its constant default) for
    ``P`` / ``not P`` / ``P <op> constant`` on a parameter of ``func``; else (None, None)."""
    negate = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negate = test.expression, not negate
    name, value = None, None
    if isinstance(test, cst.Name):
        name = test.value
        default = _param_default(func, name)
        value = None if default is None else bool(default)
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        target = test.comparisons[0]
        compare = _COMPARE.get(type(target.operator))
        bound = _constant(target.comparator)
        name = test.left.value
        default = _param_default(func, name)
        if compare is not None and isinstance(bound, (int, float)) and default is not None:
            value = compare(default, bound)
    if value is None:
        return None, None
    return name, value != negate


def _param_default(func, name: str):
    """The constant default of parameter ``name`` (``False``, ``0.0``), or None."""
    node = func.params.get(name)
    if not isinstance(node, cst.Param) or node.default is None:
        return None
    return _constant(node.default)
