"""Lazy modules: "does this model have lazy parameters, and does it run one
eager forward before it is compiled?"

``lazy_reason(expr)`` / ``class_lazy_reason(cls)`` explain why a model has
uninitialised parameters (``-1`` in_channels, ``Lazy*`` layers, PyG layers
built without sizes, ``to_hetero`` over one); ``eager_forward_before(site,
target)`` tells whether the model runs once before the compile call.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.kinds import _MODEL_METHODS_NON_TENSOR, _MODEL_METHODS_SELF
from gnnlint.semantic.model import ClassInfo, FuncInfo
from gnnlint.semantic.vocab import COMPILE_FUNCS, MESSAGE_PASSING_METHODS


class Lazy:
    """Lazy-module questions. Mixed into FileContext; reads the SemanticModel."""

    # -- lazily initialised models ----------------------------------------------
    @staticmethod
    def _is_lazy_literal(expr: Optional[cst.CSTNode]) -> bool:
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
                and isinstance(expr.expression, cst.Integer) and expr.expression.value == "1":
            return True
        if isinstance(expr, cst.Tuple):
            return any(Lazy._is_lazy_literal(e.value) for e in expr.elements)
        if isinstance(expr, cst.List) and expr.elements:
            return Lazy._is_lazy_literal(expr.elements[0].value)
        return False

    def lazy_reason(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                    depth: int = 0) -> Optional[str]:
        """Why the module ``expr`` builds or names has lazily initialised
        parameters (a PyG layer with ``-1`` in_channels, ``torch.nn.Lazy*``,
        ``to_hetero`` over such a model), or None."""
        if expr is None or depth > 6:
            return None
        at = at or expr
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS_SELF:
                return self.lazy_reason(func.value, at, depth + 1)
            resolved = self.resolve(func) or ""
            last = resolved.split(".")[-1]
            if resolved.startswith("torch.nn.") and last.startswith("Lazy"):
                return f"`{last}`"
            if resolved.startswith("torch_geometric") and last in ("to_hetero", "to_hetero_with_bases") \
                    or resolved in COMPILE_FUNCS:
                return self.lazy_reason(expr.args[0].value, at, depth + 1) if expr.args else None
            if resolved.startswith("torch_geometric.nn") and last[:1].isupper():
                for arg in expr.args:
                    if (arg.keyword is None and arg is expr.args[0]) or (
                            arg.keyword is not None and arg.keyword.value in ("in_channels", "channel_list")):
                        if self._is_lazy_literal(arg.value):
                            return f"`{last}({self.module.code_for_node(arg.value)}, ...)`"
                return self._lazy_in_args(expr, depth)
            if resolved.startswith("torch.nn.") and last in ("Sequential", "ModuleList", "ModuleDict"):
                return self._lazy_in_args(expr, depth)
            local = self.local_callee(expr)
            if isinstance(local, FuncInfo):
                for ret in local.returns:
                    if isinstance(ret.value, cst.Name) and any(
                            self._runs_forward(c, ("name", ret.value.value)) for c in local.calls):
                        continue  # the factory runs a forward before returning the model
                    reason = self.lazy_reason(ret.value, ret, depth + 1)
                    if reason:
                        return reason
                return None
            if isinstance(local, ClassInfo):
                reason = self.class_lazy_reason(local)
                if reason is None and any(self._is_lazy_literal(a.value) for a in expr.args) \
                        and self._class_builds_pyg(local):
                    reason = f"`{local.name}` built with -1 channels"
                return reason
            return None
        if isinstance(expr, cst.Name):
            binding = self.feed_binding(expr.value, at)
            if binding is not None and binding.how == "assign":
                return self.lazy_reason(binding.value, binding.value, depth + 1)
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is not None:
                for value in self.class_attr_values(cls, expr.attr.value):
                    reason = self.lazy_reason(value, value, depth + 1)
                    if reason:
                        return reason
        return None

    def _lazy_in_args(self, call: cst.Call, depth: int) -> Optional[str]:
        todo = [a.value for a in call.args]
        while todo:
            node = todo.pop()
            if isinstance(node, cst.Call):
                reason = self.lazy_reason(node, node, depth + 1)
                if reason:
                    return reason
                continue
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            todo.extend(node.children)
        return None

    def _class_builds_pyg(self, cls: ClassInfo) -> bool:
        for info in cls.methods.values():
            for call in info.calls:
                resolved = self.resolve(call.func) or ""
                if resolved.startswith("torch_geometric.nn") and resolved.split(".")[-1][:1].isupper():
                    return True
        return False

    def class_lazy_reason(self, cls: ClassInfo, _seen: Optional[set] = None) -> Optional[str]:
        """Why instances of a local class have lazy parameters: a lazy layer
        built in one of its methods (not ``forward``), or a lazy base class."""
        cache = getattr(self, "_feed_lazy_cls", None)
        if cache is None:
            cache = self._feed_lazy_cls = {}
        if cls.name in cache:
            return cache[cls.name]
        seen = _seen or set()
        if cls.name in seen:
            return None
        seen.add(cls.name)
        cache[cls.name] = None  # recursion guard
        reason = None
        for name, info in cls.methods.items():
            if name == "forward" or name in MESSAGE_PASSING_METHODS:
                continue
            for call in info.calls:
                local = self.local_callee(call)
                if isinstance(local, ClassInfo):
                    reason = self.class_lazy_reason(local, seen)
                else:
                    resolved = self.resolve(call.func) or ""
                    if resolved.startswith(("torch.nn.", "torch_geometric")):
                        reason = self.lazy_reason(call, call, 5)
                if reason:
                    break
            if reason:
                break
        if reason is None:
            for base in cls.bases:
                local = self.classes.get(base.split(".")[-1])
                if local is not None and local is not cls:
                    reason = self.class_lazy_reason(local, seen)
                    if reason:
                        break
        cache[cls.name] = reason
        return reason

    def _runs_forward(self, call: cst.Call, root: tuple, depth: int = 0) -> bool:
        """Whether ``call`` runs (part of) the model ``root`` eagerly — a call
        of it or of a submodule, ``load_state_dict``, ``summary(model, ...)``,
        or a local function that does one of these."""
        def is_root(expr) -> bool:
            if root[0] == "name":
                return isinstance(expr, cst.Name) and expr.value == root[1]
            return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == "self" and expr.attr.value == root[1]

        func = call.func
        if is_root(func):
            return True
        chain = func
        methods = []
        while isinstance(chain, cst.Attribute) and not is_root(chain):
            methods.append(chain.attr.value)
            chain = chain.value
        if is_root(chain) and methods:
            method = methods[0]
            if method == "load_state_dict":
                return True
            return method not in _MODEL_METHODS_SELF and method not in _MODEL_METHODS_NON_TENSOR and \
                method not in ("compile", "register_forward_pre_hook", "register_forward_hook",
                               "register_full_backward_hook", "named_parameters", "get_submodule")
        if depth >= 2:
            return False
        passes = [i for i, a in enumerate(call.args) if is_root(a.value)]
        local = self.local_callee(call)
        if isinstance(local, FuncInfo):
            for index in passes:
                param = self._param_for(local, call, index, call.args[index],
                                        local.cls is not None and isinstance(call.func, cst.Attribute))
                if param is not None and any(self._runs_forward(c, ("name", param), depth + 1)
                                             for c in local.calls):
                    return True
            if root[0] == "name" and root[1] not in local.bindings:  # reads the global model
                if any(self._runs_forward(c, root, depth + 1) for c in local.calls):
                    return True
            return False
        if passes:
            name = (self.last_part(func) or "").lower()
            resolved = self.resolve(func) or ""
            return resolved.endswith("nn.summary") or name == "summary" or \
                any(w in name for w in ("init", "warm", "dummy", "materiali", "lazy"))
        return False

    def eager_forward_before(self, site_node: cst.CSTNode, target: cst.CSTNode) -> bool:
        """Whether the model ``target`` (a name or ``self.attr``) runs one eager
        forward before the compile at ``site_node`` takes effect."""
        while isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                and target.func.attr.value in _MODEL_METHODS_SELF:
            target = target.func.value
        if isinstance(target, cst.Name):
            root = ("name", target.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self":
            root = ("self", target.attr.value)
        else:
            return False
        stmt = self.statement_of(site_node)
        limit = self.order.get(stmt, 0)
        scope = self.enclosing_function(site_node)
        refs = self.compiled_refs(site_node) if isinstance(site_node, cst.Call) else []
        renamed = root[0] == "name" and refs and all(r[0] == "name" and r[1] != root[1] for r in refs)
        if renamed:
            # `model = torch.compile(net)`: an eager `net(...)` counts until the
            # compiled object is first used (called, or handed to a function)
            names = {r[1] for r in refs}
            uses = [self.order.get(call, 0) for call in self.all_calls()
                    if self.enclosing_function(call) is scope and self.order.get(call, 0) > limit
                    and (isinstance(call.func, cst.Name) and call.func.value in names
                         or any(isinstance(a.value, cst.Name) and a.value.value in names for a in call.args)
                         and self.resolve(call.func) not in ("print", "len", "str", "repr", "type", "id",
                                                             "isinstance", "hasattr", "getattr"))]
            if uses:
                limit, renamed = min(uses), False
        for call in self.all_calls():
            if self.enclosing_function(call) is not scope:
                continue
            if (self.order.get(call, 0) < limit or renamed) and self._runs_forward(call, root):
                return True
        return False
