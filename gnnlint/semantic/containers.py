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

from gnnlint.semantic.kind_tables import _MODEL_METHODS_SELF
from gnnlint.semantic.model import assigned_targets

# the suffix of a hand-off's parameter spec (``Trainer:models[]``): a list of compiled objects
ELEMENTS = "[]"


class Containers:
    """Compiled elements of lists. Mixed into FileContext; reads the SemanticModel."""

    def element_refs(self, comp: cst.ListComp, site: cst.Call) -> list[tuple]:
        """Refs for the loop names bound to the elements of the list ``comp``
        builds (its ``elt`` is the compile call), when the list is assigned to
        a name or a ``self`` attribute, and the list itself (``("elements", holder)``)."""
        parent = self.parent.get(comp)
        if not isinstance(parent, (cst.Assign, cst.AnnAssign)) or parent.value is not comp:
            return []
        if self._compile_never_enabled(site):
            return []
        targets = assigned_targets(parent)
        holders = [ref for ref in (self._ref_for_target(t, site) for t in targets) if ref is not None]
        # the loops and comprehensions over it; where the list goes (`Trainer(models=self.models)`)
        return [element for holder in holders for element in self.holder_element_refs(holder)] \
            + [("elements", holder) for holder in holders]

    def item_store_refs(self, target: cst.CSTNode, site: cst.CSTNode) -> list[tuple]:
        """``models[i] = torch.compile(model)`` (a loop re-binding each item of a list,
        ``self.encoders[name] = ...`` of a dict): the container holds compiled elements."""
        if not isinstance(target, cst.Subscript):
            return []
        holder = self._ref_for_target(target.value, site)
        if holder is not None and holder[0] == "name":
            # the store runs in a loop: the reads after it, even a later iteration's, see the compiled items
            holder = ("name", holder[1], holder[2], holder[3], None)
        return [("elements", holder)] if holder is not None else []

    # -- lists a compiled object is put in: ("elements", holder ref) ------------------------
    def list_holder_refs(self, ref: tuple) -> list[tuple]:
        """``("elements", holder)`` refs of the lists ``ref``'s compiled object is put in:
        ``models.append(model)``, ``models = [model]`` (a name or a ``self`` attribute)."""
        if ref[0] not in ("name", "self"):
            return []
        out = []
        for call in self._append_calls():
            if call.args and self.is_ref_expr(call.args[0].value, ref, call.args[0].value):
                # `models.append(model)`: the loops over `models` after it; `self.models.append(model)`: any
                holder = self._ref_for_target(call.func.value, call)  # type: ignore[attr-defined]
                if holder is not None:
                    out.append(("elements", holder))
        for literal in self._list_literals():
            if any(not isinstance(e, cst.StarredElement) and self.is_ref_expr(e.value, ref, e.value)
                   for e in literal.elements):
                parent = self.parent.get(literal)
                if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is literal:
                    out += [("elements", holder) for holder in
                            (self._ref_for_target(t, literal) for t in assigned_targets(parent)) if holder is not None]
        return out

    def lists_ref(self, expr: cst.BaseExpression, ref: tuple) -> bool:
        """``expr`` is a list / tuple literal one of whose elements is ``ref``'s object."""
        return isinstance(expr, (cst.List, cst.Tuple)) and ref[0] in ("name", "self") and any(
            not isinstance(e, cst.StarredElement) and self.is_ref_expr(e.value, ref, e.value) for e in expr.elements)

    def _append_calls(self) -> list[cst.Call]:
        if "_append_calls_memo" not in self.__dict__:
            self._append_calls_memo = [c for c in self.all_calls() if isinstance(c.func, cst.Attribute)
                                       and c.func.attr.value == "append" and len(c.args) == 1]
        return self._append_calls_memo

    def _list_literals(self) -> list:
        if "_list_literals_memo" not in self.__dict__:
            self._list_literals_memo = [n for n in self.preorder if isinstance(n, (cst.List, cst.Tuple))
                                        and isinstance(self.parent.get(n), (cst.Assign, cst.AnnAssign))]
        return self._list_literals_memo

    def holder_element_refs(self, holder: tuple) -> list[tuple]:
        """Refs of the loop names bound to the elements of the list ``holder`` holds:
        ``for model in models:``, ``[model(x) for model in self.models]``."""
        refs = []
        for loop in self._element_loops():
            name = self._element_name(loop)
            iterable = loop.iter
            if isinstance(iterable, cst.Call) and self.resolve(iterable.func) == "enumerate" and iterable.args:
                iterable = iterable.args[0].value
            if name is None or not self.is_ref_expr(iterable, holder, iterable):
                continue
            # a comprehension's element expression comes before its `for` clause
            start = self.parent.get(loop) if isinstance(loop, cst.CompFor) else loop
            while isinstance(start, cst.CompFor):
                start = self.parent.get(start)
            refs.append(("name", name.value, self.enclosing_function(loop), self.order.get(start, 0), loop.iter))
        return refs

    def element_read_refs(self, holder: tuple) -> list[tuple]:
        """Refs of what reads the elements of the list ``holder`` holds, outside a loop:
        ``self.student = models[0].to(device)`` (an item), ``self.model1, self.model2 =
        models`` (unpacked), and ``self.models = [m.to(device) for m in models]`` (a new list
        of the same objects, an ``("elements", ...)`` ref)."""
        out: list[tuple] = []
        for node in self._element_reads():
            value = module_self(node.value)
            targets = assigned_targets(node)
            if isinstance(value, cst.Subscript):
                if self.is_ref_expr(value.value, holder, value.value):
                    out += [r for r in (self._ref_for_target(t, node) for t in targets) if r is not None]
            elif isinstance(value, cst.ListComp):
                loop = value.for_in
                if loop.inner_for_in is None and isinstance(loop.target, cst.Name) \
                        and isinstance(module_self(value.elt), cst.Name) \
                        and module_self(value.elt).value == loop.target.value \
                        and self.is_ref_expr(loop.iter, holder, loop.iter):
                    out += [("elements", r) for r in (self._ref_for_target(t, node) for t in targets)
                            if r is not None]
            elif self.is_ref_expr(value, holder, value):
                for target in targets:
                    if isinstance(target, (cst.Tuple, cst.List)):
                        out += [r for r in (self._ref_for_target(e.value, node) for e in target.elements
                                            if not isinstance(e, cst.StarredElement)) if r is not None]
        return out

    def _element_reads(self) -> list:
        """Assignments whose value may read a list's elements: an item, a comprehension, an unpacking."""
        if "_element_reads_memo" not in self.__dict__:
            self._element_reads_memo = [
                n for n in self.preorder if isinstance(n, (cst.Assign, cst.AnnAssign)) and n.value is not None
                and (isinstance(module_self(n.value), (cst.Subscript, cst.ListComp)) or (
                    isinstance(n, cst.Assign) and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in n.targets)))]
        return self._element_reads_memo

    def _element_loops(self) -> list:
        if "_element_loops_memo" not in self.__dict__:
            self._element_loops_memo = [loop for loop in self.loops if isinstance(loop, cst.For)] + [
                n for n in self.preorder if isinstance(n, cst.CompFor)]
        return self._element_loops_memo

    def _element_name(self, loop) -> Optional[cst.Name]:
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


