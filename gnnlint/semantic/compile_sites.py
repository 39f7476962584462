"""The ``torch.compile`` calls of a file: "how is this compiled?"

``CompileSite`` is the one record of a compile call (target, mode,
dynamic, fullgraph, options, API) -- the file analysis and the project index
share it. ``compile_site(node)``, ``compile_call_node``, ``compile_kwarg``
(also through ``**kwargs`` dicts), ``compile_dynamic``,
``cudagraphs_setting``; ``compile_option``/``compile_option_source``: an
option's value through names, argparse defaults, dict literals and the
``**kwargs`` of a helper's local callers, and ``unreadable_compile_options``
(the sites where it cannot be known: the rules say nothing there, ``-v``
counts them); ``compiled_refs(site)`` -- the names and attributes
that hold the compiled object -- and ``ref_calls``/``ref_passes``: where
they are called and what is passed to them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from gnnlint import config_targets
from gnnlint.semantic.kinds import _MODEL_METHODS_SELF, _NO_VALUE
from gnnlint.semantic.method_refs import method_compile_refs, method_ref_expr, method_ref_passes
from gnnlint.semantic.model import ClassInfo, FuncInfo, assigned_targets
from gnnlint.semantic.vocab import _FEED_MODEL_WRAPPERS, COMPILE_FUNCS


def _shown(value: object) -> str:
    """A literal as a message shows it: ``"reduce-overhead"``, ``False``."""
    return f'"{value}"' if isinstance(value, str) else repr(value)


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
        if ref[0] == "arg":
            return []
        return [c for c in self.all_calls() if self._is_ref_expr(c.func, ref, c) or (  # `model.forward(x)` too
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "forward" and self._is_ref_expr(c.func.value, ref, c))]

    def ref_passes(self, ref: tuple) -> Iterator[tuple[str, object, cst.Call]]:
        """Where the compiled object is passed on: ("ref", new ref, call) for a
        local function/class, ("external", None, call) for anything else."""
        if ref[0] == "arg":
            yield "external", None, ref[1]
            return
        if ref[0] in ("func", "method"):
            yield from method_ref_passes(self, ref) if ref[0] == "method" else ()
            return
        for alias in self.alias_refs(ref):  # `eval_model = ema.module if ema else model` (ref_aliases.py)
            yield "ref", alias, None
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
                        if self.returned_param(callee, param):  # `m = default(ema, model)` (ref_aliases.py)
                            yield from (("ref", new, call) for new in self.call_result_refs(call))
                    continue
                yield "external", None, call

    # the old private names, kept for their many callers (feeds, steps, handoffs, method_refs, ...)
    _is_ref_expr = is_ref_expr
    _ref_passes = ref_passes

    # -- compile options bound to names -------------------------------------------
    # `dynamic=args.dynamic`, `mode=MODE`, `**compile_kwargs`: the value a
    # compile option surely has when the program runs with its defaults (a
    # literal reached through assignments, an argparse default, a dict
    # literal), else _NO_VALUE -- the rules then say nothing, and the site is
    # counted as one whose options gnnlint could not read (`-v`).


    def compile_option(self, site_node: cst.CSTNode, name: str) -> object:
        """Compile option ``name`` of a site: its literal value, None when not
        given, ``_NO_VALUE`` when gnnlint cannot read it."""
        return self._option_read(site_node, name)[0]

    def compile_option_source(self, site_node: cst.CSTNode, name: str) -> Optional[str]:
        """For a readable option not written as a literal at the call: where
        its value comes from, for messages (``"`--dynamic` defaults to False"``)."""
        return self._option_read(site_node, name)[1]

    def unreadable_compile_options(self) -> list[tuple[cst.CSTNode, tuple[str, ...]]]:
        """Compile sites (not optimizer steps) whose ``dynamic``/``mode`` gnnlint
        cannot read, with the options it could not read."""
        out = []
        for site_node, site in self.compile_sites:
            if site.target_kind == "optimizer_step":
                continue
            missing = tuple(n for n in ("dynamic", "mode") if self.compile_option(site_node, n) is _NO_VALUE)
            if missing:
                out.append((site_node, missing))
        return out

    def _option_read(self, site_node: cst.CSTNode, name: str) -> tuple[object, Optional[str]]:
        def compute():
            arg = self.compile_kwarg(site_node, name)
            if arg is not None:
                value, source = self._option_value(arg.value, arg.value, 0)
                call = self.compile_call_node(site_node)
                if value is not _NO_VALUE and source is None and not (call is not None and
                                                                      any(a is arg for a in call.args)):
                    alias = next((n for n, p in self.compile_partials.items() if arg in p.args), "functools.partial")
                    source = f"set by `{alias}`"  # compile_fn = partial(torch.compile, dynamic=False)
                return value, source
            return self._star_option(site_node, name)
        return self._memoised(("compile_option", site_node, name), compute, (_NO_VALUE, None))

    def _star_option(self, site_node: cst.CSTNode, name: str) -> tuple[object, Optional[str]]:
        """``name`` through the ``**`` arguments of a compile call (None: surely not passed)."""
        for arg in self._compile_args(site_node):
            if arg.star != "**":
                continue
            config = self._config_entry(arg.value, name)
            if config is not None:
                if config[0] is None:
                    continue  # the configs leave it out
                return config
            found = self._dict_entry(arg.value, arg.value, name, 0)
            if found is None:
                continue
            if found[0] is _NO_VALUE or found[1] is None:
                return found
            value, source = self._option_value(found[1], found[1], 1)
            if value is _NO_VALUE:
                return _NO_VALUE, None
            where = self.module.code_for_node(arg.value)
            return value, source or f"`**{where}` sets `{name}={_shown(value)}`"
        return None, None

    _CONFIG_ROOTS = ("cfg", "config", "conf", "hparams", "args", "opt", "hydra_cfg")
    _YAML_LITERALS = {"true": True, "True": True, "false": False, "False": False, "null": None, "~": None}

    def _config_entry(self, expr: cst.BaseExpression, name: str) -> Optional[tuple]:
        """``**cfg.compile.args`` in a Hydra program: ``(value, source)`` of
        ``name`` in that mapping of the project's YAML configs
        (``gnnlint.config_targets.mapping_entry``), ``(None, None)`` when
        they leave it out, None when unknown (not a Hydra config, no config
        defines the mapping, the configs disagree, not a plain scalar)."""
        if not any(m.split(".")[0] in ("hydra", "omegaconf") for m in self.aliases.values()) \
                and not any(r.module.split(".")[0] in ("hydra", "omegaconf") for r in self.imports.values()):
            return None
        keys = []
        while isinstance(expr, cst.Attribute):
            keys.append(expr.attr.value)
            expr = expr.value
        keys.reverse()
        if isinstance(expr, cst.Name) and expr.value == "self" and keys and keys[0] in self._CONFIG_ROOTS:
            keys = keys[1:]  # self.cfg.compile.args
        elif not isinstance(expr, cst.Name) or expr.value == "self":
            return None
        if not keys:
            return None
        found = config_targets.mapping_entry(self.path, tuple(keys), name)
        if found is None:
            return None
        raw, where = found
        if raw == config_targets.ABSENT:
            return None, None
        value = self._YAML_LITERALS.get(raw, raw)
        if isinstance(value, str) and name == "dynamic":
            return _NO_VALUE, None  # `dynamic: ${...}` or a string: not a value gnnlint reads
        return value, f"`{where}` sets `{'.'.join(keys)}.{name}: {raw}`"

    def _dict_entry(self, expr: cst.BaseExpression, at: cst.CSTNode, key: str, depth: int):
        """The entry ``key`` of a mapping expression: None when it surely has
        none, ``(_NO_VALUE, None)`` when unreadable, ``(True, value_expr)``."""
        if depth > 4:
            return _NO_VALUE, None
        if isinstance(expr, cst.Dict):
            found = None
            for element in expr.elements:
                if not isinstance(element, cst.DictElement):
                    inner = self._dict_entry(element.value, at, key, depth + 1)  # {**base, ...}
                    if inner is not None:
                        found = inner
                    continue
                element_key = self.literal_value(element.key)
                if element_key is _NO_VALUE:
                    return _NO_VALUE, None
                if element_key == key:
                    found = (True, element.value)
            return found
        if isinstance(expr, cst.Call) and self.resolve(expr.func) == "dict" and \
                all(a.keyword is not None or a.star == "**" for a in expr.args):
            found = None
            for a in expr.args:
                if a.star == "**":
                    inner = self._dict_entry(a.value, at, key, depth + 1)
                    found = inner if inner is not None else found
                elif a.keyword.value == key:
                    found = (True, a.value)
            return found
        if isinstance(expr, cst.Name):
            if self._mapping_mutated(expr.value):
                return _NO_VALUE, None
            values = self._reaching_values(expr, at)
            if values is None:
                return self._kwargs_param_entry(expr, at, key, depth)
            entries = [self._dict_entry(v, v, key, depth + 1) for v in values]
            if any(e is not None and e[0] is _NO_VALUE for e in entries):
                return _NO_VALUE, None
            given = [e for e in entries if e is not None]
            if not given:
                return None
            if len(given) != len(entries):
                return _NO_VALUE, None  # set on one path only
            return given[0] if len(given) == 1 else (True, given[0][1]) if all(
                self.literal_value(g[1]) == self.literal_value(given[0][1]) for g in given) else (_NO_VALUE, None)
        return _NO_VALUE, None

    def _kwargs_param_entry(self, expr: cst.Name, at: cst.CSTNode, key: str, depth: int):
        """``def build(model, **kwargs): torch.compile(model, **kwargs)``: what
        the local callers pass (unreadable without local callers)."""
        binding, scope = self.lookup(expr.value, at)
        if binding is None or binding.how != "param" or scope is None:
            return _NO_VALUE, None
        param = scope.params.get(expr.value)
        if param is None or scope.node.params.star_kwarg is not param:
            return _NO_VALUE, None
        callers = self.callers_of(scope)
        if not callers:
            return _NO_VALUE, None
        found = []
        for caller in callers:
            if any(a.star for a in caller.args):
                return _NO_VALUE, None
            passed = [a.value for a in caller.args if a.keyword is not None and a.keyword.value == key]
            found.append(passed[0] if passed else None)
        values = {self.literal_value(v) if v is not None else None for v in found}
        if len(values) != 1 or _NO_VALUE in values:
            return _NO_VALUE, None
        value = next(iter(values))
        return None if value is None and all(v is None for v in found) else (True, next(v for v in found if v is not None))

    def _mapping_mutated(self, name: str) -> bool:
        """``name[...] = ...``, ``name.update(...)`` and the like anywhere in the file."""
        def compute():
            for use in self.name_uses(name):
                parent = self.parent.get(use)
                if isinstance(parent, cst.Subscript) and parent.value is use:
                    holder = self.parent.get(parent)
                    if isinstance(holder, (cst.AssignTarget, cst.AugAssign, cst.Del)):
                        return True
                if isinstance(parent, cst.Attribute) and parent.value is use and \
                        parent.attr.value in ("update", "setdefault", "pop", "popitem", "clear", "__setitem__"):
                    return True
                if isinstance(parent, cst.AugAssign) and parent.target is use:
                    return True
            return False
        return self._memoised(("mapping_mutated", name), compute, True)

    def _reaching_values(self, expr: cst.Name, at: cst.CSTNode) -> Optional[list[cst.BaseExpression]]:
        """The values of every assignment of a name that may reach ``at``
        (None: a binding that is not a plain assignment reaches it)."""
        reaching = [b for b, _scope in self.reaching(expr.value, at)]
        if not reaching or any(b.how != "assign" or b.value is None for b in reaching):
            return None
        return [b.value for b in reaching]

    def _option_value(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> tuple[object, Optional[str]]:
        """(literal value, where it came from when not written here) or (_NO_VALUE, None)."""
        if depth > 5:
            return _NO_VALUE, None
        if isinstance(expr, cst.Name) and expr.value not in ("True", "False", "None"):
            values = self._reaching_values(expr, at)
            if values is None:
                return self._param_option(expr, at, depth)
            results = [self._option_value(v, v, depth + 1) for v in values]
            return self._agree(results, f"`{expr.value}`")
        if isinstance(expr, cst.Attribute):
            dest = expr.attr.value
            if self._is_parsed_args(expr.value, at, depth):
                return self._argparse_default(dest)
            return _NO_VALUE, None
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index):
            key = self.literal_value(expr.slice[0].slice.value)
            if not isinstance(key, str):
                return _NO_VALUE, None
            entry = self._dict_entry(expr.value, at, key, depth + 1)
            if entry is None or entry[0] is _NO_VALUE:
                return _NO_VALUE, None
            value, source = self._option_value(entry[1], entry[1], depth + 1)
            return value, source or (f"`{self.module.code_for_node(expr)}` is {_shown(value)}"
                                     if value is not _NO_VALUE else None)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get" \
                and expr.args and not any(a.star or a.keyword for a in expr.args):
            key = self.literal_value(expr.args[0].value)
            entry = self._dict_entry(expr.func.value, at, key, depth + 1) if isinstance(key, str) else (_NO_VALUE,)
            if entry is not None and entry[0] is _NO_VALUE:
                return _NO_VALUE, None
            if entry is None:  # cfg.get("dynamic", False): the default
                if len(expr.args) < 2:
                    return None, f"`{self.module.code_for_node(expr)}` is None"
                value, source = self._option_value(expr.args[1].value, at, depth + 1)
            else:
                value, source = self._option_value(entry[1], entry[1], depth + 1)
            return value, source or (f"`{self.module.code_for_node(expr)}` is {_shown(value)}"
                                     if value is not _NO_VALUE else None)
        if isinstance(expr, cst.IfExp):
            return self._agree([self._option_value(expr.body, at, depth + 1),
                                self._option_value(expr.orelse, at, depth + 1)], None)
        return self.literal_value(expr, expr) if not isinstance(expr, cst.Name) or \
            expr.value in ("True", "False", "None") else _NO_VALUE, None

    @staticmethod
    def _agree(results: list[tuple[object, Optional[str]]], name: Optional[str]) -> tuple[object, Optional[str]]:
        values = [r[0] for r in results]
        if not values or any(v is _NO_VALUE for v in values) or any(v != values[0] or type(v) is not type(values[0])
                                                                    for v in values):
            return _NO_VALUE, None
        source = next((r[1] for r in results if r[1]), None)
        return values[0], source or (f"{name} is {_shown(values[0])}" if name else None)

    def _param_option(self, expr: cst.Name, at: cst.CSTNode, depth: int) -> tuple[object, Optional[str]]:
        """A parameter: its default and what every local caller passes (unreadable without local callers)."""
        binding, scope = self.lookup(expr.value, at)
        if binding is None or binding.how != "param" or scope is None:
            return _NO_VALUE, None
        param = scope.params.get(expr.value)
        callers = self.callers_of(scope)
        if param is None or not callers or param.star:
            return _NO_VALUE, None
        results = []
        for caller in callers:
            if any(a.star for a in caller.args):
                return _NO_VALUE, None
            passed = self.arg_for_param(scope, caller, expr.value)
            if passed is None:
                if param.default is None:
                    return _NO_VALUE, None
                value, source = self._option_value(param.default, param.default, depth + 1)
                results.append((value, source or f"`{expr.value}` defaults to {_shown(value)}"))
            else:
                results.append(self._option_value(passed, caller, depth + 1))
        return self._agree(results, f"`{expr.value}`")

    def _is_parsed_args(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """``args`` from ``parser.parse_args()`` (through names and local callers' arguments)."""
        if depth > 5:
            return False
        if isinstance(expr, cst.Call):
            return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "parse_args"
        if not isinstance(expr, cst.Name):
            return False
        binding, scope = self.lookup(expr.value, at)
        if binding is None:
            binding, scope = self.feed_binding(expr.value, at), None
        if binding is None:
            return False
        if binding.how == "assign":
            return self._is_parsed_args(binding.value, binding.value, depth + 1)
        if binding.how == "unpack" and binding.index == 0 and isinstance(binding.value, cst.Call) \
                and isinstance(binding.value.func, cst.Attribute) \
                and binding.value.func.attr.value == "parse_known_args":
            return True
        if binding.how == "param" and scope is not None:
            callers = self.callers_of(scope)
            passed = [self.arg_for_param(scope, c, expr.value) for c in callers]
            return bool(passed) and all(p is not None and self._is_parsed_args(p, c, depth + 1)
                                        for p, c in zip(passed, callers))
        return False

    def _argparse_default(self, dest: str) -> tuple[object, Optional[str]]:
        """The default of the argparse option stored in ``dest`` in this file
        (``action="store_true"``: False), unless the program assigns it."""
        def compute():
            found: list[tuple[object, str]] = []
            overrides: list[tuple[object, str]] = []  # parser.set_defaults(dest=...) wins over add_argument's default
            for call in self.all_calls():
                func = call.func
                if not isinstance(func, cst.Attribute):
                    continue
                if func.attr.value == "set_defaults":
                    for a in call.args:
                        if a.keyword is not None and a.keyword.value == dest:
                            value = self._option_value(a.value, a.value, 4)[0]
                            overrides.append((value, f"`{dest}` defaults to {_shown(value)}"))
                    continue
                if func.attr.value != "add_argument":
                    continue
                flags = [self.literal_value(a.value) for a in call.args if a.keyword is None]
                flags = [f for f in flags if isinstance(f, str)]
                kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
                name = self.literal_value(kw["dest"]) if "dest" in kw else next(
                    (f.lstrip("-").replace("-", "_") for f in flags if f.startswith("--")),
                    flags[0].lstrip("-").replace("-", "_") if flags else None)
                if name != dest:
                    continue
                flag = next((f for f in flags if f.startswith("--")), flags[0] if flags else dest)
                action = self.literal_value(kw["action"]) if "action" in kw else None
                if "default" in kw:
                    value = self._option_value(kw["default"], kw["default"], 4)[0]
                elif action in ("store_true", "store_false"):
                    value = action == "store_false"
                elif action in (None, "store"):
                    value = None
                else:
                    value = _NO_VALUE
                found.append((value, f"`{flag}` defaults to {_shown(value)}"))
            found = overrides or found
            if not found or any(v is _NO_VALUE or v != found[0][0] for v, _ in found):
                return _NO_VALUE, None
            for node in self.attribute_nodes(dest):  # args.dynamic = True somewhere
                holder = self.parent.get(node)
                if isinstance(holder, (cst.AssignTarget, cst.AugAssign)) and holder.target is node:
                    return _NO_VALUE, None
            return found[0]
        return self._memoised(("argparse_default", dest), compute, (_NO_VALUE, None))
