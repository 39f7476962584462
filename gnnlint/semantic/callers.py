"""Calls and callees of local functions: "what does this call run, and who
calls this local function?"

``local_callee`` / ``method_callee`` / ``self_forward`` (the local function
or class a call runs), ``callers_of`` (the one answer to "who calls this
function?", with or without aliases), ``arg_for_param`` (what a call passes
for a parameter), the local classes a method lookup searches
(``local_lineage``, ``method_of``, ``class_attr_values``) and
``is_module_class``; every call of the file (``all_calls``,
``calls_any_order``). Mixed into ``Names`` (names.py).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic.model import ClassInfo, FuncInfo
from gnnlint.semantic.vocab import MODULE_BASE_SUFFIXES


class Callers:
    """Which local function a call runs, and which calls run a local function. Mixed into Names."""

    # -- which names hold the compiled object ------------------------------------
    def class_attr_values(self, cls: ClassInfo, attr: str) -> list[cst.BaseExpression]:
        """The values assigned to ``self.<attr>`` in ``cls``, or else in the nearest local base class that assigns it."""
        return next((c.attrs[attr] for c in self.local_lineage(cls) if attr in c.attrs), [])

    def local_callee(self, call: cst.Call):
        """The local FunctionDef/ClassDef info a call targets, when it is one."""
        func = call.func
        if isinstance(func, cst.Name):
            binding, scope = self.lookup(func.value, call)
            if binding is None:
                # forward references: module-level defs later in the file
                if func.value in self.functions:
                    return self.functions[func.value]
                if func.value in self.classes:
                    return self.classes[func.value]
                return None
            if binding.how == "def":
                return self.func_info.get(binding.node)  # type: ignore[arg-type]
            if binding.how == "class":
                return self.class_info.get(binding.node)  # type: ignore[arg-type]
            return self._compiled_local_function(binding)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = self.enclosing_class(call)
            if cls is not None:
                return self.method_of(cls, func.attr.value)
        return None

    def self_forward(self, call: cst.Call) -> Optional[FuncInfo]:
        """The ``forward`` a ``self(...)`` call runs in a method of a local
        module class (``nn.Module.__call__``: ``loss, aux = self(batch)`` in a
        LightningModule's ``training_step``), through its local bases."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "self"):
            return None
        cls = self.enclosing_class(call)
        if cls is None or not self.is_module_class(cls):
            return None
        return self.method_of(cls, "forward")

    def method_callee(self, call: cst.Call):
        """``local_callee``, and for ``obj.method(...)`` on an instance of a
        local class the method it resolves (``trainer.train(graph)`` runs
        ``Trainer.train``): the callee direction of ``callers_of``."""
        callee = self.local_callee(call)
        if callee is not None:
            return callee
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, (cst.Name, cst.Attribute)):
            owner = self.class_of(func.value, call)  # type: ignore[attr-defined]
            if isinstance(owner, ClassInfo):
                return self.method_of(owner, func.attr.value)
        return None

    def _compiled_local_function(self, binding) -> Optional[FuncInfo]:
        """``step = torch.compile(train_step)``: calling ``step`` runs the local
        function ``train_step`` (compiled), so its parameters get what ``step``'s
        callers pass."""
        value = binding.value
        if binding.how != "assign" or not isinstance(value, cst.Call) or not value.args \
                or value.args[0].keyword is not None or not isinstance(value.args[0].value, cst.Name) \
                or self.compile_api(value.func) is None:
            return None
        target, _scope = self.lookup(value.args[0].value.value, value)
        if target is None:
            return self.functions.get(value.args[0].value.value)
        return self.func_info.get(target.node) if target.how == "def" else None  # type: ignore[arg-type]

    def local_lineage(self, cls: ClassInfo) -> Iterator[ClassInfo]:
        """``cls``, then its bases defined in this file, nearest first (each once):
        where a method lookup searches before leaving the file."""
        seen: set[str] = set()
        todo = [cls]
        while todo:
            current = todo.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            yield current
            for base in current.bases:
                local = self.classes.get(base.split(".")[-1])
                if local is not None:
                    todo.append(local)

    def method_of(self, cls: ClassInfo, name: str) -> Optional[FuncInfo]:
        return next((c.methods[name] for c in self.local_lineage(cls) if name in c.methods), None)

    def is_module_class(self, cls: ClassInfo, _seen: Optional[set] = None) -> bool:
        seen = _seen or set()
        if cls.name in seen:
            return False
        seen.add(cls.name)
        for base in cls.bases:
            last = base.split(".")[-1]
            if last.endswith(MODULE_BASE_SUFFIXES):
                return True
            local = self.classes.get(last)
            if local is not None and self.is_module_class(local, seen):
                return True
            resolved = self.resolve_dotted(base)
            if resolved.startswith(("torch.nn.", "torch_geometric.nn.")):
                return True
        return False

    def calls_any_order(self) -> Iterator[cst.Call]:
        """Every call in the file, from the collector's lists (module level and class bodies,
        then each function's own): for a scan that needs no order, without ``all_calls``' walk."""
        yield from self.module_calls
        for info in self.func_info.values():
            yield from info.calls

    def all_calls(self) -> list[cst.Call]:
        """Every call in the file, in source order."""
        cached = getattr(self, "_feed_all_calls", None)
        if cached is None:
            call = cst.Call  # `type is`: isinstance on a libcst class runs ABCMeta's check for every node
            cached = [n for n in self.preorder if type(n) is call]
            self._feed_all_calls = cached
        return cached

    def _callers_index(self) -> tuple[dict, dict, dict]:
        """Every call once: by the local function it resolves to, and the
        attribute calls (``obj.method(...)``) by method name."""
        index = getattr(self, "_callers_idx", None)
        if index is None:
            by_callee: dict = {}
            by_attr: dict = {}
            for c in self.all_calls():
                callee = self.local_callee(c)
                if callee is not None:
                    by_callee.setdefault(callee, []).append(c)
                if isinstance(c.func, cst.Attribute) and not isinstance(c.func.value, cst.Call):
                    by_attr.setdefault(c.func.attr.value, []).append(c)
            order = {id(c): i for i, c in enumerate(self.all_calls())}
            index = self._callers_idx = (by_callee, by_attr, order)
        return index

    def _alias_calls(self) -> dict:
        """``f(...)`` where ``f = a if x else b`` (or ``f = a``), by every name ``f`` may stand for."""
        index = getattr(self, "_alias_idx", None)
        if index is None:
            index = self._alias_idx = {}
            for c in self.all_calls():
                if not isinstance(c.func, cst.Name):
                    continue
                binding, _ = self.lookup(c.func.value, c)
                if binding is None or binding.how != "assign":
                    continue
                for name in {v.value for v in _alternatives(binding.value) if isinstance(v, cst.Name)}:
                    if name != c.func.value:
                        index.setdefault(name, []).append(c)
        return index

    def callers_of(self, func: FuncInfo, through_aliases: bool = False) -> list[cst.Call]:
        """The calls in this file that run the local function (or method)
        ``func``, in source order. The one answer to "who calls this function?".

        Always the calls name resolution sends to it (``local_callee``:
        ``func(...)``, ``self.func(...)``) and, for a method, ``obj.func(...)``
        on an instance of a local class. The two readings differ:

        - default (what a parameter receives -- kinds, feeds, compile options,
          optimizers): also ``step(...)`` after ``step = torch.compile(func)``;
          ``obj.func(...)`` only when ``obj`` is an instance of ``func``'s own class;
        - ``through_aliases=True`` (where a value goes -- flow, sweeps,
          GNN020): also ``f(...)`` after ``f = func`` or ``f = a if x else b``
          (by name); ``obj.func(...)`` when ``func`` is the method ``obj``'s
          class resolves (subclasses too); only calls spelled with the
          function's own name or such an alias.
        """
        def compute():
            by_callee, by_attr, order = self._callers_index()
            calls = list(by_callee.get(func, ()))
            if through_aliases:
                calls = [c for c in calls if self.last_part(c.func) == func.name]
                calls += self._alias_calls().get(func.name, [])
            if func.cls is not None:
                for c in by_attr.get(func.name, ()):
                    if c in calls:
                        continue
                    owner = self.class_of(c.func.value, c)
                    if (isinstance(owner, ClassInfo) and self.method_of(owner, func.name) is func
                            if through_aliases else owner is func.cls):
                        calls.append(c)
            return sorted(calls, key=lambda c: order.get(id(c), 0))
        return self._memoised((func, "callers", through_aliases), compute, [])

    def _inherits(self, cls: ClassInfo, base: ClassInfo, seen: Optional[set] = None) -> bool:
        seen = seen or set()
        for name in cls.bases:
            local = self.classes.get(name.split(".")[-1])
            if local is base:
                return True
            if local is not None and local.name not in seen:
                seen.add(local.name)
                if self._inherits(local, base, seen):
                    return True
        return False

    def _param_for(self, func: FuncInfo, call: cst.Call, index: int, arg: cst.Arg,
                   skip_self: bool) -> Optional[str]:
        if arg.keyword is not None:
            return arg.keyword.value if arg.keyword.value in func.params else None
        params = [p.name.value for p in list(func.node.params.posonly_params) + list(func.node.params.params)]
        if skip_self and params and params[0] in ("self", "cls"):
            params = params[1:]
        positional = sum(1 for a in call.args[:index] if a.keyword is None)
        return params[positional] if positional < len(params) else None

    def arg_for_param(self, func: FuncInfo, call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
        """The expression ``call`` passes for ``func``'s parameter ``name`` (positional or keyword)."""
        params = [p.name.value for p in list(func.node.params.posonly_params) + list(func.node.params.params)]
        if params and params[0] in ("self", "cls") and (func.cls is not None):
            params = params[1:]
        positional = 0
        for arg in call.args:
            if arg.star:
                return None
            if arg.keyword is not None:
                if arg.keyword.value == name:
                    return arg.value
                continue
            if positional < len(params) and params[positional] == name:
                return arg.value
            positional += 1
        return None


def _alternatives(expr: Optional[cst.BaseExpression]) -> list[cst.BaseExpression]:
    """The values a conditional or boolean expression may take (``a if x else b``, ``a or b``)."""
    if isinstance(expr, cst.IfExp):
        return _alternatives(expr.body) + _alternatives(expr.orelse)
    if isinstance(expr, cst.BooleanOperation):
        return _alternatives(expr.left) + _alternatives(expr.right)
    return [expr] if expr is not None else []
