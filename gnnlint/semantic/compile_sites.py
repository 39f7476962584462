"""The ``torch.compile`` calls of a file: "how is this compiled?"

``CompileSite`` is the one record of a compile call (target, mode,
dynamic, fullgraph, options, API) -- the file analysis and the project index
share it. ``compile_site(node)``, ``compile_call_node``, ``compile_kwarg``
(also through ``**kwargs`` dicts), ``compile_dynamic``,
``cudagraphs_setting``; ``compiled_refs(site)`` -- the names and attributes
that hold the compiled object -- and ``ref_calls``/``_ref_passes``: where
they are called and what is passed to them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic.kinds import _MODEL_METHODS_SELF, _NO_VALUE
from gnnlint.semantic.model import ClassInfo, FuncInfo
from gnnlint.semantic.vocab import _FEED_MODEL_WRAPPERS, COMPILE_FUNCS


@dataclass(frozen=True)
class CompileSite:
    """One ``torch.compile`` call (or decorator, or ``.compile()`` method call).

    The file analysis fills what the call says; the project index
    (``gnnlint.project_index``) adds where it is (``path``, ``line``) and
    which class it compiles across files, with ``dataclasses.replace``.
    """

    line: int  # 0 in a file's analysis (rules report the node); the 1-based line in the project index
    target: str  # what is compiled, as written (e.g. "model", "GCN", "optimizer.step")
    target_kind: str  # "class" | "function" | "method" | "optimizer_step" | "unknown"
    mode: Optional[str]
    dynamic: Optional[bool]  # None when not given
    fullgraph: bool
    options: tuple[str, ...] = ()  # keys of options={...}
    api: str = "torch.compile"  # or "torch_geometric.compile", "Module.compile"
    # -- project index only
    path: Optional[str] = None  # the file with the compile call
    mark_dynamic: bool = False  # the file calls torch._dynamo.mark_dynamic
    class_path: Optional[str] = None  # resolved file defining the compiled class
    class_name: Optional[str] = None


class CompileSites:
    """Compile-call questions: options of a site and the references to what it compiled. Mixed into FileContext; reads the SemanticModel."""

    def compile_site(self, node: cst.CSTNode) -> Optional[CompileSite]:
        for site_node, site in self.compile_sites:
            if site_node is node:
                return site
        return None

    def _site_from_call(self, call: cst.Call, line: int, target_text: str, kind: str, api: str) -> CompileSite:
        mode = None
        dynamic: Optional[bool] = None
        fullgraph = False
        options: tuple[str, ...] = ()
        for arg in call.args:
            if arg.keyword is None:
                continue
            key = arg.keyword.value
            if key == "mode" and isinstance(arg.value, cst.SimpleString):
                mode = arg.value.evaluated_value  # type: ignore[assignment]
            elif key == "dynamic" and isinstance(arg.value, cst.Name):
                dynamic = {"True": True, "False": False}.get(arg.value.value)
            elif key == "fullgraph" and isinstance(arg.value, cst.Name):
                fullgraph = arg.value.value == "True"
            elif key == "options" and isinstance(arg.value, cst.Dict):
                options = tuple(
                    e.key.evaluated_value for e in arg.value.elements  # type: ignore[union-attr]
                    if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString))
        return CompileSite(line, target_text, kind, mode, dynamic, fullgraph, options, api)

    def compile_call_node(self, site_node: cst.CSTNode) -> Optional[cst.Call]:
        """The Call holding a compile site's arguments (None: bare decorator)."""
        if isinstance(site_node, cst.Decorator):
            return site_node.decorator if isinstance(site_node.decorator, cst.Call) else None
        return site_node if isinstance(site_node, cst.Call) else None

    def compile_kwarg(self, site_node: cst.CSTNode, name: str) -> Optional[cst.Arg]:
        call = self.compile_call_node(site_node)
        for arg in call.args if call is not None else ():
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def _star_kwarg(self, site_node: cst.CSTNode, name: str):
        """``name`` passed through ``**kwargs`` to a compile call: its value
        expression, None when the kwargs dicts surely lack it (or there are
        none), ``_NO_VALUE`` when a ``**`` argument cannot be read."""
        call = self.compile_call_node(site_node)
        for arg in call.args if call is not None else ():
            if arg.star != "**":
                continue
            value = arg.value
            if isinstance(value, cst.Name):
                binding = self.feed_binding(value.value, value)
                value = binding.value if binding is not None and binding.how == "assign" else None
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    if not isinstance(element, cst.DictElement):
                        return _NO_VALUE
                    if self.literal_value(element.key) == name:
                        return element.value
                continue
            if isinstance(value, cst.Call) and self.resolve(value.func) == "dict" and \
                    all(a.keyword is not None for a in value.args):
                for a in value.args:
                    if a.keyword.value == name:
                        return a.value
                continue
            return _NO_VALUE
        return None

    def compile_dynamic(self, site_node: cst.CSTNode) -> object:
        """``dynamic=`` of a compile site: True/False/None (not given or
        None), or ``_NO_VALUE`` when it is an expression gnnlint cannot read
        (also through ``**kwargs``)."""
        arg = self.compile_kwarg(site_node, "dynamic")
        expr = arg.value if arg is not None else self._star_kwarg(site_node, "dynamic")
        if expr is None or expr is _NO_VALUE:
            return expr
        value = self.literal_value(expr, expr)
        return value if value in (True, False, None) else _NO_VALUE

    def cudagraphs_setting(self, site_node: cst.CSTNode) -> Optional[str]:
        """How a compile site turns on CUDA graphs: "reduce-overhead",
        "max-autotune", "options" (``options={"triton.cudagraphs": True}``)."""
        arg = self.compile_kwarg(site_node, "mode")
        expr = arg.value if arg is not None else self._star_kwarg(site_node, "mode")
        if expr is not None and expr is not _NO_VALUE:
            mode = self.literal_value(expr, expr)
            if mode in ("reduce-overhead", "max-autotune"):
                return mode
        arg = self.compile_kwarg(site_node, "options")
        if arg is not None and isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                if isinstance(element, cst.DictElement) and \
                        self.literal_value(element.key) == "triton.cudagraphs" and \
                        self.literal_value(element.value) is True:
                    return "options"
        return None

    def _compile_holder(self, call: cst.CSTNode) -> tuple[cst.CSTNode, Optional[cst.CSTNode]]:
        """Walk up from a compile call through ``a if c else b``, ``x or y``
        and ``.to(device)``-like calls to the node whose parent uses the value."""
        node = call
        while True:
            parent = self.parent.get(node)
            if isinstance(parent, (cst.IfExp, cst.BooleanOperation)) and getattr(parent, "test", None) is not node:
                node = parent
                continue
            if isinstance(parent, cst.Attribute) and parent.value is node \
                    and parent.attr.value in _MODEL_METHODS_SELF:
                grand = self.parent.get(parent)
                if isinstance(grand, cst.Call) and grand.func is parent:
                    node = grand
                    continue
            return node, parent

    def compiled_refs(self, site_node: cst.CSTNode, _depth: int = 0) -> list[tuple]:
        """Who holds the compiled object of a compile site, as refs:
        ``("name", name, scope FuncInfo|None, after_order)``,
        ``("self", attr, ClassInfo)``, ``("func", FuncInfo)`` or
        ``("arg", Call)`` (passed straight into a call)."""
        refs: list[tuple] = []
        if isinstance(site_node, cst.Decorator):
            fdef = self.parent.get(site_node)
            info = self.func_info.get(fdef) if isinstance(fdef, cst.FunctionDef) else None
            if info is None:
                return refs
            if info.cls is not None and info.name == "forward":
                refs.extend(self._instance_refs(info.cls))
            else:
                refs.append(("func", info))
            return refs
        if not isinstance(site_node, cst.Call):
            return refs
        resolved = self.resolve(site_node.func)
        if resolved not in COMPILE_FUNCS:  # model.compile(): compiled in place
            receiver = site_node.func.value if isinstance(site_node.func, cst.Attribute) else None
            ref = self._ref_for_target(receiver, site_node)
            return [ref] if ref is not None else []
        holder, parent = self._compile_holder(site_node)
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            for target in targets:
                ref = self._ref_for_target(target, site_node)
                if ref is not None:
                    refs.append(ref)
        elif isinstance(parent, cst.Return) and _depth < 3:
            func = self.enclosing_function(site_node)
            if func is not None:
                for caller in self.callers_of(func):
                    refs.extend(self.compiled_refs(caller, _depth + 1) if self.resolve(caller.func) in COMPILE_FUNCS
                                else self._refs_of_value(caller, _depth + 1))
        elif isinstance(parent, cst.Arg):
            outer = self.parent.get(parent)
            if isinstance(outer, cst.Call):
                refs.append(("arg", outer))
                if (self.last_part(outer.func) or "") in _FEED_MODEL_WRAPPERS and _depth < 3:
                    refs.extend(self._refs_of_value(outer, _depth + 1))  # DDP(torch.compile(model))
        return refs

    def _refs_of_value(self, value: cst.Call, depth: int) -> list[tuple]:
        """Refs for the names a call's result is assigned to (``m = build()``)."""
        _holder, parent = self._compile_holder(value)
        refs: list[tuple] = []
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            for target in targets:
                ref = self._ref_for_target(target, value)
                if ref is not None:
                    refs.append(ref)
        elif isinstance(parent, cst.Arg) and isinstance(self.parent.get(parent), cst.Call):
            refs.append(("arg", self.parent[parent]))
        return refs

    def _ref_for_target(self, target: Optional[cst.CSTNode], at: cst.CSTNode) -> Optional[tuple]:
        if isinstance(target, cst.Attribute) and target.attr.value == "forward" \
                and isinstance(target.value, (cst.Name, cst.Attribute)):
            target = target.value  # model.forward = torch.compile(model.forward)
        if isinstance(target, cst.Name):
            stmt = self.statement_of(at)
            return ("name", target.value, self.enclosing_function(at), self.order.get(stmt, 0), stmt)
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            cls = self.enclosing_class(at)
            if cls is not None:
                return ("self", target.attr.value, cls)
        return None

    def _instance_refs(self, cls: ClassInfo) -> list[tuple]:
        refs = []
        for node in self.preorder:
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                    and self.class_of(node.value, node.value) is cls:
                for target in node.targets:
                    ref = self._ref_for_target(target.target, node.value)
                    if ref is not None:
                        refs.append(ref)
        return refs

    def _is_ref_expr(self, expr: cst.CSTNode, ref: tuple, at: cst.CSTNode) -> bool:
        kind = ref[0]
        if kind == "name":
            if not (isinstance(expr, cst.Name) and expr.value == ref[1]):
                return False
            _k, name, scope, after, stmt = ref
            here = self.enclosing_function(at)
            if here is scope:
                return self.order.get(at, 0) > after and not any(a is stmt for a in self.ancestors(at))
            # a closure or a function reading the module-level name
            func = here
            while func is not None and func is not scope:
                if name in func.bindings:
                    return False
                func = func.parent
            return func is scope
        if kind == "self":
            if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
                    and expr.value.value == "self" and expr.attr.value == ref[1]):
                return False
            cls = self.enclosing_class(at)
            return cls is not None and (cls is ref[2] or self._inherits(cls, ref[2]))
        return False

    def ref_calls(self, ref: tuple) -> list[cst.Call]:
        """Calls that run the compiled object a ref holds."""
        if ref[0] == "func":
            return [c for c in self.all_calls() if self.local_callee(c) is ref[1]]
        if ref[0] == "arg":
            return []
        return [c for c in self.all_calls() if self._is_ref_expr(c.func, ref, c)]

    def _ref_passes(self, ref: tuple) -> Iterator[tuple[str, object, cst.Call]]:
        """Where the compiled object is passed on: ("ref", new ref, call) for a
        local function/class, ("external", None, call) for anything else."""
        if ref[0] == "arg":
            yield "external", None, ref[1]
            return
        if ref[0] == "func":
            return
        for call in self.all_calls():
            for index, arg in enumerate(call.args):
                if arg.star or not self._is_ref_expr(arg.value, ref, arg.value):
                    continue
                callee = self.local_callee(call)
                if isinstance(callee, ClassInfo):
                    init = self.method_of(callee, "__init__")
                    param = self._param_for(init, call, index, arg, skip_self=True) if init else None
                    if param is not None:
                        for node in self.preorder:
                            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) \
                                    and node.value.value == param and self.enclosing_function(node) is init:
                                for target in node.targets:
                                    new = self._ref_for_target(target.target, node)
                                    if new is not None and new[0] == "self":
                                        yield "ref", new, call
                    continue
                if isinstance(callee, FuncInfo):
                    skip_self = callee.cls is not None and isinstance(call.func, cst.Attribute)
                    param = self._param_for(callee, call, index, arg, skip_self)
                    if param is not None:
                        yield "ref", ("name", param, callee, -1, None), call
                    continue
                yield "external", None, call
