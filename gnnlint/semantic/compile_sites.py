"""The ``torch.compile`` calls of a file: "how is this compiled?"

``CompileSite`` is the one record of a compile call (target, mode,
dynamic, fullgraph, options, API) -- the file analysis and the project index
share it. ``compile_site(node)``, ``compile_call_node``, ``compile_kwarg``
(also through ``**kwargs`` dicts), ``compile_dynamic``,
``cudagraphs_setting``; ``compile_option``/``compile_option_source``/
``unreadable_compile_options`` (an option's value through names, argparse
defaults, dict literals, ``**kwargs``) are compile_options.py's, mixed in
here; ``compiled_refs(site)`` -- the names and attributes
that hold the compiled object -- and ``ref_calls``/``ref_passes``: where
they are called and what is passed to them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from gnnlint.semantic.compile_options import CompileOptions
from gnnlint.semantic.kinds import _MODEL_METHODS_SELF, _NO_VALUE
from gnnlint.semantic.method_refs import method_compile_refs, method_ref_expr, method_ref_passes
from gnnlint.semantic.model import ClassInfo, FuncInfo, assigned_targets
from gnnlint.semantic.returned_args import returned_targets
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


class CompileSites(CompileOptions):
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
        for arg in self._own_args(call):
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

    @staticmethod
    def _own_args(call: cst.Call) -> list[cst.Arg]:
        """A compile call's arguments; for ``torch.compile(**opts)(target)``
        also the options of the inner call."""
        return list(call.args) + (list(call.func.args) if isinstance(call.func, cst.Call) else [])

    def compile_call_node(self, site_node: cst.CSTNode) -> Optional[cst.Call]:
        """The Call holding a compile site's arguments (None: bare decorator)."""
        if isinstance(site_node, cst.Decorator):
            return site_node.decorator if isinstance(site_node.decorator, cst.Call) else None
        return site_node if isinstance(site_node, cst.Call) else None

    def compile_partial(self, site_node: cst.CSTNode) -> Optional[cst.Call]:
        """The ``functools.partial(torch.compile, ...)`` a compile site goes
        through (``@functools.partial(torch.compile, dynamic=False)``,
        ``compile_fn = partial(torch.compile, mode=...)`` then ``@compile_fn`` /
        ``compile_fn(model)``): its keywords are options of the site."""
        node = site_node.decorator if isinstance(site_node, cst.Decorator) else site_node
        if isinstance(node, cst.Call) and self.resolve(node.func) == "functools.partial" and node.args \
                and node.args[0].keyword is None and self.resolve(node.args[0].value) in COMPILE_FUNCS:
            return node
        func = node.func if isinstance(node, cst.Call) else node
        return self.compile_partials.get(func.value) if isinstance(func, cst.Name) else None

    def _compile_args(self, site_node: cst.CSTNode) -> list[cst.Arg]:
        """The arguments of a compile site's call, then its partial's keywords."""
        call = self.compile_call_node(site_node)
        args = self._own_args(call) if call is not None else []
        partial = self.compile_partial(site_node)
        if partial is not None and partial is not call:
            args += [a for a in partial.args[1:]]
        return args

    def compile_kwarg(self, site_node: cst.CSTNode, name: str) -> Optional[cst.Arg]:
        for arg in self._compile_args(site_node):
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def compile_dynamic(self, site_node: cst.CSTNode) -> object:
        """``dynamic=`` of a compile site: True/False/None (not given or
        None), or ``_NO_VALUE`` when gnnlint cannot read it (also through
        names, argparse defaults and ``**kwargs``: ``compile_option``)."""
        value = self.compile_option(site_node, "dynamic")
        return value if any(value is v for v in (True, False, None)) else _NO_VALUE

    def cudagraphs_setting(self, site_node: cst.CSTNode) -> Optional[str]:
        """How a compile site turns on CUDA graphs: "reduce-overhead",
        "max-autotune", "options" (``options={"triton.cudagraphs": True}``)."""
        mode = self.compile_option(site_node, "mode")
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
        """Walk up from a compile call through ``a if c else b``, ``x or y``,
        ``.to(device)``-like calls and ``typing.cast(T, ...)`` (its value at
        run time) to the node whose parent uses the value."""
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
            if isinstance(parent, cst.Arg):
                cast = self.parent.get(parent)
                if isinstance(cast, cst.Call) and len(cast.args) == 2 and cast.args[1] is parent \
                        and self.resolve(cast.func) == "typing.cast":
                    node = cast
                    continue
            return node, parent

    def _returned_to_callers(self, site_node: cst.Call, targets: list, depth: int) -> list[tuple]:
        """``def maybe_compile(model): model = torch.compile(model); return model``:
        the callers' names hold the compiled object too (as with ``return torch.compile(model)``)."""
        names = {t.value for t in targets if isinstance(t, cst.Name)}
        func = self.enclosing_function(site_node) if names and depth < 3 else None
        if func is None or not any(isinstance(r.value, cst.Name) and r.value.value in names for r in func.returns):
            return []
        refs: list[tuple] = []
        for caller in self.callers_of(func):
            refs.extend(self._refs_of_value(caller, depth + 1))
        return refs

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
        if self.compile_api(site_node.func) is None:  # model.compile(): compiled in place
            receiver = site_node.func.value if isinstance(site_node.func, cst.Attribute) else None
            ref = self._ref_for_target(receiver, site_node)
            return [ref] if ref is not None else []
        holder, parent = self._compile_holder(site_node)
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = assigned_targets(parent)
            for target in targets:
                ref = self._ref_for_target(target, site_node)
                if ref is not None:
                    refs.append(ref)
                refs.extend(self.handed_holder_refs(target, site_node))  # `model.module = ...` (holders.py)
                refs.extend(self.item_store_refs(target, site_node))  # `models[i] = ...` (containers.py)
            refs.extend(method_compile_refs(self, targets, site_node))  # `model.step = ...` (method_refs.py)
            refs.extend(self.stored_holder_refs(refs))
            refs.extend(self._returned_to_callers(site_node, targets, _depth))
            refs.extend(self.tuple_return_refs(site_node, targets, _depth))  # `return model, ema` (returned_compiled.py)
        elif isinstance(parent, cst.ListComp) and parent.elt is holder:
            refs.extend(self.element_refs(parent, site_node))  # [torch.compile(m) for m in models] (containers.py)
        elif isinstance(parent, cst.Return) and _depth < 3:
            func = self.enclosing_function(site_node)
            if func is not None:
                for caller in self.callers_of(func):
                    refs.extend(self.compiled_refs(caller, _depth + 1) if self.compile_api(caller.func)
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
            targets = assigned_targets(parent)
            for target in targets:
                ref = self._ref_for_target(target, value)
                if ref is not None:
                    refs.append(ref)
            # `m = self.wrap_compile(m)` then `return model, m`: this caller's callers hold it too
            refs += self._returned_to_callers(value, targets, depth) + self.tuple_return_refs(value, targets, depth)
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

    def is_ref_expr(self, expr: cst.CSTNode, ref: tuple, at: cst.CSTNode) -> bool:
        """``expr`` (read at ``at``) is the compiled object ``ref`` holds."""
        kind = ref[0]
        if kind == "method":
            return method_ref_expr(self, expr, ref, at)
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
        if ref[0] in ("arg", "elements"):
            return []
        return [c for c in self.all_calls() if self.is_ref_expr(c.func, ref, c) or (  # `model.forward(x)` too
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "forward" and self.is_ref_expr(c.func.value, ref, c))]

    def ref_passes(self, ref: tuple) -> Iterator[tuple[str, object, cst.Call]]:
        """Where the compiled object is passed on: ("ref", new ref, call) for a
        local function/class, ("external", None, call) for anything else."""
        if ref[0] == "arg":
            yield "external", None, ref[1]
            return
        if ref[0] in ("func", "method"):
            yield from method_ref_passes(self, ref) if ref[0] == "method" else ()
            return
        if ref[0] == "elements":  # a list of compiled objects: the loops over it, where the list goes (containers.py)
            for element in self.holder_element_refs(ref[1]):
                yield "ref", element, None
            for element in self.element_read_refs(ref[1]):  # `self.student = models[0]` (containers.py)
                yield "ref", element, None
            for how, new, call in self.ref_passes(ref[1]):
                if how == "ref" and new[0] in ("name", "self"):
                    yield "ref", ("elements", new), call
                elif how == "external":
                    yield how, new, call
            return
        for alias in self.alias_refs(ref):  # `eval_model = ema.module if ema else model` (ref_aliases.py)
            yield "ref", alias, None
        for holder in self.list_holder_refs(ref):  # `models.append(model)`, `models = [model]` (containers.py)
            yield "ref", holder, None
        for call in self.all_calls():
            for index, arg in enumerate(call.args):
                if arg.star or not self.is_ref_expr(arg.value, ref, arg.value):
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
                for target in returned_targets(self, call, arg.value):  # `model, ok = setup(model, dev)`
                    new = self._ref_for_target(target, call)
                    if new is not None:
                        yield "ref", new, call
                if isinstance(callee, FuncInfo):
                    skip_self = callee.cls is not None and isinstance(call.func, cst.Attribute)
                    param = self._param_for(callee, call, index, arg, skip_self)
                    if param is not None:
                        yield "ref", ("name", param, callee, -1, None), call
                        if self.returned_param(callee, param):  # `m = default(ema, model)` (ref_aliases.py)
                            yield from (("ref", new, call) for new in self.call_result_refs(call))
                    continue
                yield "external", None, call
