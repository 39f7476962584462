"""Where code runs: "does this line run compiled?" and "once per step?"

``compiled_region(node)`` says why a node runs under torch.compile (the body
of a compiled function, the ``forward`` of a compiled class and the methods
and helpers it calls, a compiled class from another file via ProjectFacts,
library mode) or None; it is None wherever ``never_runs_compiled(node)`` (``unreached_branches.py``:
an eager-only line, a branch no compiled call takes) says the code never runs compiled, and calls made from
eager-only code are not followed. ``hot_region(node)`` says why a
node runs once per training/inference step (the per-iteration body of a
loop that steps an optimizer, calls ``.backward()`` or runs a model, and the
functions it calls). Both are computed once, up front
(``_analyse_regions``), and feed ``exported_facts()``.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from gnnlint.config_targets import CONFIG_CLASS, CONFIG_CLASS_MARK, is_group_ref
from gnnlint.facts import ExportedFacts, ImportRef
from gnnlint.semantic import (compile_facts, fed_builders, graph_collates, graph_models, library_steps, lightning_feeds,
                              nested_feeds, returned_args, returned_tensors,
                              sparse_feeds, submodule_reach, synced_params)
from gnnlint.semantic.called_choices import called_choices, called_method_choices
from gnnlint.semantic.imported_functions import imported_function
from gnnlint.semantic.stored_functions import stored_functions
from gnnlint.semantic.compile_sites import CompileSite
from gnnlint.semantic.compiled_calls import entry_calls, never_run
from gnnlint.semantic.hot_loops import HotLoops
from gnnlint.semantic.callback_hooks import export_step_hooks
from gnnlint.semantic.compiled_overrides import (OVERRIDES, export_abstract_forward, mark_compiled_overrides,
                                                  with_passed)
from gnnlint.semantic.stepped_overrides import export_stepped_overrides
from gnnlint.semantic.default_off_flags import built_only_when_on, export_ctor_switches, never_built, switched_off
from gnnlint.semantic.annotated_calls import annotated_methods, inherited_method, inherited_self_method
from gnnlint.semantic.inherited import (export_compiled_hooks, inherited_forward_base,
                                        mark_compiled_hooks)
from gnnlint.semantic.kinds import MODEL, OPTIMIZER
from gnnlint.semantic.held_modules import HELD_IN, held_by_module, compiled_self
from gnnlint.semantic.model import ClassInfo, FuncInfo, compile_disabled, walk
from gnnlint.semantic.vocab import COMPILE_FUNCS, LIGHTNING_STEP_HOOKS, MESSAGE_PASSING_METHODS, SELF_COMPILED_MARK


class Regions(HotLoops):
    """Compiled / hot / eager-only region questions. Mixed into FileContext; reads the SemanticModel."""

    def _analyse_regions(self) -> None:
        """Compiled and hot regions, computed up front: every region question and the exported facts need them."""
        self.compiled_funcs: dict[FuncInfo, str] = {}
        self.compiled_classes: dict[str, str] = {}  # local class name -> why
        self.compile_sites: list[tuple[cst.CSTNode, CompileSite]] = []
        # compile call -> the class it compiles (ClassInfo, ImportRef, dotted name)
        self.compile_targets: dict[cst.CSTNode, object] = {}
        self.hot_funcs: dict[FuncInfo, str] = {}
        self.hot_loops: dict[cst.CSTNode, str] = {}
        self.exported = ExportedFacts()
        self._compiled_roots: set = set()  # compiled on their own (a compile site, a forward, a fact)
        self._compiled_via: dict = {}  # FuncInfo -> the calls from compiled code that reach it
        self._fact_roots: set = set()  # top-level functions compiled because other files call them compiled
        self._analyse_compiled()
        self._hot_known = False  # step_args.py reads hot callers only once they are all known
        self._analyse_hot()
        self._hot_known = True

    def compiled_region(self, node: cst.CSTNode) -> Optional[str]:
        """Why ``node`` runs under torch.compile, or None."""
        if self.never_runs_compiled(node):  # unreached_branches.py: an eager-only line, a branch no compiled call takes
            return None
        func = self.enclosing_function(node)
        while func is not None:
            why = self.compiled_funcs.get(func)
            if why is not None:
                return self.origin_reaching(node) or why  # the compiled call that takes this branch
            # A nested function (closure) is compiled when its parent is and it
            # is called from it; keep it simple: inherit from the parent.
            func = func.parent
            if func is not None and func not in self.compiled_funcs:
                return None
        return None

    def hot_region(self, node: cst.CSTNode) -> Optional[str]:
        """Why ``node`` runs every training/inference step, or None (not in a branch ``step_unreached`` rules out)."""
        child = node
        for anc in () if self.step_unreached(node) else self.ancestors(node):
            if anc in self.hot_loops and child is getattr(anc, "body", None):
                return self.hot_loops[anc]
            if isinstance(anc, cst.FunctionDef):
                info = self.func_info.get(anc)
                why = self.hot_funcs.get(info) if info is not None else None
                if why is not None:
                    return why
                return None  # a nested function is hot only if it is itself hot
            child = anc
        return None

    def _analyse_compiled(self) -> None:
        # 1. decorators
        for info in list(self.func_info.values()):
            for deco in info.node.decorators:
                target = deco.decorator
                call = target if isinstance(target, cst.Call) else None
                resolved = self.resolve(call.func if call else target)
                partial = self.compile_partial(deco)  # @functools.partial(torch.compile, ...) / @compile_fn
                if partial is not None:
                    resolved, call = self.resolve(partial.args[0].value), call or partial
                if resolved in COMPILE_FUNCS and not (call is not None and compile_disabled(call)):
                    why = f"compiled function `{info.qualname}`"
                    self._mark_compiled_func(info, why)
                    site = self._site_from_call(call, 0, info.qualname, "function", resolved) if call \
                        else CompileSite(0, info.qualname, "function", None, None, False, (), resolved)
                    self.compile_sites.append((deco, site))
        # 2. torch.compile(X) calls
        for call in self.compile_calls:
            api = self.compile_api(call.func) or "torch.compile"
            target = call.args[0].value if call.args and call.args[0].keyword is None else None
            if target is None:
                # torch.compile(fullgraph=True) used as a decorator factory
                continue
            text = self.module.code_for_node(target)
            if self.class_of(target, call) is not None and never_run(self, call):
                # only the wrapper's other methods run (`self.ae.encode(x)`): eager, no compiled forward
                self.compile_sites.append((call, self._site_from_call(call, 0, text, "class", api)))
                continue
            self._mark_choices(target, call)
            kind = self._mark_compiled_target(target, call, text)
            self.compile_sites.append((call, self._site_from_call(call, 0, text, kind, api)))
            if kind == "class":
                self.compile_targets[call] = self.class_of(target, call)
        # 3. model.compile()
        for call in self.method_compile_calls:
            receiver = call.func.value  # type: ignore[union-attr]
            rkind = self.kind(receiver)
            cls = self.class_of(receiver, call)
            choices = self.model_choices(receiver, call) if cls is None else []
            if rkind != MODEL and cls is None and not choices:
                continue
            self._mark_choices(receiver, call)
            text = self.module.code_for_node(receiver)
            self._mark_class_target(cls)
            self.compile_sites.append((call, self._site_from_call(call, 0, text, "class", "Module.compile")))
            self.compile_targets[call] = cls
        # 4. library mode: every Module forward
        if self.options.assume_compiled == "modules":
            for cls in self.class_info.values():
                if self.is_module_class(cls):
                    self._mark_class(cls, f"forward of module `{cls.name}` (assume-compiled = \"modules\")")
        # 5. project facts: classes passed to another file's function that compiles them,
        # classes/functions compiled in other files
        self._mark_passed_to_compiling()
        for name, why in self.project.compiled.items():
            if name == "*" or name.endswith("()") or (name.endswith("]") and "()[" in name):
                self._mark_compiled_choices(name, why)
            elif name in self.classes:
                forward = self.method_of(self.classes[name], "forward")
                if name not in self.compiled_classes and forward is not None and forward.cls is self.classes[name]:
                    self._fact_roots.add(forward)  # its optional branches run only for what the callers pass
                self._mark_class(self.classes[name], why)
            elif name.partition(":")[0] in self.classes:  # "SPACE:module": what the class stores there
                self._mark_held(self.classes[name.partition(":")[0]], name.partition(":")[2], why)
            elif name.partition(".")[0] in self.classes:  # `torch.compile(calc.model)` in another file
                self._mark_member(self.classes[name.partition(".")[0]], name.partition(".")[2], why)
            elif name in self.functions:
                self._fact_roots.add(self.functions[name])
                self._mark_compiled_func(self.functions[name], why)
            elif name in self.imports and name[:1].isupper() and CONFIG_CLASS_MARK in why:
                # a package's __init__ re-exporting a class a config names (`_target_: pkg.Encoder`)
                self.exported.compiled.append((self.imports[name], why))
        mark_compiled_hooks(self)  # a subclass's overrides an imported base's compiled forward calls
        mark_compiled_overrides(self)  # what a subclass's override of an imported base's method returns

    def _mark_member(self, cls: ClassInfo, attr: str, why: str) -> None:
        """Another file compiled ``instance.attr``: that method of the class, or
        what the class stores in that attribute -- not the class's own forward."""
        method = self.method_of(cls, attr)
        if method is not None:
            self._mark_compiled_func(method, why)
        elif attr in cls.attrs:
            self._mark_held(cls, attr, why)
        elif (ref := inherited_method(self, cls, attr)) is not None:
            self.exported.compiled.append((ref, why))  # `torch.compile(sim.run)`: `run` of an imported base

    def _mark_held(self, cls: ClassInfo, attr: str, why: str) -> None:
        for value in self.class_attr_values(cls, attr):
            for choice, when in self.model_choices(value, value):
                text = self._choice_why(choice, when) + f" (held in `{cls.name}.{attr}`)"
                self._mark_class(choice, text) if isinstance(choice, ClassInfo) else self._export_choice(choice, text)

    def _mark_compiled_target(self, target: cst.BaseExpression, call: cst.Call, text: str) -> str:
        # optimizer.step / opt.step
        if isinstance(target, cst.Attribute):
            owner_kind = self.kind(target.value)
            if target.attr.value == "step" and (owner_kind == OPTIMIZER or "opt" in (self.last_part(target.value) or "")):
                return "optimizer_step"
            cls = self.class_of(target.value, call)
            own = self._compiles_own_method(target, call)
            if own is not None:  # self.forward = torch.compile(self.forward) in the class's own methods
                cls = own
            if isinstance(cls, ClassInfo):
                method = self.method_of(cls, target.attr.value)
                if method is not None and own is not None and method.name == "forward":
                    # every instance runs compiled: its forward and the submodules it calls
                    self._mark_class(cls, f"compiled forward of `{cls.name}` (compiled by `{cls.name}{SELF_COMPILED_MARK}")
                    return "method"
                if method is not None:
                    self._mark_compiled_func(method, f"compiled method `{method.qualname}`")
                    return "method"
                ref = inherited_method(self, cls, target.attr.value) if own is None else None
                if ref is not None:  # `torch.compile(sim.run)`, `run` defined by an imported base
                    # (the site's kind is judged as before: the base may hold a module there, not a method)
                    self.exported.compiled.append((ref, f"compiled method `{cls.name}.{target.attr.value}`"))
            elif isinstance(cls, ImportRef):
                self.exported.compiled.append((ImportRef(cls.module, f"{cls.name}.{target.attr.value}", cls.level),
                                               f"compiled method `{cls.name}.{target.attr.value}`"))
                return "method"
        if isinstance(target, cst.Name):
            binding, _ = self.lookup(target.value, call)
            if binding is not None and binding.how == "def":
                info = self.func_info.get(binding.node)  # type: ignore[arg-type]
                if info is not None:
                    self._mark_compiled_func(info, f"compiled function `{info.qualname}`")
                    return "function"
            if binding is None and target.value in self.functions:
                self._mark_compiled_func(self.functions[target.value],
                                         f"compiled function `{target.value}`")
                return "function"
        cls = self.class_of(target, call) or compiled_self(self, target, call)  # `return torch.compile(self)`
        if cls is not None:
            self._mark_class_target(cls, call)
            return "class"
        ref = imported_function(self, target, call)  # `torch.compile(pkg.radius)`: its body in pkg's file
        if ref is not None:
            self.exported.compiled.append((ref, f"compiled function `{ref.name}`"))
            self._export_passed(ref, None)
            return "function"
        if self.kind(target) == MODEL:
            return "class"
        return "unknown"

    def _compiles_own_method(self, target: cst.Attribute, call: cst.Call) -> Optional[ClassInfo]:
        """``self.forward = torch.compile(self.forward)`` (or
        ``torch.compile(options=...)(self.forward)``) in a method of a class:
        the class compiles its own method, for every instance."""
        if not (isinstance(target.value, cst.Name) and target.value.value == "self"):
            return None
        func = self.enclosing_function(call)
        return func.cls if func is not None and func.parent is None else None

    def _mark_choices(self, target: cst.BaseExpression, call: cst.Call) -> None:
        """Every class the compiled value may be (models chosen at run time:
        both branches of an ``if``, ``MODELS[name]``, a factory, a compiled
        parameter's callers), each with the condition that picks it."""
        if isinstance(target, cst.Attribute) and target.attr.value == "step":
            return
        entries = None
        held = None
        for cls, when in self.model_choices(target, call):
            held = held_by_module(self, call) if held is None else held  # a submodule: its forward, not its steps
            why = self._choice_why(cls, when) + held
            if isinstance(cls, ClassInfo):
                self._mark_class(cls, why)
            else:
                if cls.module == OVERRIDES:  # a template method's compiled result (compiled_overrides.py)
                    self._export_choice(cls, with_passed(self, call, why))
                    continue
                self._export_choice(cls, why)
                if not cls.name.startswith("@") and cls.name[:1].isupper():
                    # what this file's calls of it pass: the defining file's optional inputs (compiled_calls.py)
                    entries = entry_calls(self, call) if entries is None else entries
                    for entry in entries or ():
                        self._export_passed(cls, entry, why)

    def _export_choice(self, ref: ImportRef, why: str) -> None:
        """Tell the file defining ``ref`` that it is compiled; ``@register``
        (a registry filled by a decorator of this file): the files that import
        the decorator are told (their decorated classes are compiled)."""
        if ref.module == OVERRIDES:  # what a base's method returns: its subclasses' files are told
            self.exported.compiled_overrides.append((ImportRef("", ref.name), why))
        elif ref.name.startswith("@"):
            self.exported.compiled_params.append((ImportRef("", f"{ref.name[1:]}:@/"), why))
        else:
            self.exported.compiled.append((ref, why))

    def _mark_choice(self, cls, when, why: str) -> None:
        """One of ``model_choices``' answers is compiled (``why`` says where from)."""
        text = self._choice_why(cls, when) + f", {why}"
        self._mark_class(cls, text) if isinstance(cls, ClassInfo) else self._export_choice(cls, text)

    @staticmethod
    def _choice_why(cls, when) -> str:
        name = cls.name
        if isinstance(cls, ImportRef) and cls.module == OVERRIDES:
            return f"compiled forward of the model `self.{cls.name.partition('.')[2]}()` returns" \
                + (f" (when {when})" if when else "")
        if is_group_ref(cls):  # hydra.utils.instantiate(cfg.<name>): the engine names the classes
            return f"compiled forward of {CONFIG_CLASS}" + (f" (when {when})" if when else "")
        if name.startswith("@") and "." in name:  # registry.get_model_class(name): registries.py
            return f"compiled forward of a class registered in `{name[1:].partition('.')[0]}`, chosen by name"
        if name == "*":  # getattr(module, name): any class of that module
            return f"compiled forward of a class of `{cls.module or '.'}` chosen by name at run time"
        if name.endswith("()") or (name.endswith("]") and "()[" in name):  # what an imported factory returns
            return f"compiled forward of a model `{name.partition('()')[0]}()` returns" \
                + (f" (when {when})" if when else "")
        return f"compiled forward of `{name.replace(':', '.')}`" + (f" (when {when})" if when else "")

    def _mark_class_target(self, cls, call: Optional[cst.Call] = None) -> None:
        if isinstance(cls, ClassInfo):
            self._mark_class(cls, f"compiled forward of `{cls.name}`" + held_by_module(self, call))
        elif isinstance(cls, ImportRef):
            why = f"compiled forward of `{cls.name}`" + held_by_module(self, call)
            self.exported.compiled.append((cls, why))
            entries = entry_calls(self, call) if call is not None else None
            if entries is None:
                self._export_passed(cls, None)  # compiled here, run who knows where: called with anything
            for entry in entries or ():
                self._export_passed(cls, entry, why)  # every call that runs it (compiled_calls.py)

    def _may_propagate(self, cls: ClassInfo) -> bool:
        """PyG's ``propagate`` may run ``message``/``aggregate``/...: not when the class and its
        bases in this file derive only from ``nn.Module`` (those methods run when its own
        methods call them, and the callee walk follows those calls)."""
        for current in self.local_lineage(cls):
            for base in current.bases:
                if base.split(".")[-1] not in self.classes and (self.resolve_dotted(base) or base) not in (
                        "torch.nn.Module", "torch.nn.modules.module.Module"):
                    return True
        return False

    def _dispatched_hooks(self, cls: ClassInfo) -> tuple:
        """The hooks (``message_and_aggregate``...) the class's forward reaches through
        ``self.<method>(...)`` calls, each resolved on the class (an override in a subclass
        runs when its base's forward calls it)."""
        reached = self._self_reached(cls)
        return tuple(h for h in MESSAGE_PASSING_METHODS if self.method_of(cls, h) in reached)

    def _self_reached(self, cls: ClassInfo) -> set:
        """The methods the class's forward reaches through ``self.<method>(...)`` calls,
        each resolved on the class: a local base's forward calling ``self._build(...)``
        runs the subclass's override (template methods)."""
        key = ("self_reached", id(cls))
        if key in self._memo:
            return self._memo[key]
        reached, todo = set(), ["forward", "__call__"]
        while todo:
            method = self.method_of(cls, todo.pop())
            if method is None or method in reached:
                continue
            reached.add(method)
            todo += [call.func.attr.value for call in method.calls if isinstance(call.func, cst.Attribute)
                     and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
                     and self.enclosing_function(call) is method and not self.is_eager_only(call)]
        self._memo[key] = reached
        return reached

    def _mark_class(self, cls: ClassInfo, why: str) -> None:
        if cls.name in self.compiled_classes:
            return
        self.compiled_classes[cls.name] = why
        hooks = MESSAGE_PASSING_METHODS if self._may_propagate(cls) else self._dispatched_hooks(cls)
        for entry in ("forward",) + hooks + ("__call__",):
            method = self.method_of(cls, entry)
            if method is not None:
                self._mark_compiled_func(method, f"compiled forward of `{cls.name}`"
                                         if why.startswith("compiled") and "(when " not in why else why)
        if len(list(self.local_lineage(cls))) > 1:  # a local base's forward runs this class's overrides of its hooks
            for method in self._self_reached(cls):
                if method.cls is cls and method.name != "__init__":
                    self._mark_compiled_func(method, f"compiled forward of `{cls.name}`")
        if why.startswith(f"compiled forward of `{cls.name}`") and not any(
                how in why for how in ("(submodule of", "(inherited from")):
            # only a class compiled itself (`model: ModelBase`, and its abstract subclasses in turn);
            # not a base marked for a compiled subclass's inherited forward -- that would compile
            # every sibling (physicsnemo's `Module`: 27 false findings, judged)
            export_abstract_forward(self, cls, why)  # `model: ModelBase` compiled: its subclasses' forwards
        base = inherited_forward_base(self, cls)  # the forward is a base class's, in another file
        if base is not None and base.name[:1].isupper():
            self.exported.compiled.append((base, f"compiled forward of `{cls.name}` (inherited from `{base.name}`)"))
        if "(submodule of" not in why and HELD_IN not in why and self._is_lightning_module(cls):
            # Lightning's Trainer compiles a compiled LightningModule's step
            # methods with its forward (lightning.pytorch.utilities.compile.from_compiled)
            for hook in LIGHTNING_STEP_HOOKS:
                method = self.method_of(cls, hook)
                if method is not None:
                    self._mark_compiled_func(method, f"compiled `{cls.name}.{hook}` (Lightning compiles the step "
                                                     f"methods of a compiled LightningModule)")
        if "(submodule of" not in why and HELD_IN not in why:  # the step hooks are a library base's: the step method they run
            for method, step_why in library_steps.library_step_methods(self, cls):
                self._mark_compiled_func(method, step_why)
        # submodules built in __init__ run inside the compiled forward too,
        # also inside ModuleList / Sequential / ModuleDict containers (not one only eager methods run)
        elsewhere = library_steps.forward_elsewhere(self, cls)  # an imported base's forward may run any module
        attrs = [[one for one in v if not built_only_when_on(self, cls, one)] for a, v in cls.attrs.items()
                 if elsewhere and library_steps.left_to_base(self, cls, a, v)
                 or not submodule_reach.eager_only_submodule(self, cls, a)]
        for values in attrs + [self._appended_modules(cls), library_steps.base_stored_args(self, cls)]:
            for value in self._container_elements(values):
                sub = self.class_of(value, value)
                if isinstance(sub, ClassInfo) and sub is not cls:
                    self._mark_class(sub, f"compiled forward of `{sub.name}` (submodule of `{cls.name}`)")
                elif isinstance(sub, ImportRef):
                    self.exported.compiled.append((sub, f"compiled forward of `{sub.name}` (submodule of `{cls.name}`)"))
                elif sub is None:  # chosen at run time: getattr(encoders, cfg.name)(...), ENCODERS[name](...)
                    for choice, when in self.model_choices(value, value):  # a factory's choice: when it builds it
                        why = self._choice_why(choice, when) \
                            + f" (submodule of `{cls.name}`)"
                        if isinstance(choice, ClassInfo) and choice is not cls:
                            self._mark_class(choice, why)
                        elif isinstance(choice, ImportRef):
                            self._export_choice(choice, why)
        for attr in cls.attrs:  # `self.terms = terms`, a list a builder fills (`terms.append(ZBL(...))`)
            for choice, when in self.handed_items(cls, attr) if not submodule_reach.eager_only_submodule(
                    self, cls, attr) else ():
                why = self._choice_why(choice, when) + f" (submodule of `{cls.name}`)"
                if isinstance(choice, ClassInfo) and choice is not cls:
                    self._mark_class(choice, why)
                elif isinstance(choice, ImportRef):
                    self._export_choice(choice, why)

    def _is_lightning_module(self, cls: ClassInfo) -> bool:
        return any(base.split(".")[-1] == "LightningModule" for c in self.local_lineage(cls) for base in c.bases)

    def _appended_modules(self, cls: ClassInfo) -> list:
        """What a class's methods append to its containers:
        ``self.blocks = nn.ModuleList()`` then ``self.blocks.append(block)``."""
        out = []
        for method in cls.methods.values():
            for call in method.calls:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend") and call.args \
                        and isinstance(func.value, cst.Attribute) and isinstance(func.value.value, cst.Name) \
                        and func.value.value.value == "self" and func.value.attr.value in cls.attrs:
                    out.append(call.args[0].value)
        init = cls.methods.get("__init__")
        held = {a for a, values in cls.attrs.items()
                if any(isinstance(v, cst.Call) and self.last_part(v.func) == "ModuleDict" for v in values)}
        if init is not None and held:  # `self.embeddings["onehot"] = OneHotEncoding(...)` into a ModuleDict
            walk(init.node.body, lambda node, _p: out.append(node.value) if isinstance(node, cst.Assign)
                 and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript)
                 and isinstance(node.targets[0].target.value, cst.Attribute)
                 and isinstance(node.targets[0].target.value.value, cst.Name)
                 and node.targets[0].target.value.value.value == "self"
                 and node.targets[0].target.value.attr.value in held else None)
        return out

    _CONTAINERS = ("ModuleList", "Sequential", "ModuleDict", "HeteroConv")

    def _container_elements(self, values, depth: int = 0) -> list:
        """``values`` plus, for module containers, the module expressions in
        them: ``ModuleList(Conv(...) for _ in range(3))``, ``Sequential(a, b)``,
        ``ModuleDict({"a": A()})``, PyG's ``Sequential("x", [(Conv(...), "...")])``."""
        out = []
        for value in values:
            out.append(value)
            if depth >= 4 or not isinstance(value, cst.Call) or not self._is_container_call(value):
                continue
            todo = [a.value for a in value.args if a.keyword is None]
            while todo:
                expr = todo.pop()
                if isinstance(expr, cst.Call) and self._is_container_call(expr):
                    out += self._container_elements([expr], depth + 1)
                elif isinstance(expr, (cst.Call, cst.Name)):  # a Name: `ModuleList(input_modules)`, a parameter
                    out.append(expr)
                elif isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
                    todo += [e.value for e in expr.elements if isinstance(e, cst.Element)]
                elif isinstance(expr, cst.Dict):
                    todo += [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
                elif isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
                    todo.append(expr.elt)
                elif isinstance(expr, cst.DictComp):
                    todo.append(expr.value)
        return out

    def _is_container_call(self, call: cst.Call) -> bool:
        """``nn.ModuleList(...)``, also a local subclass of one (``class Hooked(nn.ModuleList)``)."""
        name = self.last_part(call.func) or ""
        if name in self._CONTAINERS:
            return True
        cls = self.classes.get(name) if isinstance(call.func, cst.Name) else None
        return cls is not None and any(b.split(".")[-1] in self._CONTAINERS
                                       for c in self.local_lineage(cls) for b in c.bases)

    def _mark_compiled_func(self, info: FuncInfo, why: str, via: Optional[cst.Call] = None) -> None:
        if via is None:
            self._compiled_roots.add(info)
        else:
            self._compiled_via.setdefault(info, []).append(via)
        if info in self.compiled_funcs:
            return
        self.compiled_funcs[info] = why
        for callee, call in self._callees(info):
            if isinstance(callee, FuncInfo):
                self._mark_compiled_func(callee, why, call)
            elif isinstance(callee, ClassInfo):
                self._mark_class(callee, f"compiled forward of `{callee.name}`")
            elif isinstance(callee, ImportRef):
                self.exported.compiled.append((callee, why))
                self._export_passed(callee, call, why)

    def _callees(self, info: FuncInfo) -> Iterator[tuple[object, cst.Call]]:
        """Local functions, methods and model classes a function calls."""
        for call in info.calls:
            if self.enclosing_function(call) is not info:
                continue  # calls inside nested defs belong to them
            if self.is_eager_only(call) or self.optional_input_unreached(call) or switched_off(self, call):
                continue  # `if not is_compiling(): helper(x)`, a call in a torch.compiler.disable function,
                # `else: self._simple_pooling(x)` of a mode no construction changes (default_off_flags.py)
            local = self.local_callee(call) or library_steps.super_method(self, call)
            if isinstance(local, FuncInfo):
                yield local, call
                continue
            if isinstance(local, ClassInfo):
                init = local.methods.get("__init__")
                if init is not None and not self.is_module_class(local):
                    yield init, call  # a helper object built in compiled code: its __init__ runs there
                continue  # instantiation, not a forward call
            # self.submodule(...) / model(...): the forward of its class
            func = call.func
            if never_built(self, func, call):
                continue  # `if magnitude_zscore: self.mag = Mag()`, a switch nothing turns on
            if isinstance(func, (cst.Name, cst.Attribute)):
                cls = self.class_of(func, call)
                if isinstance(cls, ClassInfo) and self.kind(func) == MODEL or isinstance(cls, ClassInfo):
                    yield cls, call
                elif isinstance(cls, ImportRef) and cls.name[:1].isupper():
                    yield cls, call
                elif cls is None and (chosen := called_choices(self, func, call)):
                    yield from chosen  # self.encoder(...) whose class a factory or a config chooses
                elif cls is None and (chosen := stored_functions(self, func, call)):
                    yield from chosen  # self.centralize(...) of `self.centralize = partial(centralize, ...)`
                elif cls is None and (chosen := called_method_choices(self, func, call)):
                    yield from chosen  # self.encoder.sample(...): that method of each class it may hold
                elif cls is None and (refs := annotated_methods(self, func, call)):
                    yield from ((ref, call) for ref in refs)  # gflownet.loss(...) of `gflownet: Base`
                elif cls is None and (ref := inherited_self_method(self, func, call)):
                    yield ref, call  # self.get_scores(...): the method an imported base defines
                elif isinstance(func, cst.Name) and func.value in self.imports and cls is None \
                        and self.lookup(func.value, call)[0] is None:
                    yield self.imports[func.value], call  # an imported helper function
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value in self.imports and cls is None:
                    # `from . import ops` ... `ops.check_finite(x)`: a function of a sibling module
                    ref = self.imports[func.value.value]
                    if ref.name and ref.name[:1].islower() and "." not in ref.name:
                        module = f"{ref.module}.{ref.name}" if ref.module else ref.name
                        yield ImportRef(module, func.attr.value, ref.level), call
                # model.encode(...) on a local class instance
                if isinstance(func, cst.Attribute) and not isinstance(func.value, cst.Call):
                    owner = self.class_of(func.value, call)
                    if isinstance(owner, ClassInfo) and not (isinstance(func.value, cst.Name)
                                                            and func.value.value == "self"):
                        method = self.method_of(owner, func.attr.value)
                        if method is not None:
                            yield method, call

    def exported_facts(self) -> ExportedFacts:
        if not getattr(self, "_fed_exported", False):
            self._fed_exported = True
            fed_builders.export_fed(self)
            nested_feeds.export_nested_fed(self)
            compile_facts.export(self)
            self._export_compiled_args()
            self._export_compiled_params()
            self._export_compiled_instances()
            self._forward_reexports()
            self._export_stepped()
            self._export_framework_compiled()
            lightning_feeds.export(self)
            graph_models.export(self)
            export_compiled_hooks(self)
            export_step_hooks(self)
            export_stepped_overrides(self)
            self.export_returned_functions()
            self.export_compiled_returns()
            synced_params.export_synced_params(self)
            returned_tensors.export_returned_tensors(self)
            graph_collates.export_graph_collates(self)
            returned_args.export_returned_args(self)
            export_ctor_switches(self)
            self.export_fed_args()
            sparse_feeds.export_sparse_fed(self)
            self._export_compile_flags()
            self._export_compile_switches()
        return self.exported

    _REEXPORTED_KINDS = ("compiled", "hot", "fed", "fullgraph", "swept", "compiled_passed", "sparse_fed", "stepped",
                         "stepped_args")
    # through `from .x import *` (a name not bound here) only what the compiled-region rules need
    _STAR_REEXPORTED_KINDS = ("compiled", "fullgraph", "compiled_passed")

    def _forward_reexports(self) -> None:
        """A fact about a name this file only imports (``from .schnet import
        SchNet`` in a package's ``__init__.py``, which the importer's
        ``from .models import SchNet`` lands on) travels on to the file that
        defines it."""
        for kind in self._REEXPORTED_KINDS:
            for name, why in getattr(self.project, kind).items():
                head, dot, rest = name.partition(".")
                if name == "*" or "()" in name or head in self.classes or head in self.functions:
                    continue  # answered here (choices.py answers "*" and "build()")
                ref = self.imports.get(head)
                if ref is None and kind in self._STAR_REEXPORTED_KINDS:
                    # `from .conv import *` in a package's __init__.py: the name comes from one of them
                    for star in self.star_imports:
                        getattr(self.exported, kind).append((ImportRef(star.module, name, star.level), why))
                    continue
                if ref is None or not ref.name or ref.module.split(".")[0] in ("torch", "torch_geometric") \
                        and not ref.level:
                    continue
                getattr(self.exported, kind).append((ImportRef(ref.module, ref.name + dot + rest, ref.level),
                                                     why))
