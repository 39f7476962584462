"""Compiled models handed to functions of other files (issue 10 item 7).

``model = torch.compile(model)`` then ``train(model, loader)`` with ``train``
imported from another file: that function's calls of its parameter run the
compiled model. The calling file tells the project (``ExportedFacts
.compiled_args``: ``ImportRef(module, "train:0")`` -- the function and the
parameter, by position or keyword); the defining file receives it as
``ProjectFacts.compiled_args["train:0"]`` and ``handed_compiled_refs()`` turns
it into a ref of that parameter (``("name", param, FuncInfo, -1, None)``),
which the per-step analysis (steps.py) follows like a local hand-off.
"""
from __future__ import annotations

import os
from typing import Iterator, Optional

import libcst as cst

from gnnlint.config_targets import group_ref
from gnnlint.facts import ImportRef
from gnnlint.semantic.arg_classes import export_arg_classes
from gnnlint.semantic.containers import ELEMENTS, module_self, refuses_compiled
from gnnlint.semantic.compiled_holders import HANDED_HOLDER, HOLDER_MARK
from gnnlint.semantic.instance_methods import export_instance_methods
from gnnlint.semantic.forwarded_args import forwarded_spec, star_forward, strip_mark
from gnnlint.semantic.method_refs import handed_method, passing_base
from gnnlint.semantic.registries import mark_registered_classes, registry_key
from gnnlint.semantic.step_handoffs import compiled_class
from gnnlint.semantic.model import arg_specs

_MAX_DEPTH = 3
_LIBRARIES = ("torch", "torch_geometric", "numpy", "tqdm", "lightning", "pytorch_lightning")


