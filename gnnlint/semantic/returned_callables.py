"""What runs when the object a factory returns is called: "which methods does ``f()(x)`` run?"

A training step often calls an object a project function built once:
``transform = get_graph_augmentation(cfg)`` then ``view = transform(batch)`` in
``training_step`` (or ``self.augment = build_augmentation(cfg)`` in ``__init__``
and ``self.augment(batch)`` per step). The calling file tells the factory's file
``stepped["get_graph_augmentation()"]`` (step_targets.py); here
``returned_callables(name)`` answers with the methods that call runs: the
``__call__`` (or a module's ``forward``) of each local class the function may
return, also inside ``Compose([...])`` / ``Sequential(...)`` of them (a list
filled by ``append`` or a literal), and a local function it returns.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import ClassInfo, FuncInfo

_COMPOSERS = ("Compose", "Sequential", "RandomApply", "RandomChoice")  # call each of their items
_MAX_DEPTH = 4


class ReturnedCallables:
    """Methods run by calling what a local factory returns. Mixed into FileContext; reads the SemanticModel."""

    def returned_callables(self, name: str) -> list[FuncInfo]:
        factory = self.functions.get(name)
        if factory is None:
            return []
        out: list[FuncInfo] = []
        for ret in factory.returns:
            if ret.value is not None:
                for method in self._called_methods(ret.value, ret, 0):
                    if method not in out:
                        out.append(method)
        return out

    def _called_methods(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> list[FuncInfo]:
        if depth > _MAX_DEPTH:
            return []
        if isinstance(expr, cst.Name):
            local = self.functions.get(expr.value)
            binding, _scope = self.lookup(expr.value, at)
            if binding is not None and binding.how == "def" and local is not None:
                return [local]  # `return augment`: a local function
            out = []
            for reaching, _func in self.reaching(expr.value, at):
                if reaching.how == "assign" and reaching.value is not None:
                    out += self._called_methods(reaching.value, reaching.value, depth + 1)
            return out
        if isinstance(expr, (cst.List, cst.Tuple)):
            return [m for e in expr.elements if not isinstance(e, cst.StarredElement)
                    for m in self._called_methods(e.value, e.value, depth + 1)]
        if not isinstance(expr, cst.Call):
            return []
        callee = self.local_callee(expr)
        if isinstance(callee, ClassInfo):
            method = self.method_of(callee, "__call__") or self.method_of(callee, "forward")
            return [method] if method is not None else []
        if (self.last_part(expr.func) or "") in _COMPOSERS and expr.args:
            items = [a.value for a in expr.args if not a.star] if len(expr.args) > 1 else [expr.args[0].value]
            out = []
            for item in items:
                out += self._called_methods(item, item, depth + 1)
                if isinstance(item, cst.Name):  # `transforms.append(DropEdges(p))` before `Compose(transforms)`
                    out += [m for c in self._append_calls() if isinstance(c.func.value, cst.Name)
                            and c.func.value.value == item.value
                            and self.enclosing_function(c) is self.enclosing_function(item)
                            for m in self._called_methods(c.args[0].value, c, depth + 1)]
            return out
        return []


def factory_name(key: str) -> Optional[str]:
    """``"get_augmentation()"`` -> ``"get_augmentation"`` (a stepped key naming a factory's result)."""
    return key[:-2] if key.endswith("()") and key[:-2].isidentifier() else None
