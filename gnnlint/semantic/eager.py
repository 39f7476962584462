"""Eager-only code: "is this node provably never run under torch.compile?"

One answer for every rule (``is_eager_only``), asked by ``compiled_region``
first and by the rules that report outside compiled code too (GNN004). Code
is eager-only when

- it sits in a branch that is false under compile: ``if not is_compiling():``,
  ``if debug and not is_compiling():``, the ``else`` of ``if is_compiling():``
  (any spelling in ``vocab.IS_COMPILING``: ``torch.compiler.is_compiling``,
  ``torch._dynamo.is_compiling``, ``torch_geometric.is_compiling``,
  ``is_torchdynamo_compiling`` ...);
- it follows ``if is_compiling(): return ...`` (or ``raise``) in the same block;
- its function is decorated with ``torch.compiler.disable`` /
  ``torch._dynamo.disable`` (dynamo never traces it), or is nested in one;
- its function is a helper whose every call in the file is itself eager-only
  (and that nothing compiles directly: not a compiled entry point, not named
  by another file's compiled facts).

The compile-site analysis (``regions.py``) does not follow calls made from
eager-only code, so a helper called only there is not compiled either.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import FuncInfo, _ends_with_exit
from gnnlint.semantic.vocab import COMPILE_FUNCS, DISABLE_FUNCS, IS_COMPILING, IS_COMPILING_NAMES, \
    MESSAGE_PASSING_METHODS

# Methods a compiled model runs directly: never "only called from eager code".
_ENTRY_METHODS = ("forward", "__call__") + MESSAGE_PASSING_METHODS
# What a DataLoader (its worker) calls: a Dataset's item methods, the functions handed to it.
_LOADER_METHODS = ("__getitem__", "__iter__", "__getitems__")
_LOADER_KEYWORDS = ("collate_fn", "worker_init_fn")


class EagerOnly:
    """``is_eager_only`` and its helpers. Mixed into FileContext; reads the SemanticModel."""

    def is_eager_only(self, node: cst.CSTNode) -> bool:
        """``node`` never runs under torch.compile (guarded by ``is_compiling()``,
        in a ``torch.compiler.disable`` function, or in a helper only called from such code)."""
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.If, cst.IfExp)):
                if (child is anc.body and self._false_when_compiling(anc.test)) or \
                        (child is anc.orelse and self._true_when_compiling(anc.test)):
                    return True
            if isinstance(anc, cst.BooleanOperation) and child is anc.right:
                # `not is_compiling() and x.unique().numel() != n`: the right side is never evaluated compiled
                left = self._value_when_compiling(anc.left)
                if left is not None and left is isinstance(anc.operator, cst.Or):  # False `and` / True `or`
                    return True
            if isinstance(anc, (cst.IndentedBlock, cst.Module)) and self._after_compiling_exit(anc, child):
                return True
            if isinstance(anc, cst.FunctionDef) and child is anc.body:
                info = self.func_info.get(anc)
                return info is not None and self.eager_only_function(info)
            child = anc
        return False

    def eager_only_function(self, info: FuncInfo) -> bool:
        """Every line of the function ``info`` runs eagerly only."""
        return self._memoised((info, "eager_only"), lambda: self._eager_only_function(info), False)

    def _eager_only_function(self, info: FuncInfo) -> bool:
        if self.compile_disabled(info):
            return True
        if info.parent is not None and (self.eager_only_function(info.parent) or self.is_eager_only(info.node)):
            return True
        if self._compiled_entry(info):
            return False
        if self._loader_only(info):
            return True
        calls = self.callers_of(info)
        if not calls and info.cls is not None:
            # `obj.method(...)` on a value whose class is not known: every call by that name
            calls = list(self._callers_index()[1].get(info.name, ()))
        return bool(calls) and all(self.is_eager_only(call) for call in calls)

    def _loader_only(self, info: FuncInfo) -> bool:
        """Only a DataLoader runs it, eagerly, on the host side of the pipeline: a
        Dataset's ``__getitem__`` / ``__iter__``, or a function this file uses only as
        a loader's ``collate_fn=`` (``worker_init_fn=``), also through ``partial(f, ...)``."""
        if info.cls is not None:
            return info.parent is None and info.name in _LOADER_METHODS and any(
                base.split(".")[-1].endswith("Dataset") for c in self.local_lineage(info.cls) for base in c.bases)
        if info.parent is not None:
            return False
        uses = self.name_uses(info.name)
        return bool(uses) and all(self._loader_argument(use) for use in uses)

    def _loader_argument(self, use: cst.Name) -> bool:
        arg = self.parent.get(use)
        if isinstance(arg, cst.Arg) and arg.keyword is None:  # `partial(collate, cutoff=5.0)`
            call = self.parent.get(arg)
            if isinstance(call, cst.Call) and (self.resolve(call.func) or "").endswith("partial") \
                    and call.args[0] is arg:
                arg = self.parent.get(call)
        return isinstance(arg, cst.Arg) and arg.keyword is not None and arg.keyword.value in _LOADER_KEYWORDS

    def compile_disabled(self, info: FuncInfo) -> bool:
        """Decorated with ``torch.compiler.disable`` / ``torch._dynamo.disable`` (with or without arguments)."""
        for deco in info.node.decorators:
            target = deco.decorator
            if isinstance(target, cst.Call):
                target = target.func
            if self.resolve(target) in DISABLE_FUNCS:
                return True
        return False

    def _compiled_entry(self, info: FuncInfo) -> bool:
        """Something compiles ``info`` directly: a forward-like method, a
        ``@torch.compile`` function, ``torch.compile(info)``, another file's fact."""
        if info.cls is not None and info.name in _ENTRY_METHODS:
            return True
        for deco in info.node.decorators:
            target = deco.decorator
            if self.resolve(target.func if isinstance(target, cst.Call) else target) in COMPILE_FUNCS:
                return True
        if info.parent is None and info.cls is None:
            if info.name in self.project.compiled:
                return True
            for call in self.compile_calls:
                if call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == info.name:
                    return True
        return False

    # the tests ---------------------------------------------------------------------
    def _is_compiling_test(self, test: cst.BaseExpression) -> Optional[bool]:
        """True: the test is ``is_compiling()``; False: ``not is_compiling()``."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negated = not negated
            test = test.expression
        if isinstance(test, cst.Call) and (self.resolve(test.func) in IS_COMPILING
                                           or (self.last_part(test.func) or "") in IS_COMPILING_NAMES):
            return not negated
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
            cls = self.enclosing_class(test)
            if cls is not None and test.attr.value in self.self_compile_flags(cls):
                return not negated
        return None

    def self_compile_flags(self, cls) -> frozenset:
        """The flags under which a class compiles its own methods: ``if
        self.compile: self.forward = torch.compile(self.forward)`` in its
        ``__init__`` -- its methods run compiled only when ``self.compile`` is
        true, so ``if not self.compile:`` there is eager-only. Empty when one
        of its own compile sites is not under such a flag."""
        return self._memoised((id(cls), "self_compile_flags"), lambda: self._self_compile_flags(cls), frozenset())

    def _self_compile_flags(self, cls) -> frozenset:
        flags = None
        for call in self.compile_calls:
            target = call.args[0].value if call.args and call.args[0].keyword is None else None
            func = self.enclosing_function(call)
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self" and func is not None and func.cls is cls
                    and self.method_of(cls, target.attr.value) is not None):
                continue
            here, child = set(), call
            for anc in self.ancestors(call):
                if anc is func.node:
                    break
                if isinstance(anc, cst.If) and child is anc.body and isinstance(anc.test, cst.Attribute) \
                        and isinstance(anc.test.value, cst.Name) and anc.test.value.value == "self":
                    here.add(anc.test.attr.value)
                child = anc
            flags = here if flags is None else flags & here
        return frozenset(flags or ())

    def _value_when_compiling(self, test: cst.BaseExpression) -> Optional[bool]:
        """What ``test`` surely evaluates to under compile (None: not known):
        an ``is_compiling()`` test (or its negation), through ``and``/``or``."""
        value = self._is_compiling_test(test)
        if value is not None or not isinstance(test, cst.BooleanOperation):
            return value
        left, right = self._value_when_compiling(test.left), self._value_when_compiling(test.right)
        absorbing = not isinstance(test.operator, cst.And)  # False absorbs `and`, True absorbs `or`
        if absorbing in (left, right):
            return absorbing
        return (not absorbing) if left is right is (not absorbing) else None

    def _false_when_compiling(self, test: cst.BaseExpression) -> bool:
        return self._value_when_compiling(test) is False

    def _true_when_compiling(self, test: cst.BaseExpression) -> bool:
        return self._value_when_compiling(test) is True

    def _after_compiling_exit(self, block, stmt: cst.CSTNode) -> bool:
        """``stmt`` follows ``if is_compiling(): return ...`` in the same
        block, so it only runs eagerly."""
        for sibling in block.body:
            if sibling is stmt:
                return False
            if isinstance(sibling, cst.If) and sibling.orelse is None \
                    and self._true_when_compiling(sibling.test) and _ends_with_exit(sibling.body):
                return True
        return False
