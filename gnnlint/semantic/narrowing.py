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
_CHECKS = ("isinstance", "torch.is_tensor", "torch.is_floating_point")


class Narrowing:
    """``tensor_narrowing``, ``narrowed_binding``, ``presumed_binding``, ``presumed_reaching``,
    ``sparse_input_guard``. Mixed into FileContext."""

    def tensor_narrowing(self, name: str, at: cst.CSTNode) -> Optional[bool]:
        """True: ``at`` is in a branch where ``isinstance(name, Tensor)`` holds
        (the innermost such ``if`` in this function); False: in a branch where
        it does not (``else``, ``if not isinstance(...)``); None: not narrowed here."""
        if name not in self._checked_names():
            return None  # no call of the file tests `name` (every _is_tensor_check is false)
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

    def _checked_names(self) -> frozenset:
        """Names some call of the file hands first to ``isinstance`` / ``torch.is_tensor`` /
        ``torch.is_floating_point`` (what ``_is_tensor_check`` needs): an exact gate, memoised."""
        if "_narrowing_names" not in self.__dict__:
            names = set()
            for call in self.calls_any_order():
                first = next((a.value for a in call.args if a.keyword is None), None)
                if isinstance(first, cst.Name) and first.value not in names \
                        and self.resolve(call.func) in _CHECKS:
                    names.add(first.value)
            self._narrowing_names = frozenset(names)
        return self._narrowing_names

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

    def presumed_reaching(self, name: str, at: cst.CSTNode, reaching: Optional[list] = None) -> list:
        """The bindings of ``name`` that may reach ``at`` (``reaching``, with
        their scopes), without the assignments made under ``isinstance(name,
        Tensor)`` -- they keep a tensor a tensor, so the kind is what the
        branch presumes. ``reaching``: ``self.reaching(name, at)`` when the caller has it."""
        reaching = self.reaching(name, at) if reaching is None else reaching
        presumed = [(b, f) for b, f in reaching if not self.narrowed_binding(name, b)]
        if not presumed and reaching:
            previous = self.presumed_binding(name, at)
            presumed = [(previous, reaching[0][1])] if previous is not None else []
        return presumed

    # ---------------------------------------------------------------------------------
    def _implies(self, test: cst.BaseExpression, name: str, when: bool, check=None) -> Optional[bool]:
        """What ``test`` being ``when`` says about "``name`` is a tensor"
        (``check(test, name)``: about another property, e.g. "is sparse")."""
        check = check or self._is_tensor_check
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._implies(test.expression, name, not when, check)
        if isinstance(test, cst.BooleanOperation):
            left = self._implies(test.left, name, when, check)
            right = self._implies(test.right, name, when, check)
            # `a and b` true / `a or b` false: both sides hold; otherwise only what both say
            if isinstance(test.operator, cst.And) == when:
                return left if left is not None else right
            return left if left == right else None
        return when if check(test, name) else None

    def _is_tensor_check(self, call: cst.BaseExpression, name: str) -> bool:
        if not isinstance(call, cst.Call):
            return False
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

    # "accepts a sparse input" versus "builds one" ---------------------------------------
    def sparse_input_guard(self, node: cst.CSTNode) -> Optional[str]:
        """The parameter whose sparse-ness guards the branch holding ``node``
        (``if is_torch_sparse_tensor(edge_index):``, ``if isinstance(adj_t, SparseTensor):``,
        ``edge_index.is_sparse``): code there only runs when the caller already
        passes a sparse adjacency, so a sparse value it makes re-wraps that input
        (``set_sparse_value(edge_index, v)``, ``SparseTensor.from_edge_index(adj_t.coo())``)
        rather than building one."""
        func = self.enclosing_function(node)
        if func is None:
            return None
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(anc, (cst.If, cst.IfExp)) and child in (anc.body, anc.orelse):
                for name in func.params:
                    if self._implies(anc.test, name, child is anc.body, self._is_sparse_check):
                        return name
            child = anc
        return None

    def _is_sparse_check(self, test: cst.BaseExpression, name: str) -> bool:
        def is_name(expr) -> bool:
            return isinstance(expr, cst.Name) and expr.value == name
        if isinstance(test, cst.Attribute):  # `adj.is_sparse`
            return test.attr.value in ("is_sparse", "is_sparse_csr") and is_name(test.value)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:  # `adj.layout == torch.sparse_csr`
            left, right = test.left, test.comparisons[0].comparator
            operator = test.comparisons[0].operator
            return isinstance(operator, (cst.Equal, cst.In)) and isinstance(left, cst.Attribute) \
                and left.attr.value == "layout" and is_name(left.value) and "sparse" in self.module.code_for_node(right)
        if not isinstance(test, cst.Call):
            return False
        args = [a.value for a in test.args if a.keyword is None]
        if not args or not is_name(args[0]):
            return False
        func = (self.resolve(test.func) or self.last_part(test.func) or "").split(".")[-1]
        if func in ("is_torch_sparse_tensor", "is_sparse", "is_sparse_tensor"):
            return len(args) == 1
        if func == "isinstance" and len(args) == 2:
            classes = args[1].elements if isinstance(args[1], cst.Tuple) else None
            exprs = [e.value for e in classes] if classes is not None else [args[1]]
            return bool(exprs) and all((self.resolve(e) or self.last_part(e) or "").endswith("SparseTensor")
                                       for e in exprs)
        return False