def module_self(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``m.to(device).eval()`` -> ``m``: the module methods returning the module itself."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _MODEL_METHODS_SELF:
        expr = expr.func.value
    return expr


def _unset(expr: Optional[cst.BaseExpression]) -> bool:
    """Not passed, or passed as None / False."""
    return expr is None or (isinstance(expr, cst.Name) and expr.value in ("None", "False"))


def refuses_compiled(ctx, init, param: str) -> bool:
    """``assert isinstance(models[0], GIN)`` in ``__init__``: the class takes only
    instances of one project module class, which a ``torch.compile`` wrapper
    (``OptimizedModule``) is not -- it never holds the compiled object."""
    for node in ctx.preorder:
        if not isinstance(node, cst.Assert) or ctx.enclosing_function(node) is not init:
            continue
        test = node.test
        if not (isinstance(test, cst.Call) and ctx.resolve(test.func) == "isinstance" and len(test.args) == 2):
            continue
        subject, cls = test.args[0].value, test.args[1].value
        if isinstance(subject, cst.Subscript):
            subject = subject.value
        if not (isinstance(subject, cst.Name) and subject.value == param and isinstance(cls, cst.Name)):
            continue
        resolved = ctx.resolve(cls) or ""
        if not resolved.startswith(("torch.", "torch_geometric.")) and cls.value[:1].isupper():
            return True
    return False
