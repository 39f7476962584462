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


class Containers:
    """Compiled elements of lists. Mixed into FileContext; reads the SemanticModel."""

    def element_refs(self, comp: cst.ListComp, site: cst.Call) -> list[tuple]:
        """Refs for the loop names bound to the elements of the list ``comp``
        builds (its ``elt`` is the compile call), when the list is assigned to
        a name or a ``self`` attribute."""
        parent = self.parent.get(comp)
        if not isinstance(parent, (cst.Assign, cst.AnnAssign)) or parent.value is not comp:
            return []
        targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
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
            if any(self._is_ref_expr(iterable, holder, iterable) for holder in holders):
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