class Handoffs:
    """Compiled objects passed across files. Mixed into FileContext; reads the SemanticModel."""

    def _export_compiled_args(self) -> None:
        """Calls of imported functions that pass a compiled object: what this file tells their files."""
        seen: set = set()
        seeds = [(self._handoff_refs(site_node), f"compiled `{site.target}`") for site_node, site in self.compile_sites]
        # `model, ema = build(cfg)` with an imported builder returning it compiled (returned_compiled.py)
        seeds += [(self._handoff_refs_from([ref]), what) for ref, what in self.returned_compiled_refs()]
        for refs, what in seeds:
            for ref in refs:
                for call in self.all_calls():
                    target = self._imported_function(call)
                    # `model, train = setup(args)`: the imports the helper returns; `if c: from a import f
                    # as train` / `else: from b import g as train`: both (returned_functions.py)
                    targets = self.called_imports(call) or ([target] if target is not None else []) \
                        or self._imported_class(call) \
                        or self._imported_methods(call) \
                        or self._instantiated_classes(call)  # hydra.utils.instantiate(cfg.trainer, models=...)
                    specs = set()
                    for target in targets:
                        for spec in self._specs_passing(call, ref):
                            specs.add(spec)
                            key = (target, spec)
                            if key in seen:
                                continue
                            seen.add(key)
                            self.exported.compiled_args.append(
                                (ImportRef(target.module, f"{target.name}:{spec}", target.level), what))
                    if specs and ("classes", call) not in seen:
                        seen.add(("classes", call))  # the other arguments' classes (arg_classes.py)
                        export_arg_classes(self, call, targets, specs)
                        classes = self._imported_class(call)
                        if classes and targets == classes:  # what the script runs of it (instance_methods.py)
                            export_instance_methods(self, call, classes)
        # instances of a class holding compiled submodules (compiled_holders.py): `ppo.train(agent)`
        if self._has_self_compiled() or self.project.compiled_instances:
            for call in self.all_calls():
                target = self._imported_function(call) or self._imported_method(call)
                if target is None:
                    continue
                for spec, why in self._holder_args(call):
                    if (target, spec) not in seen:
                        seen.add((target, spec))
                        self.exported.compiled_args.append(
                            (ImportRef(target.module, f"{target.name}:{spec}", target.level), why))
        # re-exports: `from .utils import test` in a package's __init__.py
        for key, why in self.project.compiled_args.items():
            name, _, spec = key.partition(":")
            ref = self.imports.get(name)
            if name not in self.functions and name not in self.classes and ref is not None \
                    and ref.name[:1].isalpha():
                self.exported.compiled_args.append((ImportRef(ref.module, f"{ref.name}:{spec}", ref.level), why))

    def _handoff_refs(self, site_node: cst.CSTNode) -> list[tuple]:
        """The refs holding a compile site's result, through local hand-offs."""
        return self._handoff_refs_from(self.compiled_refs(site_node))

    def _handoff_refs_from(self, refs: list[tuple]) -> list[tuple]:
        todo = [(ref, 0) for ref in refs if ref[0] in ("name", "self", "method", "elements")]
        out: list[tuple] = []
        while todo:
            ref, depth = todo.pop()
            if ref in out:
                continue
            out.append(ref)
            if depth < _MAX_DEPTH:
                todo += [(new, depth + 1) for how, new, _call in self.ref_passes(ref) if how == "ref"]
        return out

    def _specs_passing(self, call: cst.Call, ref: tuple) -> Iterator[str]:
        """The parameters (position or keyword) a call passes the ref as
        (``0@step``: the object whose compiled ``step`` a ``("method", ...)`` ref holds)."""
        ref, suffix = passing_base(ref)
        if ref[0] == "elements":  # `Trainer(models=models)`: a list of compiled objects (containers.py)
            ref, suffix = ref[1], ELEMENTS
        for spec, arg in arg_specs(call):
            # `Trainer(models=[model])`: a list literal holding it (containers.py)
            listed = not suffix and self.lists_ref(arg.value, ref)
            if self.is_ref_expr(arg.value, ref, arg.value) or listed:
                yield spec + (ELEMENTS if listed else suffix)

    def imported_function_key(self, call: cst.Call, func: Optional[cst.BaseExpression] = None) -> Optional[str]:
        """``"<module stem>.<function>"`` of the imported function ``call`` runs (the key
        of the facts a helper's file tells its importers: ``synced_params``,
        ``returned_tensors``), or None. ``func``: the function named by an argument of
        ``call`` instead (``DataLoader(ds, collate_fn=collate_graphs)``)."""
        target = self._imported_function(call, func)
        return None if target is None else f"{(target.module or '').split('.')[-1]}.{target.name}"

    def _imported_function(self, call: cst.Call, func: Optional[cst.BaseExpression] = None) -> Optional[ImportRef]:
        """``train(...)`` with ``from train_eval import train``, or
        ``train_eval.train(...)`` with ``import train_eval`` / ``from . import
        train_eval``: the function, as the import names it. A capitalised name
        may be a function too (``train.Train_QM9(model, ...)``); a class's file
        has no function of that name, and ignores what it is told."""
        func = call.func if func is None else func
        if isinstance(func, cst.Name):
            ref = self.imports.get(func.value)
            if ref is None or not ref.name[:1].isalpha() or self._top(ref.module) in _LIBRARIES:
                return None
            binding, _scope = self.lookup(func.value, call)
            if binding is not None and binding.how != "import":
                return None
            return ref
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value[:1].isalpha():
            owner = func.value.value
            ref = self.imports.get(owner)
            if ref is not None and ref.name[:1].islower():  # from . import train_eval
                module = f"{ref.module}.{ref.name}" if ref.module else ref.name
                if self._top(module) not in _LIBRARIES:
                    return ImportRef(module, func.attr.value, ref.level)
                return None
            module = self.aliases.get(owner)
            if ref is None and module and self._top(module) not in _LIBRARIES \
                    and self.lookup(owner, call)[0] is None:
                return ImportRef(module, func.attr.value)
        return None

    def _imported_class(self, call: cst.Call) -> list[ImportRef]:
        """``LRFinder(model, opt)`` with ``from pkg.lr_finder import LRFinder``
        (a project module), or ``lr_finder.LRFinder(model, opt)`` with the
        module imported: the class, whose ``__init__`` stores what it is
        given (``self.model = model``) for its methods to run."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "load_from_checkpoint" \
                and isinstance(func.value, cst.Name) and func.value.value[:1].isupper():
            # Lightning's `LitNNP.load_from_checkpoint(path, model=model)` hands its keywords to `__init__`
            ref = self.imports.get(func.value.value)
            return [ref] if ref is not None and ref.name[:1].isupper() and (
                ref.level or self._top(ref.module) not in _LIBRARIES) else []
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value[:1].isupper() and not func.attr.value.isupper():
            # trainers.Trainer(model) with `from pkg import trainers` / `import pkg.trainers as trainers`
            owner = self.imports.get(func.value.value)
            module = (f"{owner.module}.{owner.name}" if owner.module else owner.name) \
                if owner is not None and owner.name[:1].islower() else \
                (self.aliases.get(func.value.value) if owner is None else None)
            if module and (owner is not None and owner.level or self._top(module) not in _LIBRARIES) \
                    and self.lookup(func.value.value, call)[0] is None:
                return [ImportRef(module, func.attr.value, owner.level if owner is not None else 0)]
            return []
        if not isinstance(func, cst.Name) or not func.value[:1].isupper() or func.value.isupper():
            return []
        ref = self.imports.get(func.value)
        if ref is None or not ref.name[:1].isupper() or (not ref.level and self._top(ref.module) in _LIBRARIES):
            return []
        binding, _scope = self.lookup(func.value, call)
        return [ref] if binding is None or binding.how == "import" else []
    def _instantiated_classes(self, call: cst.Call) -> list[ImportRef]:
        """``hydra.utils.instantiate(cfg.trainer.init, models=models)``: the marker of the
        config group's classes (the engine turns it into their ``_target_`` classes);
        only what the call passes by keyword reaches their ``__init__``."""
        group = self.instantiated_group(call)
        return [group_ref(group)] if group is not None else []

    def _imported_method(self, call: cst.Call) -> Optional[ImportRef]:
        """``ppo.train(...)`` with ``ppo = PPO(...)`` of a class imported from
        the project: ``ImportRef(module, "PPO.train")``."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.attr.value[:1].islower() and not func.attr.value.startswith("__")):
            return None
        # `model.train_step(model, ...)` on the compiled wrapper: the model's class (step_handoffs.py)
        cls = self.class_of(func.value, call) or compiled_class(self, func.value, call)
        if not isinstance(cls, ImportRef) or not cls.name[:1].isupper() or "." in cls.name \
                or self._top(cls.module) in _LIBRARIES:
            return None
        return ImportRef(cls.module, f"{cls.name}.{func.attr.value}", cls.level)

    def _imported_methods(self, call: cst.Call) -> list[ImportRef]:
        """``utils.train(model, loader)`` with ``utils = Utils(...)`` of a project
        class (``_imported_method``): the method a compiled model is handed to."""
        target = self._imported_method(call)
        return [target] if target is not None else []

    def _holder_args(self, call: cst.Call) -> Iterator[tuple[str, str]]:
        """(parameter position or keyword, why) of the arguments holding an
        instance of a class that compiles its submodules."""
        position = 0
        for arg in call.args:
            if arg.star:
                return
            spec = arg.keyword.value if arg.keyword is not None else str(position)
            if arg.keyword is None:
                position += 1
            if isinstance(arg.value, (cst.Name, cst.Attribute)):
                why = self.compiled_instance(arg.value, call)
                if why is not None and HOLDER_MARK in why:
                    yield spec, why

    @staticmethod
    def _top(module: str) -> str:
        return module.split(".")[0] if module else ""

    def handed_compiled_refs(self) -> list[tuple[tuple, str]]:
        """Parameters of this file's functions that another file passes a
        compiled object to: ``[(ref, what it runs, for messages), ...]``."""
        out = []
        for key, why in self.project.compiled_args.items():
            name, _, spec = key.partition(":")
            elements = spec.endswith(ELEMENTS)  # `models[]`: a list of compiled objects (containers.py)
            spec = spec.removesuffix(ELEMENTS)
            spec, method = handed_method(spec)  # `rollout:0@step`: only its `step` is compiled (method_refs.py)
            info = self.functions.get(name)
            if info is None and "." in name:  # a method: `ppo.train(agent)` in another file
                cls = self.classes.get(name.split(".")[0])
                info = self.method_of(cls, name.split(".", 1)[1]) if cls is not None else None
                if info is not None and info.cls is not None and spec.isdigit() \
                        and list(info.params)[:1] in (["self"], ["cls"]):
                    spec = str(int(spec) + 1)
            if info is None:
                handed = self._handed_to_class(name, spec, why, elements) if method is None else []
                out += [(("elements", ref) if elements and not done else ref, what)
                         for ref, what, done in handed]
                continue
            params = list(info.params)
            param = params[int(spec)] if spec.isdigit() and int(spec) < len(params) else \
                (spec if spec in info.params else None)
            if param is None:
                continue
            held = HANDED_HOLDER + " " if HOLDER_MARK in why else ""
            source = why.split(", from ")[-1 if held else 1] if ", from " in why else None
            shown = f"{param}.{method}" if method else param
            what = f"{held or 'compiled '}`{shown}`" + (f" (passed in {source})" if source else "")
            ref = ("name", param, info, -1, None)
            out.append((("method", ref, method) if method else ("elements", ref) if elements else ref, what))
        return out

    def _handed_to_class(self, name: str, spec: str, why: str, elements: bool = False) -> list[tuple[tuple, str, bool]]:
        """Another file builds this file's class ``name`` with a compiled
        object (``LRFinder(model, ...)``): the attributes its ``__init__``
        stores that parameter in (``self.model = model``), as refs of the class.
        A list of them (``elements``): also the parameter itself, and what
        ``__init__`` stores of its items (``self.student = models[0].to(device)``);
        the third field says the ref is final (not wrapped as a list's elements)."""
        cls = self.classes.get(name)
        init = cls.methods.get("__init__") if cls is not None else None
        if init is None:
            return []
        params = list(init.params)[1:]  # after self
        param = params[int(spec)] if spec.isdigit() and int(spec) < len(params) else \
            (spec if spec in params else None)
        if param is None or refuses_compiled(self, init, param):
            return []
        source = why.split(", from ")[1] if ", from " in why else None
        what = f"compiled `{param}`" + (f" (passed in {source})" if source else "")
        out = []
        for attr, values in cls.attrs.items():
            # `self.model = model`, `self.model = model.to(device)` (the module itself)
            if any(isinstance(module_self(value), cst.Name) and module_self(value).value == param
                   and self.enclosing_function(value) is init for value in values):
                out.append((("self", attr, cls), what, False))
        if elements:  # the items `__init__` stores: `self.student = models[0].to(device)` (containers.py)
            listed = ("name", param, init, -1, None)
            out += [(ref, what, True) for ref in [("elements", listed)] + self.element_read_refs(listed)]
        return out

    # -- functions that compile their parameter, across files ---------------------
    def _compiled_params(self) -> dict:
        """{(FuncInfo, parameter name)}: ``def run(model): model =
        torch.compile(model)``, and functions handing their parameter on to
        such a function of this file (``run`` -> ``run_train``)."""
        found: dict = {}
        in_place = {id(call) for call in self.method_compile_calls}
        for call in list(self.compile_calls) + list(self.method_compile_calls):
            if id(call) in in_place:  # model.compile(): in place
                target = call.func.value  # type: ignore[union-attr]
            else:
                target = call.args[0].value if call.args and call.args[0].keyword is None else None
            while isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                    and target.func.attr.value in ("to", "cuda", "cpu", "train", "eval", "float"):
                target = target.func.value  # torch.compile(model.to(device))
            for param, func in self._params_reaching(target, call) + self._init_params_stored(target, call):
                found.setdefault((func, param), True)
        for _ in range(_MAX_DEPTH):
            grew = False
            for (callee, param), _v in list(found.items()):
                for call in self.callers_of(callee):
                    arg = self.arg_for_param(callee, call, param)
                    for outer_param, outer in self._params_reaching(arg, call):
                        if (outer, outer_param) not in found:
                            found[(outer, outer_param)] = True
                            grew = True
            if not grew:
                break
        return found

    def _params_reaching(self, expr, at) -> list:
        """The parameters of the enclosing functions a Name may hold (through ``model = model.to(d)``)."""
        out = []
        for _ in range(3):
            if not isinstance(expr, cst.Name):
                return out
            binding, func = self.lookup(expr.value, at)
            if binding is None:
                return out
            if binding.how == "param" and func is not None:
                out.append((expr.value, func))
                return out
            if binding.how != "assign":
                return out
            value = binding.value
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in ("to", "cuda", "cpu", "train", "eval", "float"):
                value = value.func.value
            expr, at = value, binding.node
        return out

    def _init_params_stored(self, target, at) -> list:
        """``self.model = torch.compile(self.model)`` where ``__init__`` stored
        its parameter there (``self.model = model``): that parameter of
        ``__init__`` (a trainer or engine class compiling the model it is given)."""
        while isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                and target.func.attr.value in ("to", "cuda", "cpu", "train", "eval", "float"):
            target = target.func.value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            return []
        cls = self.enclosing_class(at)
        init = cls.methods.get("__init__") if cls is not None else None
        if init is None:
            return []
        out = []
        for value in cls.attrs.get(target.attr.value, ()):
            if self.enclosing_function(value) is init:
                while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                        and value.func.attr.value in ("to", "cuda", "cpu", "train", "eval", "float"):
                    value = value.func.value  # self.model = model.to(device)
                out += [(param, func) for param, func in self._params_reaching(value, value) if func is init]
        return out

    def _compiled_submodule_params(self) -> dict:
        """{(``__init__``, parameter)}: a compiled class stores a constructor
        parameter as a submodule and its compiled code calls it
        (``self.conditioner = conditioner`` ... ``self.conditioner(batch)`` in
        the compiled forward): what callers pass there runs compiled."""
        found: dict = {}
        for name in self.compiled_classes:
            cls = self.classes.get(name)
            init = cls.methods.get("__init__") if cls is not None else None
            if init is None:
                continue
            called = {call.func.attr.value for func in self.compiled_funcs if func.cls is cls for call in func.calls
                      if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                      and call.func.value.value == "self"}
            for attr in called & set(cls.attrs):
                for value in cls.attrs[attr]:
                    if self.enclosing_function(value) is init:
                        for param, func in self._params_reaching(value, value):
                            if func is init:
                                found.setdefault((init, param), True)
        return found

    def _export_compiled_params(self) -> None:
        for (func, param), _v in {**self._compiled_params(), **self._compiled_submodule_params()}.items():
            names = list(func.params)
            if func.cls is not None and func.name == "__init__" and func.parent is None \
                    and self.classes.get(func.cls.name) is func.cls:
                # Engine(model, cfg): positions after `self`
                name, position = func.cls.name, (names.index(param) - 1 if param in names else -1)
            elif func.parent is not None or func.cls is not None or self.functions.get(func.name) is not func:
                continue
            else:
                name, position = func.name, (names.index(param) if param in names else -1)
            forwards = star_forward(self, func, param) if func.cls is None else ""  # runs it on its *args
            self.exported.compiled_params.append(
                (ImportRef("", f"{name}:{position}/{param}"), f"`{name}` compiles its `{param}`{forwards}"))

    def _mark_passed_to_compiling(self) -> None:
        """Classes this file passes to an imported function that compiles that
        parameter (``run(train_ds, test_ds, Net(), ...)`` with
        ``from points.train_eval import run``)."""
        wanted: dict = {}
        registries = []
        for key, why in self.project.compiled_params.items():
            where, _, spec = key.partition(":")
            registry = registry_key(where, spec)
            if registry is not None:  # `registry.get_model_class(name)` compiled in another file
                registries.append((*registry, why))
                continue
            stem, _, function = where.rpartition(".")
            position, _, param = spec.partition("/")
            wanted.setdefault(function, []).append((stem, int(position) if position.lstrip("-").isdigit() else -1,
                                                    param, why))
        if registries:
            mark_registered_classes(self, registries)
        if not wanted:
            return
        self._mark_registered(wanted)
        for call in self.all_calls():
            func = call.func
            name = func.value if isinstance(func, cst.Name) else \
                func.attr.value if isinstance(func, cst.Attribute) else None
            for stem, position, param, why in wanted.get(name, ()):
                if not self._imports_from(func, stem):
                    continue
                arg = self._arg_at(call, position, param)
                source = why.split(", from ")[1] if ", from " in why else strip_mark(why)
                forwarded = forwarded_spec(self, call, why)  # what the helper runs the compiled object on
                for cls, _when in self.model_choices(arg, arg) if arg is not None else ():
                    text = f"compiled forward of `{cls.name}` (compiled by `{name}` in {source})"
                    if isinstance(cls, ImportRef):
                        self._export_choice(cls, text)
                        if forwarded is not None:
                            origin = f"{text}, from {os.path.basename(self.path)}".replace("|", "/")
                            self.exported.compiled_passed.append((cls, f"{forwarded}@{origin}"))
                    else:
                        self._mark_class(cls, text)

    def _mark_registered(self, wanted: dict) -> None:
        """``@register_model("painn") class PaiNN``: the registry that
        ``register_model`` fills is compiled (``MODELS[name](...)`` there)."""
        for cls in self.classes.values():
            for deco in cls.node.decorators:
                func = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
                name = func.value if isinstance(func, cst.Name) else \
                    func.attr.value if isinstance(func, cst.Attribute) else None
                for stem, position, _param, why in wanted.get(name, ()):
                    if position == -1 and _param == "" and self._imports_from(func, stem):
                        source = why.split(", from ")[1] if ", from " in why else why
                        self._mark_class(cls, f"compiled forward of `{cls.name}` (registered with `{name}`, "
                                              f"compiled in {source})")

    def _imports_from(self, func: cst.BaseExpression, stem: str) -> bool:
        """``func`` names a function imported from a module whose last part is ``stem``."""
        if isinstance(func, cst.Name):
            ref = self.imports.get(func.value)
            binding = self.lookup(func.value, func)[0]
            if ref is None or (binding is not None and binding.how != "import"):
                return False
            return ref.module.split(".")[-1] == stem or (not ref.module and ref.level > 0 and stem == "__init__")
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            ref = self.imports.get(func.value.value)
            if ref is not None:
                return ref.name == stem
            module = self.aliases.get(func.value.value)
            return bool(module) and module.split(".")[-1] == stem
        return False

    @staticmethod
    def _arg_at(call: cst.Call, position: int, param: str) -> Optional[cst.BaseExpression]:
        positional = []
        for arg in call.args:
            if arg.keyword is not None:
                if arg.keyword.value == param:
                    return arg.value
                continue
            if arg.star:
                return None
            positional.append(arg.value)
        return positional[position] if 0 <= position < len(positional) else None
