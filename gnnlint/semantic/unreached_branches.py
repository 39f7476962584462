"""Unreached compiled lines: "is this line of compiled code never reached under compile?" and why.

``compiled_region`` (regions.py) asks one question, ``never_runs_compiled(node)``, before it says why a
line runs compiled. The answer is the first of these shapes that holds (each analysis stays in its
module; the order is the old ``compiled_region`` test's, cheapest and most common first):

- ``eager-only``: ``if not is_compiling():``, a ``torch.compiler.disable`` function, a helper only
  eager code calls (``is_eager_only``, eager.py);
- ``None branch``: ``if dim_size is None:`` in a helper compiled only through calls from compiled
  code, every one passing a value that is never None (``_none_branch_unreached``, here);
- ``None argument``: a line that needs a parameter set (``if pos is None: return ...`` before it) in a
  helper compiled only through calls from compiled code, every one passing a value that is always None
  there: ``None``, or the caller's own optional input no compiled call gives
  (``self._clusters(pos, batch)`` in a ``forward(self, x, batch, pos=None)`` called without ``pos``)
  (``_unset_branch_unreached``, here);
- ``False argument``: the body of ``if P:`` (``if P and ...:``) in a helper compiled only through
  calls from compiled code, every one leaving ``P`` at its falsy literal default or passing a falsy
  literal (``self.decode(z)`` with ``def decode(self, z, v_deduplicated=False)``; the eager
  ``inference()`` passing ``True`` is no compiled call) (``_off_branch_unreached``, here);
- ``optional input``: a branch on an input no compiled call of another file gives
  (``optional_input_unreached``, optional_inputs.py);
- ``None filled``: a branch needing a name None after the function filled it
  (``none_filled_unreached``, none_filled.py);
- ``unpassed input``: a branch needing a ``forward(..., labels=None)`` input no call gives
  (``unpassed_branch``, unpassed_inputs.py);
- ``default branch``: a branch of an abstract forward no told compiled call takes
  (``default_branch_unreached``, compiled_overrides.py);
- ``default-off switch``: ``if self.debug and ...`` with a default-``False`` ``__init__`` switch in a
  class compiled only from another file (``default_off_branch``, default_off_flags.py);
- ``compile switch off``: a parameter every compiled call passes false whenever the compile happens
  (``compile_switch_off``, compile_switches.py);
- ``constant off``: ``if DEBUG:`` with a module constant ``DEBUG = False``, here or imported
  (``constant_off``, constant_branches.py).

``_none_test`` and ``_never_none`` (moved here from regions.py with ``_none_branch_unreached``) are
shared by optional_inputs.py, none_filled.py and containers.py through ``self``, and so is
``enclosing_none_tests`` (which ``P is None`` tests around a line require P None or set).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic import unpassed_inputs
from gnnlint.semantic.compiled_overrides import default_branch_unreached
from gnnlint.semantic.constant_branches import constant_off
from gnnlint.semantic.default_off_flags import default_off_branch
from gnnlint.semantic.model import FuncInfo


class UnreachedBranches:
    """Lines of compiled code that never run compiled. Mixed into FileContext; reads the regions
    (``_compiled_roots``, ``_compiled_via``) regions.py computed."""

    def never_runs_compiled(self, node: cst.CSTNode) -> Optional[str]:
        """Why ``node`` never runs under compile (see the module's list), or None."""
        if self.is_eager_only(node):
            return "eager-only"
        if self._none_branch_unreached(node):
            return "None branch"
        if self._unset_branch_unreached(node):
            return "None argument"
        if self._off_branch_unreached(node):
            return "False argument"
        if self.optional_input_unreached(node):
            return "optional input"
        if self.none_filled_unreached(node):
            return "None filled"
        if unpassed_inputs.unpassed_branch(self, node):
            return "unpassed input"
        if default_branch_unreached(self, node):
            return "default branch"
        if default_off_branch(self, node):
            return "default-off switch"
        if self.compile_switch_off(node):
            return "compile switch off"
        if constant_off(self, node):
            return "constant off"
        return None

    def _none_branch_unreached(self, node: cst.CSTNode) -> bool:
        """``node`` sits in a branch taken only when a parameter is None
        (``if dim_size is None: dim_size = int(index.max()) + 1``) of a
        function compiled only through calls from compiled code, and every
        such call passes a value that is never None (``dim_size=nodes.shape[0]``,
        a parameter annotated ``int``): the branch never runs compiled."""
        func = self.enclosing_function(node)
        if func is None or func in self._compiled_roots or func not in self._compiled_via:
            return False
        calls = self._compiled_via[func]
        if any(arg.star for call in calls for arg in call.args):
            return False
        # one parameter the branch needs None that no compiled call leaves None
        return any(all(self._never_none(self.arg_for_param(func, call, param), call, 0) for call in calls)
                   for param in self._none_params_required(node, func))

    def _unset_branch_unreached(self, node: cst.CSTNode) -> bool:
        """``node`` needs a parameter not None (the body of ``if P is not None:``, after a guard clause
        ``if P is None: return ...``) of a function compiled only through calls from compiled code,
        and every such call passes a value that is always None there (``_always_none``)."""
        func = self.enclosing_function(node)
        if func is None or func in self._compiled_roots or func not in self._compiled_via:
            return False
        unset = self._memoised((func, "unset_params"), lambda: self._unset_params(func, 0), frozenset())
        if not unset:
            return False  # (memoised per function: most helpers get every argument; no walk per line then)
        return any(param in unset for param, needs_none in self._none_conditions(node, func) if not needs_none)

    def _off_branch_unreached(self, node: cst.CSTNode) -> bool:
        """``node`` sits in the body of ``if P:`` / ``if P and Q:`` in a function compiled only
        through calls from compiled code, each leaving ``P`` falsy (``_off_params``)."""
        func = self.enclosing_function(node)
        if func is None or func in self._compiled_roots or func not in self._compiled_via:
            return False
        off = self._memoised((func, "off_params"), lambda: self._off_params(func), frozenset())
        if not off:
            return False
        child = node
        for anc in self.ancestors(node):
            if anc is func.node:
                return False
            if isinstance(anc, cst.If) and child is anc.body \
                    and any(isinstance(o, cst.Name) and o.value in off for o in _and_operands(anc.test)):
                return True
            child = anc
        return False

    def _off_params(self, func: FuncInfo) -> frozenset:
        """The parameters with a falsy literal default (``False``, ``0``) that every compiled call
        of ``func`` leaves out or passes a falsy literal for."""
        calls = self._compiled_via.get(func, ())
        if not calls or any(arg.star for call in calls for arg in call.args):
            return frozenset()
        out = set()
        for param, node in func.params.items():
            default = node.default if isinstance(node, cst.Param) else None
            if default is None or self.literal_value(default) not in (False, 0):
                continue
            if all(self._falsy_literal(self.arg_for_param(func, call, param)) for call in calls):
                out.add(param)
        return frozenset(out)

    def _falsy_literal(self, expr: Optional[cst.BaseExpression]) -> bool:
        if expr is None:  # left out: the falsy default
            return True
        value = self.literal_value(expr)
        return value is None or (value in (False, 0) and not isinstance(value, str))

    def _unset_params(self, func: FuncInfo, depth: int) -> frozenset:
        """The parameters of ``func`` (compiled only through calls from compiled code) that every
        such call leaves None."""
        calls = self._compiled_via.get(func, ())
        if not calls or func in self._compiled_roots or depth > 3 \
                or any(arg.star for call in calls for arg in call.args):
            return frozenset()
        out = set()
        for param in func.params:
            node = func.params[param]
            default_none = isinstance(node, cst.Param) and isinstance(node.default, cst.Name) \
                and node.default.value == "None"
            if all(self._always_none(self.arg_for_param(func, call, param), default_none, call, depth)
                   for call in calls):
                out.add(param)
        return frozenset(out)

    def _always_none(self, expr: Optional[cst.BaseExpression], default_none: bool, at: cst.CSTNode,
                     depth: int) -> bool:
        """The value a compiled call passes is None in every compiled run: left out with a None default,
        ``None``, or a parameter of the calling function that is itself never given under compile (an
        optional ``forward`` input no call gives: unpassed_inputs.py, optional_inputs.py; a helper's
        parameter its own compiled calls leave None)."""
        if expr is None:
            return default_none
        if isinstance(expr, cst.Name) and expr.value == "None":
            return True
        if not isinstance(expr, cst.Name):
            return False
        reaching = self.reaching(expr.value, at)
        if not reaching or not all(b.how == "param" for b, _f in reaching):
            return False
        caller = self.enclosing_function(at)
        if caller is None or expr.value not in caller.params:
            return False
        if unpassed_inputs.unpassed_input(self, expr):
            return True
        if caller in self._fact_roots and caller not in self._compiled_via:
            calls = self._passed_calls(caller)  # what other files' compiled calls give (optional_inputs.py)
            return bool(calls) and self._defaults_to_none(caller, expr.value) \
                and not any(expr.value in call for call in calls)
        return expr.value in self._unset_params(caller, depth + 1)

    def _none_params_required(self, node: cst.CSTNode, func: FuncInfo) -> list:
        return [name for name, must_be_none, _if in self.enclosing_none_tests(node, func)
                if must_be_none and name in func.params]

    def enclosing_none_tests(self, node: cst.CSTNode, func: FuncInfo,
                        bare_names: bool = False) -> Iterator[tuple[str, bool, cst.If]]:
        """(``P``, whether ``P`` must be None, the ``if``) for each ``if`` around ``node`` inside
        ``func``, nearest first, whose branch holding ``node`` runs only when the name ``P`` is None
        (the body of ``if P is None:``, the ``else`` of ``if P is not None:``) or is set (the
        other two); with ``bare_names`` also the body of ``if P:`` / ``if P and Q:`` (set). The one walk behind
        the None branch here, none_filled.py's filled names and containers.py's unset
        constructor parameters (optional_inputs.py's ``_none_conditions`` reads more: conditional
        expressions and earlier guard clauses too)."""
        child = node
        for anc in self.ancestors(node):
            if anc is func.node:
                return
            if isinstance(anc, cst.If):
                name, is_none = self._none_test(anc.test)
                if name is not None and (child is anc.body or child is anc.orelse):
                    yield name, is_none == (child is anc.body), anc
                elif bare_names and child is anc.body:
                    for operand in _and_operands(anc.test):  # `if P:`, `if P and self.use_x:`
                        if isinstance(operand, cst.Name):
                            yield operand.value, False, anc
            child = anc

    @staticmethod
    def _none_test(test: cst.BaseExpression) -> tuple:
        """(``P``, True) for ``P is None``; (``P``, False) for ``P is not None``."""
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
                and isinstance(test.comparisons[0].comparator, cst.Name) \
                and test.comparisons[0].comparator.value == "None":
            op = test.comparisons[0].operator
            if isinstance(op, (cst.Is, cst.IsNot)):
                return test.left.value, isinstance(op, cst.Is)
        return None, False

    _NEVER_NONE_CALLS = ("len", "int", "float", "size", "numel", "dim", "max", "sum", "item")

    def _never_none(self, expr: Optional[cst.BaseExpression], at: cst.CSTNode, depth: int) -> bool:
        """A value that is never None: a literal, arithmetic, ``x.shape[0]``,
        ``len(x)``/``x.size(0)``, a name bound once to such a value, or a
        parameter annotated with a type that does not admit None."""
        if expr is None:  # not passed: the default
            return False
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.BinaryOperation)):
            return True
        if isinstance(expr, cst.Subscript):
            return isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape"
        if isinstance(expr, cst.Call):
            return (self.last_part(expr.func) or "") in self._NEVER_NONE_CALLS
        if not isinstance(expr, cst.Name) or depth > 3:
            return False
        binding, func = self.lookup(expr.value, at)
        if binding is None:
            return False
        if binding.how == "assign" and binding.value is not None and \
                len(func.bindings.get(expr.value, ()) if func is not None else ()) == 1:
            return self._never_none(binding.value, binding.value, depth + 1)
        if binding.how == "param" and isinstance(binding.node, cst.Param):
            param = binding.node
            annotation = self.module.code_for_node(param.annotation.annotation) if param.annotation else ""
            default_none = isinstance(param.default, cst.Name) and param.default.value == "None"
            return bool(annotation) and not default_none and "None" not in annotation \
                and "Optional" not in annotation and "Any" not in annotation
        return False


def _and_operands(test: cst.BaseExpression) -> list:
    """The operands of ``a and b and c`` (``[test]`` for any other test)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _and_operands(test.left) + _and_operands(test.right)
    return [test]
