"""``isinstance`` narrowing of a value's kind, inside a branch only.

Library helpers take "an int or a tensor" and branch on it::

    def repeat_blocks(sizes, repeats):
        if isinstance(repeats, torch.Tensor):
            repeats = torch.masked_select(repeats, mask)   # a tensor only if it was one
        ...
        r1 = torch.repeat_interleave(idx, repeats)       # `repeats` is what the caller passed

An assignment made in the true branch of ``isinstance(x, Tensor)`` (or
``torch.is_tensor(x)``) keeps ``x`` a tensor only when it already was one, so
it says nothing new about ``x``'s kind after the branch: the value kinds
(``kinds.py``) and the "likely a tensor" guess (``shapes.py``) read the
binding the branch presumes instead. In the false branch (``else``,
``not isinstance(...)``) ``x`` is not a tensor. Inside the true branch ``x``
is a tensor only when the value the branch presumes is one (otherwise the
branch may never run: every caller passes ``repeats=2``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import Binding

_TENSOR_CLASSES = ("torch.Tensor", "torch.nn.Parameter", "torch_geometric.EdgeIndex")


class Narrowing:
    """``tensor_narrowing``, ``narrowed_binding``, ``presumed_binding``, ``presumed_reaching``.
    Mixed into FileContext."""

    def tensor_narrowing(self, name: str, at: cst.CSTNode) -> Optional[bool]:
        """True: ``at`` is in a branch where ``isinstance(name, Tensor)`` holds
        (the innermost such ``if`` in this function); False: in a branch where
        it does not (``else``, ``if not isinstance(...)``); None: not narrowed here."""
        child = at
        for anc in self.ancestors(at):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(anc, (cst.If, cst.IfExp)) and child in (anc.body, anc.orelse):
                implied = self._implies(anc.test, name, child is anc.body)
                if implied is not None:
                    return implied
            child = anc
        return None

    def narrowed_binding(self, name: str, binding: Binding) -> bool:
        """``binding`` assigns ``name`` in the true branch of ``isinstance(name, Tensor)``."""
        if binding.how not in ("assign", "aug", "unpack") or binding.value is None:
            return False
        return self.tensor_narrowing(name, binding.value) is True

    def presumed_binding(self, name: str, at: cst.CSTNode) -> Optional[Binding]:
        """``lookup(name, at)``'s binding, or, when that was made under
        ``isinstance(name, Tensor)``, the earlier binding it presumes."""
        binding, func = self.lookup(name, at)
        while binding is not None and self.narrowed_binding(name, binding):
            binding = self._previous_binding(name, binding, func)
        return binding

    def presumed_reaching(self, name: str, last: Binding, func, at: cst.CSTNode) -> list[Binding]:
        """The bindings of ``name`` that may reach ``at`` (``_reaching``), without
        the assignments made under ``isinstance(name, Tensor)`` -- they keep a
        tensor a tensor, so the kind is what the branch presumes."""
        reaching = self._reaching(name, last, func, at)
        presumed = [b for b in reaching if not self.narrowed_binding(name, b)]
        if not presumed:
            previous = self.presumed_binding(name, at)
            presumed = [previous] if previous is not None else []
        return presumed

    # ---------------------------------------------------------------------------------
    def _implies(self, test: cst.BaseExpression, name: str, when: bool) -> Optional[bool]:
        """What ``test`` being ``when`` says about "``name`` is a tensor"."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._implies(test.expression, name, not when)
        if isinstance(test, cst.Call):
            return when if self._is_tensor_check(test, name) else None
        if isinstance(test, cst.BooleanOperation):
            left = self._implies(test.left, name, when)
            right = self._implies(test.right, name, when)
            # `a and b` true / `a or b` false: both sides hold; otherwise only what both say
            if isinstance(test.operator, cst.And) == when:
                return left if left is not None else right
            return left if left == right else None
        return None

    def _is_tensor_check(self, call: cst.Call, name: str) -> bool:
        args = [a.value for a in call.args if a.keyword is None]
        if not args or not (isinstance(args[0], cst.Name) and args[0].value == name):
            return False
        func = self.resolve(call.func) or ""
        if func in ("torch.is_tensor", "torch.is_floating_point"):
            return len(args) == 1
        if func != "isinstance" or len(args) != 2:
            return False
        classes = args[1].elements if isinstance(args[1], cst.Tuple) else None
        exprs = [e.value for e in classes] if classes is not None else [args[1]]
        return bool(exprs) and all(self._is_tensor_class(e) for e in exprs)

    def _is_tensor_class(self, expr: cst.BaseExpression) -> bool:
        resolved = self.resolve(expr) or ""
        return resolved in _TENSOR_CLASSES or resolved.split(".")[-1] == "Tensor"
