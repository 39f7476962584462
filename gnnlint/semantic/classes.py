"""What class is this value an instance of? (``class_of``, ``class_name``)

A local ClassInfo, an ImportRef for an imported class, a dotted name for a
library class, or None -- through ``model.to(device)`` / ``.eval()`` (which keep
the instance unless the class's own method returns something else),
``torch.compile`` / ``to_hetero`` / ``DataParallel`` wrappers, local factories,
bindings, the arguments every caller passes for a parameter, ``self.x`` and
``model.encoder`` attributes, and the modules a loop walks (``for conv in
self.convs``). Out of ``kinds.py`` ("is this value a tensor?"), which asks it.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.typed_items import item_class, mapping_value_class
from gnnlint.semantic.attr_reaching import attr_values_reaching
from gnnlint.semantic.kinds import _MODEL_METHODS_SELF
from gnnlint.semantic.model import ClassInfo, FuncInfo
from gnnlint.semantic.vocab import COMPILE_FUNCS

# Top-level packages that are libraries, not project modules (``np.Foo(...)``, ``T.ToSparseTensor()``).
_LIBRARIES = frozenset(("torch", "torch_geometric", "torchvision", "numpy", "np", "dgl", "lightning",
                        "pytorch_lightning", "transformers", "timm", "e3nn", "torch_scatter", "torch_sparse",
                        "torch_cluster", "math", "random", "time", "os", "json", "pandas", "sklearn", "scipy",
                        "statistics", "collections", "typing", "dataclasses", "functools", "itertools",
                        "enum", "abc", "pathlib", "logging", "torchmetrics", "hydra", "omegaconf", "jax",
                        "tensorflow", "ase", "rdkit", "pymatgen", "wandb", "matplotlib", "torchdrug"))


class Classes:
    """Mixin: the class a value is an instance of."""

    def class_of(self, expr: Optional[cst.CSTNode], at: Optional[cst.CSTNode] = None, depth: int = 0):
        """The class an expression is an instance of: a local ClassInfo, an
        ImportRef for an imported class, a dotted name for a library class,
        or None."""
        if expr is None or depth > 8:
            return None
        if isinstance(expr, cst.Call):
            func = expr.func
            # model.to(device) / .eval() / .cuda() keep the instance
            if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS_SELF:
                owner = self.class_of(func.value, at, depth + 1)
                own = self.method_of(owner, func.attr.value) if isinstance(owner, ClassInfo) else None
                if own is None or all(_returns_self(r) for r in own.returns):
                    return owner
                return None  # a class's own `train(graph)` returns what it returns (a loss)
            resolved = self.resolve(func) or ""
            if resolved in COMPILE_FUNCS or self.compile_api(func) or self.wraps_module(expr):
                first = expr.args[0].value if expr.args else None
                return self.class_of(first, at, depth + 1)
            local = self.local_callee(expr)
            if isinstance(local, ClassInfo):
                return local
            built = self._alternate_constructor(func, expr)
            if built is not None:
                return built
            if isinstance(local, FuncInfo) and local.returns and not local.is_async:
                # a factory: `def build(...): return DegreeAugmented(gnn)`
                found = {self.class_of(r.value, r.value, depth + 1) if r.value is not None else None
                         for r in local.returns}
                if len(found) == 1:
                    only = found.pop()
                    if isinstance(only, ClassInfo):
                        return only
            if isinstance(func, cst.Name) and func.value in self.imports and func.value[:1].isupper():
                return self.imports[func.value]
            in_module = self._module_class(func, at or expr)
            if in_module is not None:
                return in_module
            if resolved and resolved[:1] != "" and (self.last_part(func) or "")[:1].isupper():
                return resolved
            return None
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or) \
                and isinstance(expr.left, cst.Name) and isinstance(expr.right, cst.Call):
            # `self.train_step = train_step or DefaultTrainStep()`: what is given, else the default
            return self.class_of(expr.left, at or expr, depth + 1) or self.class_of(expr.right, at, depth + 1)
        if isinstance(expr, cst.Name):
            binding, func = self.lookup(expr.value, at or expr)
            if binding is not None and binding.how == "param" and func is not None and depth < 3:
                return self._param_class_from_callers(binding.node, func, depth)
            if binding is not None and binding.how in ("iter", "iter_unpack") and binding.value is not None:
                return self._element_class(binding, depth)  # for conv in self.convs: ...
            if binding is None or binding.how != "assign":
                return None
            return self.class_of(binding.value, binding.value, depth + 1)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.enclosing_class(at or expr)
            if cls is None:
                return None
            values = attr_values_reaching(self, cls, expr.attr.value, at or expr)
            for value in values:
                found = self.class_of(value, value, depth + 1)
                if found is not None:
                    return found
            return self._annotated_attr_class(values)
        elif isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute):
            return self._self_container_class(expr.value, depth)  # self.layers[i]
        elif isinstance(expr, cst.Attribute) and depth < 4:
            # model.encoder, for `model = Net()` of a local class: what Net stores there
            owner = self.class_of(expr.value, at or expr, depth + 1)
            if isinstance(owner, ClassInfo):
                for value in self.class_attr_values(owner, expr.attr.value):
                    found = self.class_of(value, value, depth + 1)
                    if found is not None:
                        return found
        return None

    def wraps_module(self, call: cst.Call) -> bool:
        """``to_hetero(model, metadata)`` / ``DataParallel(model)``: a wrapper
        whose calls run its first argument's forward (PyG's heterogeneous copy
        runs each submodule of the traced forward; DP / DDP the module itself)."""
        resolved = self.resolve(call.func) or ""
        return resolved.endswith((".to_hetero", ".to_hetero_with_bases")) or resolved in ("to_hetero", "DataParallel") \
            or resolved.endswith(("DataParallel", "DistributedDataParallel"))

    def _alternate_constructor(self, func: cst.BaseExpression, at: cst.CSTNode):
        """``Net.load_from_checkpoint(path)`` (Lightning's classmethod builds
        an instance of the class it is called on) and a local class's own
        classmethod returning ``cls(...)`` (``Net.from_config(cfg)``): that
        class, local or imported."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value[:1].isupper()):
            return None
        name, attr = func.value.value, func.attr.value
        binding, _scope = self.lookup(name, at)
        if (binding is None or binding.how == "import") and name in self.imports:
            ref = self.imports[name]
            return ref if attr in _CHECKPOINT_LOADERS and ref.name[:1].isupper() else None
        if binding is None:
            owner = self.classes.get(name)
        elif binding.how == "class":
            owner = self.class_info.get(binding.node)
        else:
            return None
        if owner is None:
            return None
        if attr in _CHECKPOINT_LOADERS and self.method_of(owner, attr) is None:
            return owner
        method = owner.methods.get(attr)
        return owner if method is not None and self.builds_cls(method) else None

    def builds_cls(self, method: FuncInfo) -> bool:
        """Is this a classmethod every return of which is ``cls(...)``, or a
        name bound only to ``cls(...)`` in it (``model = cls(**config);
        model.load_state_dict(sd); return model``)?"""
        if not method.returns or not _is_classmethod(method.node):
            return False
        first = next(iter(method.params), None)

        def base(value):
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in _MODEL_METHODS_SELF:
                value = value.func.value  # cls(...).to(device), model.eval()
            return value

        def is_cls_call(value) -> bool:
            value = base(value)
            return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == first

        for ret in method.returns:
            value = base(ret.value)
            if isinstance(value, cst.Name):
                bound = method.bindings.get(value.value) or []
                if not bound or not all(b.how == "assign" and is_cls_call(b.value) for b in bound):
                    return False
            elif not is_cls_call(value):
                return False
        return first is not None

    def _annotated_attr_class(self, values: list) -> Optional[ImportRef]:
        """``self.taskflow: TaskFlow = cfg.taskflow`` (a value nothing follows): the one
        project class the annotations name, imported (``from .taskflow import TaskFlow``)."""
        found = set()
        for value in values:
            stmt = self.parent.get(value)
            ann = stmt.annotation.annotation if isinstance(stmt, cst.AnnAssign) and stmt.value is value else None
            ref = self.imports.get(ann.value) if isinstance(ann, cst.Name) and ann.value[:1].isupper() else None
            if ref is None or not ref.name[:1].isupper() or (not ref.level and ref.module.split(".")[0] in _LIBRARIES):
                return None
            found.add(ref)
        return found.pop() if len(found) == 1 else None

    def _module_class(self, func: cst.BaseExpression, at: cst.CSTNode) -> Optional[ImportRef]:
        """``conv.Conv(16)`` with the project module imported (``from pkg.layers import conv``,
        ``from . import conv``, ``import pkg.layers.conv as conv``): that module's class, as
        the file defining it will be told (not a library's dotted name)."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.attr.value[:1].isupper() and not func.attr.value.isupper()):
            return None
        owner = func.value.value
        ref = self.imports.get(owner)
        if ref is not None:
            if not ref.name[:1].islower() or "." in ref.name:
                return None  # `from pkg import Models`: a class, not a module
            module, level = (f"{ref.module}.{ref.name}" if ref.module else ref.name), ref.level
        else:
            module, level = self.aliases.get(owner) or "", 0
        if not module or not level and module.split(".")[0] in _LIBRARIES:
            return None
        binding, _scope = self.lookup(owner, at)
        if binding is not None and binding.how != "import":
            return None
        return ImportRef(module, func.attr.value, level)

    def _element_class(self, binding, depth: int):
        """The one class of the modules a loop walks: ``for conv in self.convs``,
        ``for i, conv in enumerate(self.convs)`` over ``ModuleList([Conv() ...])``."""
        container = binding.value
        if binding.how == "iter_unpack":
            enumerated = isinstance(container, cst.Call) and self.resolve(container.func) in (
                "enumerate", "builtins.enumerate")
            if enumerated and container.args and binding.index == 1:
                container = container.args[0].value
            elif not enumerated and binding.index >= 0:
                # `for code, stage in self.stages` over `list[tuple[int, Stage]]`, `for k, m in mods.items()`
                return self._unpacked_item_class(container, binding.index, depth)
            else:
                return None
        return self._self_container_class(container, depth) or item_class(self, container, container)

    def _unpacked_item_class(self, container: cst.BaseExpression, index: int, depth: int):
        """The class at ``index`` of the items a loop unpacks, by the annotation of the parameter
        they come from (typed_items.py), also when a class stores it (``self.stages = stages``)."""
        items = isinstance(container, cst.Call) and isinstance(container.func, cst.Attribute) \
            and container.func.attr.value == "items" and not container.args
        held = container.func.value if items else container
        if not (isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name) and held.value.value == "self"):
            return item_class(self, container, container, index=index)
        cls = self.enclosing_class(held)
        if cls is None:
            return None
        values = self.class_attr_values(cls, held.attr.value)
        typed = {(mapping_value_class(self, v, v) if index == 1 else None) if items
                 else item_class(self, v, v, index=index) for v in values}
        return typed.pop() if len(typed) == 1 else None

    def _self_container_class(self, container: cst.BaseExpression, depth: int):
        """The one class of the modules in ``self.<attr>``: ``ModuleList([Conv() ...])``, or
        ``ModuleList()`` filled by ``self.<attr>.append(Conv())``."""
        if not (isinstance(container, cst.Attribute) and isinstance(container.value, cst.Name)
                and container.value.value == "self"):
            return None
        cls = self.enclosing_class(container)
        if cls is None:
            return None
        attr = container.attr.value

        def compute():
            values = self.class_attr_values(cls, attr)
            appended = [call.args[0].value for method in cls.methods.values() for call in method.calls
                        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "append"
                        and call.args and _is_self_attr(call.func.value, attr)]
            found = {self.class_of(e, e, depth + 1) for e in self._container_elements(values) + appended
                     if e not in values}
            if len(found) == 1 and isinstance(next(iter(found)), (ClassInfo, ImportRef)):
                return found.pop()
            typed = {item_class(self, v, v) for v in values}  # `outputs: List[ModelOutput]` stored (typed_items.py)
            return typed.pop() if len(typed) == 1 and not appended else None
        return self._memoised((cls.node, attr, "element class"), compute, None)

    def class_name(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> Optional[str]:
        """The dotted name of the class ``expr`` is an instance of (``class_of`` as text), or None."""
        try:
            return full_name(self.class_of(expr, at or expr))
        except RecursionError:  # pragma: no cover - defensive
            return None

    def _param_class_from_callers(self, param, func: FuncInfo, depth: int):
        """The local class every in-file caller passes for ``param``
        (``test(model, evaluator)`` with ``evaluator = HitsEvaluator()``)."""
        if not isinstance(param, cst.Param):
            return None

        def compute():
            args = self._args_for_param(param, func)
            found = {self.class_of(a, a, depth + 1) if a is not None else None for a in args or [None]}
            only = found.pop() if len(found) == 1 else None
            return only if isinstance(only, ClassInfo) else None
        return self._memoised((func, param.name.value, "class"), compute, None)


def full_name(ref) -> Optional[str]:
    """A dotted name for what ``class_of`` returned."""
    if isinstance(ref, str):
        return ref
    if isinstance(ref, ImportRef):
        if ref.level == 0 and ref.module:
            return f"{ref.module}.{ref.name}"
        return ref.name
    if isinstance(ref, ClassInfo):
        return ref.name
    return None


def _is_self_attr(expr: cst.BaseExpression, attr: str) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == attr and isinstance(expr.value, cst.Name) \
        and expr.value.value == "self"


# Library classmethods that build an instance of the class they are called on.
_CHECKPOINT_LOADERS = frozenset(("load_from_checkpoint",))


def _is_classmethod(node: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in node.decorators)


def _returns_self(ret: cst.Return) -> bool:
    return isinstance(ret.value, cst.Name) and ret.value.value == "self"
