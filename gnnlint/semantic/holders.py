"""Which local class holds an attribute: ``self.potential`` in ``self.potential.model.forward = torch.compile(...)``.

``class_of`` answers for values it can follow (constructors, factories,
callers' arguments). An attribute set from a parameter with no in-file
caller (``def __init__(self, potential: Potential = None)``) or from a
classmethod constructor (``Potential.from_checkpoint(...)``) still names its
class: the annotation, the class the classmethod is called on. ``holder_class``
adds those two, for the holder of a nested compiled attribute (compile_sites.py
``_ref_for_target``): the compiled module then runs wherever that class calls
``self.model``.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import ClassInfo

class Holders:
    """Mixed into FileContext; reads the SemanticModel."""

    def holder_class(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[ClassInfo]:
        """The local class ``expr`` (``self.potential``) is an instance of, or None."""
        found = self.class_of(expr, at)
        if isinstance(found, ClassInfo):
            return found
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        cls = self.enclosing_class(at)
        if cls is None:
            return None
        classes = {self._declared_class(value) for value in self.class_attr_values(cls, expr.attr.value)}
        classes.discard(None)
        return classes.pop() if len(classes) == 1 else None

    def _declared_class(self, value: cst.BaseExpression) -> Optional[ClassInfo]:
        """``Potential.from_checkpoint(...)`` (a classmethod of a local class), or a
        parameter annotated with a local class (``potential: Potential = None``)."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            owner = self.classes.get(self.last_part(value.func.value) or "") \
                if isinstance(value.func.value, cst.Name) else None
            method = owner.methods.get(value.func.attr.value) if owner is not None else None
            if method is not None and any(self.last_part(d.decorator) == "classmethod" for d in method.node.decorators):
                return owner
            return None
        if isinstance(value, cst.Name):
            binding, _func = self.lookup(value.value, value)
            param = binding.node if binding is not None and binding.how == "param" else None
            if isinstance(param, cst.Param) and param.annotation is not None:
                ann = param.annotation.annotation
                if isinstance(ann, cst.Subscript) and self.last_part(ann.value) == "Optional" and ann.slice:
                    ann = ann.slice[0].slice.value if isinstance(ann.slice[0].slice, cst.Index) else ann
                if isinstance(ann, cst.Name):
                    return self.classes.get(ann.value)
        return None

    def handed_holder_refs(self, target: cst.CSTNode, at: cst.CSTNode) -> list[tuple]:
        """``def compile_model(model, ...): model.module = torch.compile(...)``: the
        object a caller passes for ``model`` holds the compiled module from that
        call on -- calling it (``model(batch)``) runs it. Refs (compile_sites.py's
        ``("name", ...)``) for the callers' names, after their call."""
        if isinstance(target, cst.Attribute) and target.attr.value == "forward":
            target = target.value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return []
        func = self.enclosing_function(at)
        param = target.value.value
        if func is None or param not in func.params or param in ("self", "cls"):
            return []
        if any(b.how != "param" for b in func.bindings.get(param, [])):
            return []  # rebound in the function: not the caller's object
        refs = []
        for call in self.callers_of(func):
            arg = self.arg_for_param(func, call, param)
            if isinstance(arg, cst.Name):
                stmt = self.statement_of(call)
                refs.append(("name", arg.value, self.enclosing_function(call), self.order.get(stmt, 0), stmt))
        return refs

    def stored_holder_refs(self, refs: list[tuple]) -> list[tuple]:
        """``compiled = torch.compile(...)`` then ``model.module = compiled`` in the same
        function: ``handed_holder_refs`` of that attribute; ``self.model = compiled``
        (later in the method): the class's ``self.model`` holds it."""
        found: list[tuple] = []
        for ref in refs:
            if ref[0] != "name" or ref[2] is None:
                continue
            for node in ref[2].node.body.body:
                stmt = node.body[0] if isinstance(node, cst.SimpleStatementLine) and node.body else None
                if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Name) and stmt.value.value == ref[1]:
                    for target in stmt.targets:
                        found.extend(self.handed_holder_refs(target.target, stmt.value))
                        if self.order.get(node, 0) > ref[3] and _is_self_attr(target.target):
                            # `model = torch.compile(model)` then `self.model = model`
                            stored = self._ref_for_target(target.target, stmt.value)
                            if stored is not None:
                                found.append(stored)
        return found

    def holder_callers(self, func) -> list[cst.Call]:
        """``self.potential.forward(x)`` calls of the method ``func`` that ``callers_of``
        does not see (the holder's class known only from ``holder_class``)."""
        if func.cls is None:
            return []
        key = (id(func), "holder_callers")

        def compute():
            found = []
            for call in self.all_calls():
                f = call.func
                if isinstance(f, cst.Attribute) and f.attr.value == func.name and isinstance(f.value, cst.Attribute) \
                        and self.class_of(f.value, call) is None and self.holder_class(f.value, call) is func.cls:
                    found.append(call)
            return found
        return self._memoised(key, compute, [])

    def held_compile_calls(self, site_node: cst.CSTNode) -> Optional[list[cst.Call]]:
        """For a compile of a held object's module (``self.potential.model.forward =
        torch.compile(...)`` in a calculator): the compiling class's calls of that
        holder (``self.potential.forward(x)``, ``self.potential(x)``) -- where the
        compiled instance is run (the holder's class may run other, uncompiled
        instances elsewhere). None for any other compile site."""
        if not isinstance(site_node, cst.Call) or not site_node.args:
            return None
        target = site_node.args[0].value
        if isinstance(target, cst.Attribute) and target.attr.value == "forward":
            target = target.value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Attribute)
                and isinstance(target.value.value, cst.Name) and target.value.value.value == "self"):
            return None
        holder = target.value
        if self.holder_class(holder, site_node) is None:
            return None
        cls = self.enclosing_class(site_node)
        text = self.module.code_for_node(holder)
        found = []
        for call in self.all_calls():
            func = call.func.value if isinstance(call.func, cst.Attribute) else call.func
            if isinstance(func, cst.Attribute) and self.enclosing_class(call) is cls \
                    and self.module.code_for_node(func) == text:
                found.append(call)
        return found


def _is_self_attr(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"
