"""Models chosen at run time: "which classes may this compiled value be?"

Real code picks the model when it runs: ``if args.model == "gcn": model =
GCN() else: model = GIN()``, ``MODELS[args.model](...)``, ``A() if c else
B()``, ``getattr(sys.modules[__name__], name)``, a local factory with one
``return`` per model, or a function that compiles its *parameter*
(``def run(model): model = torch.compile(model)``) called with several
models. ``model_choices(expr, at)`` answers with every class the value may be
an instance of -- a local ``ClassInfo`` or an ``ImportRef`` -- each with the
condition that picks it (source text, for messages) when one is known.
``class_of`` (kinds.py) stays the one-answer question; this is its
"every answer" companion, asked by the compile-site analysis (regions.py).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.attr_reaching import attr_values_reaching, rebinds_itself
from gnnlint.semantic.compiled_overrides import override_choices
from gnnlint.semantic.kinds import _MODEL_METHODS_SELF, _NO_VALUE
from gnnlint.semantic.model import ClassInfo, FuncInfo, iter_children
from gnnlint.semantic.registries import imported_module, registry_choice

_LIBRARIES = ("torch", "torch_geometric", "torchvision", "numpy", "dgl", "lightning", "pytorch_lightning",
              "transformers", "timm", "e3nn", "torch_scatter", "torch_sparse", "torch_cluster")
_MAX_CONDITION = 60  # longer conditions are left out of messages
_MAX_DEPTH = 6
_LIST_WRAPPERS = ("ModuleList", "list", "tuple")  # a module list / copy of the items it is given
_RETURNED_CONTAINERS = ("ModuleList", "Sequential", "list", "tuple")


def _is_container_value(ctx, value) -> bool:
    """``[]``, ``[A(), B()]``, ``nn.ModuleList()``, ``nn.Sequential()``, ``list()``: a module list."""
    return isinstance(value, (cst.List, cst.Tuple, cst.ListComp)) \
        or isinstance(value, cst.Call) and ctx.last_part(value.func) in _RETURNED_CONTAINERS


class Choices:
    """Every class a value may be. Mixed into FileContext; reads the SemanticModel."""

    def model_choices(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None,
                      depth: int = 0) -> list[tuple[object, Optional[str]]]:
        """``[(ClassInfo | ImportRef, condition text | None), ...]``: the
        classes ``expr`` may be an instance of, without duplicates."""
        out: list[tuple[object, Optional[str]]] = []
        seen: set = set()
        for cls, cond in self._instance_choices(expr, at or expr, depth, None):
            key = id(cls) if isinstance(cls, ClassInfo) else cls
            if key not in seen:
                seen.add(key)
                out.append((cls, cond))
        return out

    # -- instances --------------------------------------------------------------
    def _instance_choices(self, expr, at, depth: int, cond: Optional[str]) -> list:
        if expr is None or depth > _MAX_DEPTH:
            return []
        if isinstance(expr, cst.IfExp):
            return (self._instance_choices(expr.body, at, depth + 1, self._cond(expr.test, True, cond))
                    + self._instance_choices(expr.orelse, at, depth + 1, self._cond(expr.test, False, cond)))
        if isinstance(expr, cst.Call):
            return self._call_choices(expr, at, depth, cond)
        if isinstance(expr, cst.Name):
            out = []
            for binding, func in self.reaching(expr.value, at):
                if binding.how == "assign":
                    out += self._instance_choices(binding.value, binding.value, depth + 1,
                                                  self._binding_cond(binding, cond))
                elif binding.how == "unpack" and binding.index >= 0 and isinstance(binding.value, cst.Call):
                    # model, config = load_model(path): element `index` of what the factory returns
                    out += self._element_choices(binding.value, binding.index, depth + 1,
                                                 self._binding_cond(binding, cond))
                elif binding.how in ("iter", "iter_unpack") and binding.value is not None:
                    # `for i, model in enumerate(models)`: what the list was filled with
                    out += self._list_element_choices(binding, at, depth + 1, cond)
                elif binding.how == "param" and func is not None:
                    # callers' arguments; for ``__init__``, what this file's constructions pass
                    found = []
                    for arg in (self._args_for_param(binding.node, func) or []) \
                            + self.constructor_args(func, binding.node):
                        found += self._instance_choices(arg, arg, depth + 1, cond)
                    # what a Hydra config passes for it (encoder: ${encoder})
                    found += [(ref, cond) for ref in self.config_param_choices(func, binding.node)]
                    # else the project class it is declared as (``model: Alphafold3``)
                    out += found or self._single(self._declared_project_class(binding.node), cond)
            return out
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            # what the class stores there; and what Hydra builds into it (self.model = instantiate(cfg.model))
            out = self._attr_choices(expr, at, depth, cond)
            return out + [(ref, cond) for ref in self.self_attr_builds(expr, at) if (ref, cond) not in out]
        if isinstance(expr, cst.Subscript):  # `self.models[i]`: an item of a list filled here
            return self._container_choices(expr.value, depth, cond) or self._single(self.class_of(expr, at), cond)
        single = self._single(self.class_of(expr, at), cond)
        if not single and isinstance(expr, cst.Attribute):
            return [(ref, cond) for ref in self.self_attr_builds(expr, at)] or self._held_choices(expr, at, depth, cond)
        return single

    def _list_element_choices(self, binding, at, depth: int, cond: Optional[str]) -> list:
        """The loop name of ``for m in models`` / ``for i, m in enumerate(models)``: the
        classes of what the list holds (``_container_choices``)."""
        iterable = binding.value
        if isinstance(iterable, cst.Call) and self.resolve(iterable.func) == "enumerate" and iterable.args:
            if binding.how != "iter_unpack" or binding.index != 1:
                return []
            iterable = iterable.args[0].value
        elif binding.how != "iter":
            return []
        return self._container_choices(iterable, depth, cond)

    def _container_choices(self, container, depth: int, cond: Optional[str]) -> list:
        """The classes of the items of a local list ``models`` or ``self.models``: what it is
        filled with (``models.append(instantiate(cfg.model))``, ``models = [GCN(), GIN()]``,
        ``[build(c) for c in cfgs]``), for ``models[i]`` and the loops over it."""
        if isinstance(container, cst.Name):
            scope = self.enclosing_function(container)
            values = [c.args[0].value for c in self._append_calls()
                      if isinstance(c.func.value, cst.Name) and c.func.value.value == container.value
                      and self.enclosing_function(c) is scope]
            stored = [b.value for b, _func in self.reaching(container.value, container) if b.how == "assign"]
        elif isinstance(container, cst.Attribute) and isinstance(container.value, cst.Name) \
                and container.value.value == "self":
            cls = self.enclosing_class(container)
            if cls is None:
                return []
            values = [c.args[0].value for c in self._append_calls() if _self_attr(c.func.value, container.attr.value)
                      and self.enclosing_class(c) is cls]
            stored = list(self.class_attr_values(cls, container.attr.value))
        else:
            return []
        out = []
        for value in stored:
            if isinstance(value, cst.Call) and self.last_part(value.func) in _LIST_WRAPPERS and value.args \
                    and value.args[0].keyword is None and not value.args[0].star:
                value = value.args[0].value  # nn.ModuleList([...])
            if isinstance(value, (cst.List, cst.Tuple)):
                values += [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
            elif isinstance(value, cst.ListComp):
                values.append(value.elt)
            elif isinstance(value, cst.Name) and depth < _MAX_DEPTH:
                out += self._handed_container_choices(value, depth + 1, cond)
        for value in values:
            out += self._instance_choices(value, value, depth + 1, cond)
        return out

    def _made_function(self, func, call: cst.Call) -> Optional[FuncInfo]:
        """``build_conv = self._make_conv_factory(...)`` then ``build_conv(...)``: the function defined
        inside the factory that it returns (``def build_conv(...): ...; return build_conv``)."""
        if not isinstance(func, cst.Name):
            return None
        binding, _scope = self.lookup(func.value, call)
        value = binding.value if binding is not None and binding.how == "assign" else None
        maker = self.local_callee(value) if isinstance(value, cst.Call) else None
        if not isinstance(maker, FuncInfo):
            return None
        made = []
        for ret in maker.returns:
            if isinstance(ret.value, cst.Name):
                inner, _ = self.lookup(ret.value.value, ret.value)
                found = self.func_info.get(inner.node) if inner is not None and inner.how == "def" else None
                if found is not None and found is not maker:
                    made.append(found)
        return made[0] if len(made) == 1 else None

    def _returned_items(self, value, depth: int, cond: Optional[str]) -> list:
        """What a builder returns as a module container: ``layers = nn.ModuleList()``,
        ``layers.append(self._build_layer(i))``, ``return layers`` (also a list literal, a
        comprehension, ``nn.Sequential(*layers)``): the classes of its items, which run where the
        container does (``self.backbone = self._build_layers(n)``, ``for conv in self.backbone``)."""
        if isinstance(value, cst.Call) and self.last_part(value.func) in _RETURNED_CONTAINERS and value.args \
                and value.args[0].keyword is None:
            value = value.args[0].value  # nn.ModuleList(layers) / nn.Sequential(*layers)
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
            items = [value.elt] if isinstance(value, cst.ListComp) \
                else [e.value for e in value.elements if isinstance(e, cst.Element)]
            return [c for item in items for c in self._instance_choices(item, item, depth + 1, cond)]
        if isinstance(value, cst.Name) and any(b.how == "assign" and _is_container_value(self, b.value)
                                               for b, _f in self.reaching(value.value, value)):
            return self._container_choices(value, depth, cond)
        return []

    def handed_items(self, cls: ClassInfo, attr: str) -> list:
        """The classes of the items of the lists this file's constructions of ``cls`` hand the ``__init__``
        parameter stored in ``self.<attr>`` (``self.terms = terms`` / ``nn.ModuleList(terms)``): what the
        compiled forward's ``for term in self.terms: term(x)`` runs (asked by regions.py's submodule walk)."""
        out = []
        for value in self.class_attr_values(cls, attr):
            if isinstance(value, cst.Call) and self.last_part(value.func) in _LIST_WRAPPERS and value.args \
                    and value.args[0].keyword is None and not value.args[0].star:
                value = value.args[0].value
            if isinstance(value, cst.Name):
                out += self._handed_container_choices(value, 1, None)
        return out

    def _handed_container_choices(self, name: cst.Name, depth: int, cond: Optional[str]) -> list:
        """``self.pair_potentials = pair_potentials`` of an ``__init__`` parameter: the items of the lists this
        file's constructions pass for it (``pots = nn.ModuleList([])``, ``pots.append(ZBL(...))`` in a builder,
        then ``Net(pair_potentials=pots)``)."""
        out = []
        for binding, func in self.reaching(name.value, name):
            if binding.how == "param" and isinstance(func, FuncInfo) and isinstance(binding.node, cst.Param):
                for arg in self.constructor_args(func, binding.node):
                    if isinstance(arg, cst.Name):
                        out += self._container_choices(arg, depth + 1, cond)
        return out

    def _held_choices(self, expr: cst.Attribute, at, depth: int, cond: Optional[str]) -> list:
        """``model.module`` with ``model`` an instance of a local class: what
        that class stores in ``self.module``; of an imported class:
        ``ImportRef(module, "SPACE:module")`` (its file answers, regions.py)."""
        owner = self.class_of(expr.value, at) or self._annotated_class(expr.value, at)
        if isinstance(owner, ClassInfo):
            out = []
            for value in self.class_attr_values(owner, expr.attr.value):
                out += self._instance_choices(value, value, depth + 1, cond)
            return out
        if isinstance(owner, ImportRef) and owner.name[:1].isupper() and "." not in owner.name:
            return [(ImportRef(owner.module, f"{owner.name}:{expr.attr.value}", owner.level), cond)]
        return []

    def _attr_choices(self, expr: cst.Attribute, at, depth: int, cond: Optional[str]) -> list:
        """``self.model``: every value the class stores there (``self.model =
        build_model(cfg)`` in ``__init__``, re-bound by ``self.model =
        torch.compile(self.model)`` under a config flag)."""
        cls = self.enclosing_class(at or expr)
        if cls is None:
            return []
        out = []
        for value in attr_values_reaching(self, cls, expr.attr.value, at or expr):
            if rebinds_itself(self, value, expr.attr.value):
                continue  # self.model = torch.compile(self.model) / self.model.to(device)
            out += self._instance_choices(value, value, depth + 1, self._binding_cond_at(value, cond))
        return out

    def _call_choices(self, call: cst.Call, at, depth: int, cond: Optional[str]) -> list:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS_SELF:
            return self._instance_choices(func.value, at, depth + 1, cond)  # model.to(device)
        if self.compile_api(func) or self.wraps_module(call):  # also to_hetero(model, meta), DataParallel(model)
            first = call.args[0].value if call.args else None
            return self._instance_choices(first, at, depth + 1, cond)
        if isinstance(func, cst.Call) and (self.resolve(func.func) or "").endswith(".make_fx") and func.args:
            return self._instance_choices(func.args[0].value, at, depth + 1, cond)  # make_fx(model)(inputs)
        built = self.instantiated_choice(call)  # hydra.utils.instantiate(cfg.encoder): the configs' classes
        if built is not None:
            return [(built, cond)]
        config = self.instantiated_param(call)  # instantiate(encoder) of an __init__ parameter a config fills
        if config is not None:
            return self._instance_choices(config, at, depth + 1, cond)
        local = self.local_callee(call) or self._made_function(func, call)
        if isinstance(local, ClassInfo):
            return [(local, cond)]
        if isinstance(local, FuncInfo) and not local.is_async:
            out = []  # a local factory: every class it may return
            for ret in local.returns:
                if ret.value is not None:
                    out += self._instance_choices(ret.value, ret.value, depth + 1, self._binding_cond_at(ret, cond))
                    out += self._returned_items(ret.value, depth + 1, self._binding_cond_at(ret, cond))
            for value in override_choices(self, call, local):  # `self.get_model(x)`: subclasses' overrides
                out += [(value, cond)] if isinstance(value, ImportRef) \
                    else self._instance_choices(value, value, depth + 1, cond)
            return out
        if isinstance(func, cst.Name) and func.value not in self.imports:
            choices = self._class_choices(func, call, depth + 1, cond)  # Model = MODELS[name]; Model(...)
            if choices:
                return choices
        if isinstance(func, (cst.Subscript, cst.Call)):
            choices = self._class_choices(func, call, depth + 1, cond)  # MODELS[name](...), getattr(m, n)(...)
            if choices:
                return choices
        factory = self._imported_factory(func, call)
        if factory is not None:
            return [(factory, cond)]
        built = self.class_of(call, at)
        if isinstance(built, str) and "." in built and isinstance(func, cst.Attribute) \
                and built.rsplit(".", 1)[1][:1].isupper():  # `gnn.GraphNorm(dim)` of `import torch_geometric.nn as gnn`
            built = ImportRef(*built.rsplit(".", 1), 0)
        single = self._single(built, cond)
        if not single:  # MODELS.build(cfg) of a registry another file fills (registries.py)
            single = self._single(registry_choice(self, call, instance=True), cond)
        if not single and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            # `Net.load(path)` of an imported class: its file answers whether the classmethod builds `cls(...)`
            ref = self._project_class_import(func.value.value, call) \
                if func.value.value[:1].isupper() and func.value.value in self.imports else None
            if ref is not None:
                return [(ImportRef(ref.module, f"{ref.name}.{func.attr.value}()", ref.level), cond)]
        return single

    def _element_choices(self, call: cst.Call, index: int, depth: int, cond: Optional[str]) -> list:
        """``a, b = factory(...)``: the classes element ``index`` of a local
        factory's returned tuples may be; for an imported factory,
        ``ImportRef(module, "factory()[index]")`` (its file answers)."""
        local = self.local_callee(call)
        if isinstance(local, FuncInfo) and not local.is_async:
            out = []
            for ret in local.returns:
                element = self._tuple_element(ret.value, index)
                if element is not None:
                    out += self._instance_choices(element, element, depth + 1, self._binding_cond_at(ret, cond))
            return out
        factory = self._imported_factory(call.func, call)
        if factory is not None:
            return [(ImportRef(factory.module, f"{factory.name}[{index}]", factory.level), cond)]
        return []

    @staticmethod
    def _tuple_element(value, index: int):
        if isinstance(value, (cst.Tuple, cst.List)) and index < len(value.elements) \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements[:index + 1]):
            return value.elements[index].value
        return None

    def _annotated_class(self, expr, at):
        """``def compile_model(model: SPACE, ...)``: the class a parameter is annotated with."""
        if not isinstance(expr, cst.Name):
            return None
        binding, _func = self.lookup(expr.value, at)
        param = binding.node if binding is not None and binding.how == "param" else None
        if not isinstance(param, cst.Param) or param.annotation is None \
                or not isinstance(param.annotation.annotation, cst.Name):
            return None
        name = param.annotation.annotation.value
        return self.classes.get(name) or (self.imports.get(name) if name[:1].isupper() else None)

    def _declared_project_class(self, param) -> object:
        """``def __init__(self, model: Alphafold3)`` (also ``Optional[X]``, ``X | None``):
        the local or imported project class a parameter is annotated with; None for a
        library class (``nn.Module``) or anything else."""
        ann = param.annotation.annotation if isinstance(param, cst.Param) and param.annotation else None
        if isinstance(ann, cst.Subscript) and self.last_part(ann.value) == "Optional" and len(ann.slice) == 1 \
                and isinstance(ann.slice[0].slice, cst.Index):
            ann = ann.slice[0].slice.value
        elif isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr) \
                and isinstance(ann.right, cst.Name) and ann.right.value == "None":
            ann = ann.left
        if not isinstance(ann, cst.Name) or not ann.value[:1].isupper():
            return None
        local = self.classes.get(ann.value)
        if local is not None:
            return local
        ref = self.imports.get(ann.value)
        if ref is None or (not ref.level and ref.module.split(".")[0] in _LIBRARIES) or "." in ref.name:
            return None
        return ref

    def _imported_factory(self, func, call) -> Optional[ImportRef]:
        """``build_model(cfg)`` imported from a project module: the function,
        as ``ImportRef(module, "build_model()")`` -- the classes it may return
        are compiled (the defining file answers, see regions.py)."""
        if not isinstance(func, cst.Name) or func.value not in self.imports:
            return None
        ref = self.imports[func.value]
        if not ref.name[:1].islower() or "." in ref.name or (ref.module.split(".")[0] in _LIBRARIES and not ref.level):
            return None
        binding = self.lookup(func.value, call)[0]
        if binding is not None and binding.how != "import":
            return None
        return ImportRef(ref.module, f"{ref.name}()", ref.level)

    def _project_class_import(self, name: str, at) -> Optional[ImportRef]:
        """``from pkg.model import Net`` (a project module): the class."""
        ref = self.imports[name]
        if not ref.name[:1].isupper() or "." in ref.name or (ref.module.split(".")[0] in _LIBRARIES and not ref.level):
            return None
        binding = self.lookup(name, at)[0]
        return ref if binding is None or binding.how == "import" else None

    # -- class objects ----------------------------------------------------------
    def _class_choices(self, expr, at, depth: int, cond: Optional[str]) -> list:
        """The classes an expression that *is* a class may be."""
        if expr is None or depth > _MAX_DEPTH:
            return []
        if isinstance(expr, cst.Name):
            out = []
            for binding, func in self.reaching(expr.value, at):
                if binding.how == "class":
                    out += self._single(self.class_info.get(binding.node), cond)
                elif binding.how == "assign":
                    out += self._class_choices(binding.value, binding.value, depth + 1,
                                               self._binding_cond(binding, cond))
                elif binding.how == "param" and func is not None:
                    for arg in self._args_for_param(binding.node, func) or []:
                        out += self._class_choices(arg, arg, depth + 1, cond)
                    # a Hydra partial the config passes for it (arch: ${arch}, `_partial_: true`)
                    out += [(ref, cond) for ref in self.config_param_choices(func, binding.node)]
                    default = binding.node.default  # `block_cls: Type[nn.Module] = ResidualBlock`: when not given
                    if isinstance(default, (cst.Name, cst.Attribute)) and default is not expr:
                        out += self._class_choices(default, default, depth + 1, cond)
            if not out and expr.value in self.imports and expr.value[:1].isupper():
                out.append((self.imports[expr.value], cond))
            return out
        if isinstance(expr, cst.IfExp):
            return (self._class_choices(expr.body, at, depth + 1, self._cond(expr.test, True, cond))
                    + self._class_choices(expr.orelse, at, depth + 1, self._cond(expr.test, False, cond)))
        if isinstance(expr, cst.Subscript):
            return self._indexed_choices(expr, depth, cond)
        if isinstance(expr, cst.Call) and (self.resolve(expr.func) or "") in ("getattr", "builtins.getattr"):
            return self._getattr_choices(expr, cond)
        if isinstance(expr, cst.Call):  # registry.get_model_class(name) of a registry another file fills
            return self._single(registry_choice(self, expr, instance=False), cond)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value not in self.imports and expr.value.value in self.aliases \
                and expr.attr.value[:1].isupper():
            # `models.GCN` with `import models` (a project module)
            module = self.aliases[expr.value.value]
            if module.split(".")[0] not in ("torch", "torch_geometric"):
                return [(ImportRef(module, expr.attr.value), cond)]
        return []

    def _indexed_choices(self, expr: cst.Subscript, depth: int, cond: Optional[str]) -> list:
        """``MODELS[name]``: every class value of a dict/list/tuple literal."""
        container = expr.value
        if isinstance(container, cst.Name):
            binding = self.feed_binding(container.value, expr)
            container = binding.value if binding is not None and binding.how == "assign" else None
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        index_text = self.module.code_for_node(index.value) if isinstance(index, cst.Index) else None
        out = []
        if isinstance(expr.value, cst.Name) and (container is None or isinstance(container, cst.Dict)
                                                 and not container.elements):
            out += self._registered_choices(expr.value.value, cond)
            if container is None:  # MODELS[name] of an imported registry object (registries.py)
                out += self._single(registry_choice(self, expr, instance=False), cond)
        if isinstance(container, cst.Dict):
            for element in container.elements:
                if not isinstance(element, cst.DictElement):
                    continue
                key = self.literal_value(element.key)
                here = cond
                if index_text is not None and isinstance(key, str):
                    here = self._join(cond, f"`{index_text} == {key!r}`")
                out += self._class_choices(element.value, element.value, depth + 1, here)
        elif isinstance(container, (cst.List, cst.Tuple)):
            for element in container.elements:
                if isinstance(element, cst.Element):
                    out += self._class_choices(element.value, element.value, depth + 1, cond)
        return out

    def _registered_choices(self, registry: str, cond: Optional[str]) -> list:
        """``MODELS[name]`` where ``MODELS = {}`` is filled by a decorator of
        this file (``def register(name): def deco(cls): MODELS[name] = cls``):
        every class of this file it decorates, and ``ImportRef("", "@register")``
        for the classes other files decorate with it (regions.py tells them)."""
        def fills(func: FuncInfo) -> bool:
            todo = list(iter_children(func.node.body))
            while todo:
                node = todo.pop()
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
                    continue
                todo += iter_children(node)
                if isinstance(node, cst.Assign) and any(
                        isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name)
                        and t.target.value.value == registry for t in node.targets):
                    return True
            return False

        decorators = []
        for func in self.functions.values():
            if fills(func) or any(fills(inner) for inner in func.nested.values()):
                decorators.append(func.name)
        out: list = []
        for name in decorators:
            for cls in self.classes.values():
                if any(self.last_part(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) == name
                       for d in cls.node.decorators):
                    out.append((cls, cond))
            out.append((ImportRef("", f"@{name}"), cond))
        return out

    def _getattr_choices(self, call: cst.Call, cond: Optional[str]) -> list:
        """``getattr(sys.modules[__name__], name)`` / ``globals()[name]``-like
        lookups of this module's classes by a name known only at run time:
        every module class of this file; ``getattr(module, "GCN")``: that one."""
        if len(call.args) < 2:
            return []
        owner, name = call.args[0].value, call.args[1].value
        literal = self.literal_value(name)
        if self._is_this_module(owner):
            if isinstance(literal, str):
                return self._single(self.classes.get(literal), cond)
            return [(cls, cond) for cls in self.classes.values() if self.is_module_class(cls)]
        if isinstance(owner, cst.Name) and (literal is _NO_VALUE or (isinstance(literal, str) and literal[:1].isupper())):
            # a literal name: that class; a name known only at run time: every class of the module
            name = literal if isinstance(literal, str) else "*"
            module = self.aliases.get(owner.value)
            ref = self.imports.get(owner.value)
            if ref is not None and ref.name[:1].islower():  # from . import encoders
                base = f"{ref.module}.{ref.name}" if ref.module else ref.name
                if ref.level or base.split(".")[0] not in _LIBRARIES:
                    return [(ImportRef(base, name, ref.level), cond)]
            elif ref is None and module and module.split(".")[0] not in _LIBRARIES:
                return [(ImportRef(module, name), cond)]
            module = imported_module(self, owner, call) if ref is None and not module else None
            if module is not None and module.split(".")[0] not in _LIBRARIES:  # importlib.import_module("pkg.models")
                return [(ImportRef(module, name), cond)]
        return []

    def _is_this_module(self, owner: cst.BaseExpression) -> bool:
        # sys.modules[__name__]
        if isinstance(owner, cst.Subscript) and self.resolve(owner.value) == "sys.modules" \
                and len(owner.slice) == 1 and isinstance(owner.slice[0].slice, cst.Index):
            index = owner.slice[0].slice.value
            return isinstance(index, cst.Name) and index.value == "__name__"
        return False

    # -- bindings and conditions --------------------------------------------------
    def _binding_cond(self, binding, cond: Optional[str]) -> Optional[str]:
        return self._binding_cond_at(binding.node, cond) if binding.node is not None else cond

    def _binding_cond_at(self, stmt: cst.CSTNode, cond: Optional[str]) -> Optional[str]:
        """The test of the innermost ``if`` holding ``stmt`` (negated in its else)."""
        child = stmt
        for anc in self.ancestors(stmt):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Module)):
                return cond
            if isinstance(anc, cst.If):
                return self._cond(anc.test, child is anc.body, cond)
            child = anc
        return cond

    def _cond(self, test: cst.BaseExpression, positive: bool, cond: Optional[str]) -> Optional[str]:
        if not positive and isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, cst.Equal):
            # `args.model == "a"` negated reads `args.model != "a"`
            positive = True
            test = test.with_changes(comparisons=[test.comparisons[0].with_changes(
                operator=cst.NotEqual(whitespace_before=cst.SimpleWhitespace(" "),
                                      whitespace_after=cst.SimpleWhitespace(" ")))])
            text = cst.Module([]).code_for_node(test)
        else:
            text = self.module.code_for_node(test)
        return self._join(cond, f"`{text}`" if positive else f"not `{text}`")

    @staticmethod
    def _join(outer: Optional[str], inner: str) -> Optional[str]:
        text = inner if outer is None else f"{outer} and {inner}"
        return text if len(text) <= _MAX_CONDITION else outer

    @staticmethod
    def _single(cls, cond: Optional[str]) -> list:
        return [(cls, cond)] if isinstance(cls, (ClassInfo, ImportRef)) else []

    # -- answering another file: "*" (any class) and "build()" (what it returns) ----
    def _mark_compiled_choices(self, name: str, why: str) -> None:
        """Another file compiles a class of this module chosen by name at run
        time (``*``: every module class defined or imported here), or what
        this module's function returns (``build()``)."""
        if name == "*":
            for cls in list(self.classes.values()):
                if self.is_module_class(cls):
                    self._mark_class(cls, f"compiled forward of `{cls.name}` (chosen by name, {why.split(', from ')[-1]})"
                                     if ", from " in why else why)
            for local, ref in self.imports.items():  # a package's __init__ re-exporting its classes
                if local[:1].isupper() and (ref.level or ref.module.split(".")[0] not in _LIBRARIES):
                    self.exported.compiled.append((ref, why))
            return
        name, _, element = name.partition("()")  # "build()" / "load()[0]" (element 0 of the returned tuple)
        index = int(element[1:-1]) if element[1:-1].isdigit() else None
        owner, _, method = name.partition(".")
        if method and owner in self.classes:
            # `Net.load()`: a classmethod building `cls(...)` gives an instance of the class
            found = self.classes[owner].methods.get(method)
            if found is not None and self.builds_cls(found):
                self._mark_class(self.classes[owner], why.replace(f"`{name}()`", f"`{owner}`"))
            return
        func = self.functions.get(name)
        if func is None and not element and name in self.classes:
            # a lower-case class name (`_target_: models.advanced_GCN`): called, it is an instance
            self._mark_class(self.classes[name], why.replace(f"`{name}()` returns", f"`{name}`"))
            return
        if func is None:
            ref = self.imports.get(name)  # re-exported factory
            if ref is not None:
                self.exported.compiled.append((ImportRef(ref.module, f"{ref.name}(){element}", ref.level), why))
            return
        source = why.split(", from ")[1] if ", from " in why else None
        for ret in func.returns:
            value = ret.value if index is None else self._tuple_element(ret.value, index)
            for cls, when in self.model_choices(value, value) if value is not None else ():
                text = f"compiled forward of `{cls.name}`" + (f" (when {when})" if when else "") \
                    + (f", compiled in {source}" if source else "")
                if isinstance(cls, ClassInfo):
                    self._mark_class(cls, text)
                else:
                    self._export_choice(cls, text)


def _self_attr(expr: cst.BaseExpression, attr: str) -> bool:
    """``expr`` is ``self.<attr>``."""
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" \
        and expr.attr.value == attr
