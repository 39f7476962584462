"""Compiled models kept in a list: "which names hold an element of it?"

``self.models = [torch.compile(m) for m in self.models]`` (a committee of
models, one compiled copy each) holds compiled models; a loop over the list
(``for model in self.models:``, ``for i, model in enumerate(self.models):``)
binds each in turn, so the loop's name holds a compiled model.
``element_refs`` gives compile_sites.compiled_refs those names as refs.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.model import assigned_targets


class Containers:
    """Compiled elements of lists. Mixed into FileContext; reads the SemanticModel."""

    def element_refs(self, comp: cst.ListComp, site: cst.Call) -> list[tuple]:
        """Refs for the loop names bound to the elements of the list ``comp``
        builds (its ``elt`` is the compile call), when the list is assigned to
        a name or a ``self`` attribute."""
        parent = self.parent.get(comp)
        if not isinstance(parent, (cst.Assign, cst.AnnAssign)) or parent.value is not comp:
            return []
        if self._compile_never_enabled(site):
            return []
        targets = assigned_targets(parent)
        holders = [ref for ref in (self._ref_for_target(t, site) for t in targets) if ref is not None]
        refs: list[tuple] = []
        for loop in self.loops:
            if not isinstance(loop, cst.For):
                continue
            name = self._element_name(loop)
            if name is None:
                continue
            iterable = loop.iter
            if isinstance(iterable, cst.Call) and self.resolve(iterable.func) == "enumerate" and iterable.args:
                iterable = iterable.args[0].value
            if any(self.is_ref_expr(iterable, holder, iterable) for holder in holders):
                refs.append(("name", name.value, self.enclosing_function(loop), self.order.get(loop, 0), loop.iter))
        return refs

    def _element_name(self, loop: cst.For) -> Optional[cst.Name]:
        """``model`` of ``for model in xs`` / ``for i, model in enumerate(xs)``."""
        target = loop.target
        if isinstance(loop.iter, cst.Call) and self.resolve(loop.iter.func) == "enumerate":
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return None
            target = target.elements[1].value
        return target if isinstance(target, cst.Name) else None

    def _compile_never_enabled(self, site: cst.Call) -> bool:
        """The compile in a class's ``__init__`` runs only when a parameter is
        set (``if kwargs is not None:`` / ``else:`` of ``if kwargs is None:`` /
        ``if flag:``, the parameter defaulting to None or False), the class is
        built in this file, and every construction here leaves the parameter
        unset: the list holds the eager objects (an example script building its
        optimizer wrapper without ``torch_compile_kwargs``). A class built only
        elsewhere (a calculator users construct) keeps its compiled branch."""
        func = self.enclosing_function(site)
        if func is None or func.cls is None or func.name != "__init__":
            return False
        needed = self._params_set_for(site, func)
        if not needed:
            return False
        builds = [c for c in self.all_calls() if self.local_callee(c) is func.cls]
        if not builds or any(a.star for c in builds for a in c.args):
            return False
        return any(all(_unset(self.arg_for_param(func, c, p)) for c in builds) for p in needed)

    def _params_set_for(self, node: cst.CSTNode, func) -> list[str]:
        """Parameters (default None / False) that must be set for ``node`` to run."""
        return [name for name, must_be_none, _if in self.enclosing_none_tests(node, func, bare_names=True)
                if not must_be_none and name in func.params and _unset(func.params[name].default)]


def _unset(expr: Optional[cst.BaseExpression]) -> bool:
    """Not passed, or passed as None / False."""
    return expr is None or (isinstance(expr, cst.Name) and expr.value in ("None", "False"))
