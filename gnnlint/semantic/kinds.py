"""What a value is: "is this value a tensor?"

``kind(expr)`` is a local, conservative guess: TENSOR, BATCH (a PyG
Data/HeteroData), MODEL, OPTIMIZER, SCHEDULER, LOADER, SCALAR (Python or
numpy, surely not a tensor) or UNKNOWN; rules flag only what is surely a
tensor (``is_tensor``). It follows bindings (reaching definitions), loop
elements, parameters (annotations, names, and the arguments callers pass),
attributes (``self.x`` assigned in any method),
calls (torch functions, tensor methods, local functions' returns:
``returns_kind``), and ``class_of(expr)`` -- the class a value is an
instance of. ``literal_value`` folds a constant expression.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic import forward_args
from gnnlint.semantic.kind_tables import (  # noqa: F401 - re-exported: importers name them through kinds
    BATCH,
    LEGACY_TENSOR_CONSTRUCTORS,
    LOADER,
    MODEL,
    OPTIMIZER,
    SCALAR,
    SCHEDULER,
    TENSOR,
    UNKNOWN,
    _BATCH_ATTRS_NON_TENSOR,
    _BATCH_NAMES,
    _MODEL_METHODS_NON_TENSOR,
    _MODEL_METHODS_SELF,
    _MODEL_NAMES,
    _SCALAR_ANNOTATIONS,
    _SCALAR_NODES,
    _SCALAR_PARAM_NAMES,
    _STRING_NODES,
    _TENSOR_ANNOTATIONS,
    _TENSOR_ATTRS_NON_TENSOR,
    _TENSOR_METHODS_NON_TENSOR,
    _TENSOR_ONLY_METHODS,
    _TORCH_NON_TENSOR,
    _TORCH_TENSOR_SUBMODULES,
    _TORCH_UTILS_RETURNING_TENSORS,
    _torch_call_kind,
    _scatter_returns_tensor,
    _pyg_call_kind,
    tensor_keyword_call,
)
from gnnlint.semantic.literals import _NO_VALUE  # noqa: F401 (re-exported)
from gnnlint.semantic.mappings import NOT_MAPPING, mapping_annotation, string_keyed, tensor_mapping_param
from gnnlint.semantic.model import Binding, ClassInfo, FuncInfo
from gnnlint.semantic.returned_args import result_index, returned_argument
from gnnlint.semantic.returned_tensors import returned_tensor_call, tensor_annotation
from gnnlint.semantic.vocab import COMPILE_FUNCS, MESSAGE_PASSING_METHODS, VARIABLE_SIZE_LOADERS


# reductions a tensor has and a PyG batch or a dict has not
_REDUCTIONS = {"sum", "mean", "any", "all", "max", "min", "abs", "float", "bool", "prod", "std", "var", "nonzero"}


class Kinds:
    """Value-kind questions: what an expression evaluates to. Mixed into FileContext; reads the SemanticModel."""

    def kind(self, expr: Optional[cst.CSTNode]) -> str:
        if expr is None:
            return UNKNOWN
        cached = self._kind_cache.get(expr)
        if cached is not None:
            return cached
        if expr in self._in_progress:
            return UNKNOWN
        self._in_progress.add(expr)
        try:
            result = self._kind(expr)
        finally:
            self._in_progress.discard(expr)
        self._kind_cache[expr] = result
        return result

    def is_tensor(self, expr: Optional[cst.CSTNode]) -> bool:
        return self.kind(expr) == TENSOR

    def is_string(self, expr: Optional[cst.CSTNode]) -> bool:
        """A str literal, or a name every reaching assignment binds to one (``fmt = "%11.2e"``):
        the format of ``fmt % value`` / ``fmt.format(value)``, which formats ``value``."""
        if type(expr) in _STRING_NODES:
            return True
        if type(expr) is not cst.Name:
            return False
        reaching = self.reaching(expr.value, expr)
        return bool(reaching) and all(b.how == "assign" and type(b.value) in _STRING_NODES for b, _ in reaching)

    def _kind(self, expr: cst.CSTNode) -> str:
        t = type(expr)  # exact types first (libcst's node classes are leaves): no ABCMeta check per class
        if t in _SCALAR_NODES:
            return SCALAR
        if t is cst.Name:
            if expr.value in ("True", "False", "None"):
                return SCALAR
            return self._name_kind(expr.value, expr)
        if t is cst.Attribute:
            return self._attribute_kind(expr)
        if t is cst.Call:
            return self._call_kind(expr)
        if isinstance(expr, cst.Subscript):
            base = self.kind(expr.value)
            if base in (TENSOR, BATCH):
                if base == BATCH and self._subscript_is_key(expr):
                    return BATCH
                return TENSOR if base == TENSOR else BATCH
            if base == UNKNOWN and tensor_mapping_param(self, expr.value):
                return TENSOR  # `feats[k]` with `feats: Dict[str, Tensor]`
            name = self.last_part(expr.value) or ""
            if name.endswith("_dict") and base != SCALAR:
                return TENSOR if not name.startswith(("num_", "metadata")) else UNKNOWN
            return UNKNOWN
        if isinstance(expr, cst.BinaryOperation):
            if type(expr.operator) is cst.Modulo and self.is_string(expr.left):
                return SCALAR  # `"%.3f" % loss`: a str, whatever it formats
            left, right = self.kind(expr.left), self.kind(expr.right)
            if TENSOR in (left, right):
                return TENSOR
            if left == SCALAR and right == SCALAR:
                return SCALAR
            return UNKNOWN
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return SCALAR
            return self.kind(expr.expression)
        if isinstance(expr, cst.Comparison):
            for target in expr.comparisons:
                if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                    return SCALAR
            # `names[key] == "2u-DNF"`: a tensor is never compared with a string, so a Python bool
            if any(isinstance(e, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                   for e in [expr.left] + [c.comparator for c in expr.comparisons]):
                return SCALAR
            kinds = [self.kind(expr.left)] + [self.kind(c.comparator) for c in expr.comparisons]
            if TENSOR in kinds:
                return TENSOR
            if all(k == SCALAR for k in kinds):
                return SCALAR
            return UNKNOWN
        if isinstance(expr, cst.BooleanOperation):
            return SCALAR if self.kind(expr.left) == SCALAR and self.kind(expr.right) == SCALAR else UNKNOWN
        if isinstance(expr, cst.IfExp):  # `to_dense_adj(...) if hasattr(b, "m") else None`: the tensor where used
            a, b = (self.kind(e) if not (isinstance(e, cst.Name) and e.value == "None") else None
                    for e in (expr.body, expr.orelse))
            a, b = (a or b or UNKNOWN), (b or a or UNKNOWN)
            if a != b and (self._compiles(expr.body, expr.orelse) or self._compiles(expr.orelse, expr.body)):
                return MODEL  # `torch.compile(model) if args.compile else model`: the model, compiled or not
            return a if a == b else UNKNOWN
        if isinstance(expr, cst.NamedExpr):
            return self.kind(expr.value)
        return UNKNOWN

    @staticmethod
    def _subscript_is_key(expr: cst.Subscript) -> bool:
        if len(expr.slice) != 1:
            return False
        element = expr.slice[0].slice
        return isinstance(element, cst.Index) and isinstance(element.value, (cst.SimpleString, cst.Tuple))

    def _name_kind(self, name: str, at: cst.CSTNode) -> str:
        reaching = self.reaching(name, at)
        if not reaching:
            return UNKNOWN
        if self.tensor_narrowing(name, at) is False:
            return SCALAR  # the else of `isinstance(name, Tensor)` (narrowing.py)
        kinds = set()
        presumed = self.presumed_reaching(name, at, reaching)
        for candidate, func in presumed:
            if candidate.how == "assign" and isinstance(candidate.value, cst.Name) \
                    and candidate.value.value == "None":
                continue  # `x = None` then `if ...: x = tensor`: x is a tensor where it is used
            kinds.add(self._binding_kind(name, candidate, func))
        if not kinds:
            return SCALAR if presumed else UNKNOWN
        if kinds == {MODEL, UNKNOWN} and any(
                candidate.how == "assign" and self._compiles(candidate.value, cst.Name(name))
                for candidate, _ in presumed):
            return MODEL  # `if args.compile: model = torch.compile(model)`: the model, compiled or not
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def _compiles(self, value: Optional[cst.CSTNode], target: cst.CSTNode) -> bool:
        """``value`` is a compile-API call of ``target`` itself (``torch.compile(model, ...)``
        for ``model``): a name or branch holding either is the same model, compiled or not."""
        if not isinstance(value, cst.Call) or not (
                (self.resolve(value.func) or "") in COMPILE_FUNCS or self.compile_api(value.func)):
            return False
        first = next((a.value for a in value.args if a.keyword is None and not a.star), None)
        return first is not None and isinstance(target, (cst.Name, cst.Attribute)) \
            and self.module.code_for_node(first) == self.module.code_for_node(target)

    def _binding_kind(self, name: str, binding: Binding, func: Optional[FuncInfo]) -> str:
        how = binding.how
        if how == "param":
            return self._param_kind(binding.node, func)  # type: ignore[arg-type]
        if how in ("def", "class", "import", "with"):
            return UNKNOWN
        value = binding.value
        spot = result_index(self, binding) if how in ("assign", "unpack") else None
        arg = returned_argument(self, *spot) if spot is not None else None
        if arg is not None:
            return self.kind(arg)  # `model, ok = setup(model, device)`: the argument, moved or wrapped
        if how == "assign":
            return self.kind(value)
        if how == "aug":
            value_kind = self.kind(value)
            if value_kind == TENSOR or (value_kind == UNKNOWN and _backpropagated(value, func)):
                return TENSOR  # (`avg_loss += batch_loss` of a `batch_loss.backward()`: a loss tensor)
            # name op= scalar keeps whatever it was before
            prev = self._previous_binding(name, binding, func)
            if prev is not None:
                prev_kind = self._binding_kind(name, prev, func)
                if value_kind == SCALAR:
                    return prev_kind
                return TENSOR if prev_kind == TENSOR else UNKNOWN
            return UNKNOWN
        if how == "unpack":
            if isinstance(value, cst.Call) and (self.local_callee(value) or self.self_forward(value)) is not None:
                callee = self.local_callee(value) or self.self_forward(value)  # `loss, aux = self(batch)`
                # `x, counts = collate(...)` with `return torch.cat(xs), counts`
                if isinstance(callee, FuncInfo) and binding.index >= 0:
                    return self._returned_element_kind(callee, binding.index)
                return UNKNOWN
            kind = self.kind(value)
            return TENSOR if kind == TENSOR else UNKNOWN
        if how in ("iter", "iter_unpack"):
            if how == "iter_unpack" and binding.index == -1 and self._in_items_key(name, binding):
                return SCALAR  # `for (ntype, name), feat in feats.items()`: part of a tuple key
            return self._iter_element_kind(name, value, how, binding.index)
        return UNKNOWN

    @staticmethod
    def _in_items_key(name: str, binding) -> bool:
        """``name`` is bound inside the key tuple of ``for (a, b), v in d.items()``."""
        loop, value = binding.node, binding.value
        target = getattr(loop, "target", None)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "items" and isinstance(target, (cst.Tuple, cst.List))
                and target.elements and isinstance(target.elements[0].value, (cst.Tuple, cst.List))):
            return False
        return any(isinstance(e.value, cst.Name) and e.value.value == name for e in target.elements[0].value.elements)

    _ITER_WRAPPERS = ("tqdm", "iter", "progress", "track", "trange_wrap", "islice")

    def _unwrap_iterable(self, iterable):
        """``tqdm(loader, ...)`` / ``iter(loader)`` iterate what they wrap."""
        while isinstance(iterable, cst.Call) and iterable.args and \
                (self.last_part(iterable.func) or "") in self._ITER_WRAPPERS:
            iterable = iterable.args[0].value
        return iterable

    def _iter_element_kind(self, name: str, iterable, how: str, index: int = -1) -> str:
        if iterable is None:
            return UNKNOWN
        iterable = self._unwrap_iterable(iterable)
        func_name = self.resolve(iterable.func) if isinstance(iterable, cst.Call) else None
        if how == "iter_unpack" and func_name in ("enumerate", "zip") and isinstance(iterable, cst.Call):
            # for i, batch in enumerate(loader) / for a, b in zip(xs, ys)
            args = [a.value for a in iterable.args if a.keyword is None]
            if func_name == "enumerate":
                if index == 0:
                    return SCALAR
                return self._iter_element_kind(name, args[0], "iter") if index == 1 and args else UNKNOWN
            if 0 <= index < len(args):
                return self._iter_element_kind(name, args[index], "iter")
            return UNKNOWN
        method = iterable.func.attr.value if isinstance(iterable, cst.Call) and not iterable.args \
            and isinstance(iterable.func, cst.Attribute) else None
        if (how, method, index) in (("iter_unpack", "items", 0), ("iter", "keys", -1)):
            return SCALAR  # a dict's keys (`for k, v in losses.items()`): a tensor has no `.items()`
        if how == "iter" and isinstance(iterable, cst.Name) and string_keyed(self, iterable):
            return SCALAR  # `for key in loss:` with `loss["total"]` read: a dict's keys (mappings.py)
        kind = self.kind(iterable)
        if kind == TENSOR or self._tensor_elements(iterable):
            return TENSOR
        if how == "iter" and _BATCH_NAMES.match(name) and self.looks_like_loader(iterable):
            return BATCH
        if how == "iter" and kind == LOADER:
            return BATCH
        if how == "iter" and kind == BATCH and _BATCH_NAMES.match(name):
            return BATCH  # `for graph in batch["graphs"]`: a loader batch holding a list of graphs (per timestep)
        if how == "iter" and func_name == "range":
            return SCALAR
        return UNKNOWN

    def _tensor_elements(self, iterable, depth: int = 0) -> bool:
        """``ids = [i for i in torch.unique(x) if i != pad]``: a list built of a tensor's elements."""
        if isinstance(iterable, cst.Name) and depth < 3:
            reaching = self.reaching(iterable.value, iterable)
            values = [b.value for b, _f in reaching if b.how == "assign"]
            return bool(values) and len(values) == len(reaching) \
                and all(self._tensor_elements(v, depth + 1) for v in values)
        return isinstance(iterable, (cst.ListComp, cst.GeneratorExp)) and self.kind(iterable.elt) == TENSOR

    def looks_like_loader(self, iterable) -> bool:
        """Iterating ``iterable`` yields a loader's batches: a LOADER kind or a
        loader-like name (``train_loader``, ``enumerate(tqdm(loader))``, ``get_batches()``)."""
        iterable = self._unwrap_iterable(iterable)
        if isinstance(iterable, cst.Call) and self.resolve(iterable.func) == "enumerate" and iterable.args:
            iterable = self._unwrap_iterable(iterable.args[0].value)
        if self.kind(iterable) == LOADER:
            return True
        last = self.last_part(iterable.func if isinstance(iterable, cst.Call) else iterable) or ""
        return "loader" in last.lower() or last in VARIABLE_SIZE_LOADERS or "batches" in last.lower()


    def _param_kind(self, param: cst.Param, func: Optional[FuncInfo]) -> str:
        name = param.name.value
        if name in ("self", "cls"):
            return UNKNOWN
        if param.annotation is not None:
            text = self.module.code_for_node(param.annotation.annotation).strip()
            if _TENSOR_ANNOTATIONS.match(text) or tensor_annotation(self, param.annotation.annotation):
                return TENSOR
            if _SCALAR_ANNOTATIONS.match(text):
                return SCALAR
            if mapping_annotation(self, param.annotation.annotation) != NOT_MAPPING:
                return UNKNOWN  # `x_dict: Dict[str, Tensor]`: a dict, its items are tensors (mappings.py)
        if param.default is not None:
            default_kind = self.kind(param.default)
            if default_kind == SCALAR and not (isinstance(param.default, cst.Name)
                                               and param.default.value == "None"):
                return SCALAR
        # `update` / `message` are PyG hooks only on a class that may be a MessagePassing
        # (a trainer module's `update(self, model, batch, iter_step)` is not one)
        in_forward = func is not None and func.cls is not None and self.is_module_class(func.cls) \
            and (func.name == "forward" or func.name in MESSAGE_PASSING_METHODS and self._may_propagate(func.cls))
        if in_forward and name in ("batch", "ptr", "index", "mask"):
            return TENSOR  # PyG's batch vector, not a Data batch
        if _MODEL_NAMES.match(name):
            return MODEL
        if name in ("optimizer", "opt", "optim"):
            return OPTIMIZER
        if func is not None and self.framework_host_param(func, name):
            return UNKNOWN  # what ASE / LAMMPS hand a step is a host object (frameworks.py)
        if _BATCH_NAMES.match(name):
            return BATCH
        if "loader" in name:
            return LOADER
        if in_forward:
            if _SCALAR_PARAM_NAMES.match(name) or param.star not in ("", None, cst.MaybeSentinel.DEFAULT) \
                    and isinstance(param.star, str) and param.star:
                return UNKNOWN
            if param.default is not None:
                return UNKNOWN
            if forward_args.host_forward_param(self, func, param):
                return SCALAR  # self.embedder(labels, self.training): every call here passes a Python value
            return TENSOR
        if func is not None:
            cls = self._param_class_from_callers(param, func, 0)
            if isinstance(cls, ClassInfo) and self.is_module_class(cls):
                return MODEL  # every caller passes a model of a local module class
            return self._param_kind_from_callers(param, func)
        return UNKNOWN

    def _args_for_param(self, param: cst.Param, func: FuncInfo) -> Optional[list]:
        """The expression every in-file call of ``func`` passes for ``param``
        (the parameter's default or a ``*args`` call: None for that call), or
        None when there is no caller. The first 20 callers are read."""
        callers = self.callers_of(func)
        if not callers:
            return None
        position = next((i for i, p in enumerate(func.node.params.params) if p is param), -1)
        if func.cls is not None and "staticmethod" not in {
                self.last_part(d.decorator) for d in func.node.decorators}:
            position -= 1  # obj.method(...): self is not an argument
        out = []
        for call in callers[:20]:
            keyword = [a for a in call.args if a.keyword is not None and a.keyword.value == param.name.value]
            positional = [a for a in call.args if a.keyword is None]
            if keyword:
                out.append(keyword[0].value)
            elif any(a.star for a in positional[:position + 1]) or not 0 <= position < len(positional):
                out.append(None)
            else:
                out.append(positional[position].value)
        return out

    def _param_kind_from_callers(self, param: cst.Param, func: FuncInfo) -> str:
        """TENSOR when every call of a function or method in this file
        passes a tensor for ``param`` (``node_saliency(model, x, counts)`` with
        ``counts`` a tensor at each call site)."""
        def compute():
            args = self._args_for_param(param, func)
            kinds = {self.kind(a) if a is not None else UNKNOWN for a in args or [None]}
            if kinds == {BATCH}:
                return BATCH  # `metrics(pred, batch["valid"].to(dev))` at every call: a field of a loader batch
            return TENSOR if kinds == {TENSOR} else UNKNOWN
        return self._memoised((func, param.name.value, "kind"), compute, UNKNOWN)

    def _attribute_kind(self, expr: cst.Attribute) -> str:
        attr = expr.attr.value
        resolved = self.resolve(expr)
        if resolved and resolved.split(".")[0] in ("torch", "np", "numpy", "math"):
            return UNKNOWN if resolved.startswith("torch") else SCALAR
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return self._self_attr_kind(expr)
        base = self.kind(expr.value)
        if base == TENSOR:
            if attr in _TENSOR_ATTRS_NON_TENSOR:
                return SCALAR
            return TENSOR
        if base == BATCH:
            # `batch["coords"].shape`: a tensor's metadata, whatever the batch holds
            if attr in _BATCH_ATTRS_NON_TENSOR or attr.startswith("num_") or attr in _TENSOR_ATTRS_NON_TENSOR:
                return SCALAR if attr not in ("x_dict", "edge_index_dict", "edge_attr_dict", "y_dict") else UNKNOWN
            if attr.endswith("_dict") or attr in ("to", "cuda", "cpu"):
                return UNKNOWN
            return TENSOR
        if base == SCALAR or attr in ("dtype", "device", "ndim", "is_cuda"):
            return SCALAR  # a tensor's (or an array's) metadata, whatever holds it: never a tensor
        return UNKNOWN

    def _self_attr_kind(self, expr: cst.Attribute) -> str:
        cls = self.enclosing_class(expr)
        if cls is None:
            return UNKNOWN
        values = self.class_attr_values(cls, expr.attr.value)
        kinds = {self.kind(v) for v in values}
        if expr.attr.value in cls.registered:
            kinds.add(TENSOR)  # a registered buffer / parameter: torch accepts only a tensor for it
            kinds.discard(UNKNOWN)
        for value in values:
            if isinstance(value, cst.Call):
                resolved = self.resolve(value.func) or ""
                if resolved.endswith(("Parameter", "nn.Parameter")):
                    kinds.add(TENSOR)
                    kinds.discard(UNKNOWN)
        if len(kinds) == 1:
            return kinds.pop()
        if MODEL in kinds and UNKNOWN in kinds and len(kinds) == 2:
            return MODEL
        return UNKNOWN

    def _call_kind(self, call: cst.Call) -> str:
        func = call.func
        resolved = self.resolve(func) or ""
        root = resolved.split(".")[0]
        if resolved == "sum" and call.args and self._sums_tensors(call.args[0].value, call):
            return TENSOR  # `sum(losses)` of a list of loss tensors: a tensor
        if resolved in _BUILTINS_RETURNING_VALUES:
            return UNKNOWN if resolved == "getattr" else SCALAR
        if root in _SCALAR_LIBRARIES:
            return SCALAR
        if resolved in COMPILE_FUNCS or self.compile_api(func):
            return MODEL
        if root == "torch":
            return _torch_call_kind(resolved.split("."), resolved)
        if root == "torch_geometric":
            return _pyg_call_kind(resolved.split("."))
        if root == "torch_scatter" and _scatter_returns_tensor(resolved.split(".")[-1]):
            return TENSOR  # segment_coo(ones, index): per-segment counts, a tensor
        if isinstance(func, cst.Attribute):
            kind = self._method_call_kind(func)
            if kind is not None:
                return kind
            if tensor_keyword_call(call) and not (isinstance(func.value, cst.Name) and (
                    func.value.value in self.imports or func.value.value in self.aliases)):
                return TENSOR  # `scores.sort(dim=-1, descending=True)`, not `utils.sort(x, dim=1)`
        return self._named_call_kind(call, func)

    def _sums_tensors(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``expr`` is a list of tensors: a comprehension of them, or a name bound only to
        such a comprehension or to a list literal whose entries and ``append``s are tensors."""
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return self.kind(expr.elt) == TENSOR
        if not isinstance(expr, cst.Name):
            return False
        reaching = self.reaching(expr.value, at)
        values: list = []  # what the list holds
        for binding, _func in reaching:
            if binding.how != "assign" or not isinstance(binding.value, (cst.ListComp, cst.List)):
                return False
            if isinstance(binding.value, cst.ListComp):
                values.append(binding.value.elt)
            elif any(isinstance(e, cst.StarredElement) for e in binding.value.elements):
                return False
            else:
                values += [e.value for e in binding.value.elements]
        func = reaching[0][1] if reaching else None
        values += [c.args[0].value for c in (func.calls if func is not None else self.module_calls)
                   if isinstance(c.func, cst.Attribute) and c.func.attr.value == "append" and len(c.args) == 1
                   and isinstance(c.func.value, cst.Name) and c.func.value.value == expr.value]
        return bool(values) and all(self.kind(v) == TENSOR for v in values)

    def _method_call_kind(self, func: cst.Attribute) -> Optional[str]:
        """``receiver.method(...)`` by what the receiver is; None: not decided here."""
        method = func.attr.value
        receiver = self.kind(func.value)
        if receiver == TENSOR:
            if method in _TENSOR_METHODS_NON_TENSOR or method.startswith(("is_", "has_")):
                return SCALAR
            return TENSOR
        if receiver == MODEL:
            if method in _MODEL_METHODS_SELF:
                return MODEL
            if method in _MODEL_METHODS_NON_TENSOR:
                return UNKNOWN
            if method == "__call__" or method in ("forward", "encode", "decode", "inference",
                                                   "embed", "predict", "decode_all", "score"):
                return TENSOR
            return UNKNOWN
        if receiver == BATCH:
            if method in ("to", "cuda", "cpu", "pin_memory", "clone", "contiguous", "subgraph",
                          "coalesce", "detach", "apply"):
                return BATCH
            if method in ("item", "tolist"):
                return SCALAR  # `batch["batch_size"].item()`: a Python number
            if method != "numpy" and (method in _TENSOR_ONLY_METHODS or method in _REDUCTIONS):
                return TENSOR  # `batch["valid"].sum()`: no graph or dict has it -- a field of the batch, a tensor
            return UNKNOWN
        if receiver == SCALAR:
            return SCALAR
        if receiver == UNKNOWN and method in _TENSOR_ONLY_METHODS and method not in (
                "numpy", "tolist", "item"):
            return TENSOR
        return None

    def _named_call_kind(self, call: cst.Call, func: cst.BaseExpression) -> str:
        """A call of a model value, a local function or class, an imported model class, a loss."""
        callee_kind = self.kind(func) if not isinstance(func, cst.Call) else UNKNOWN
        if callee_kind == MODEL or type(func) is cst.Subscript and self.compiled_value(func, call):
            return TENSOR  # (`models["gnn"](x)`: a dict entry holding a compiled model, flow.py)
        local = self.local_callee(call) or self.self_forward(call)  # `out = self(batch)`: its forward
        if local is not None:
            if isinstance(local, ClassInfo):
                return MODEL if self.is_module_class(local) else UNKNOWN
            return self.returns_kind(local)
        name = self.last_part(func) or ""
        if isinstance(func, cst.Name) and name in self.imports:
            ref = self.imports[name]
            if name[:1].isupper() and (ref.level > 0 or "model" in ref.module or "net" in ref.module):
                return MODEL
        if returned_tensor_call(self, call):  # `-> torch.Tensor` in another project file
            return TENSOR
        if name in ("criterion", "loss_fn", "loss_func", "lossfn", "loss_function") or name.endswith("_criterion") or \
                (isinstance(func, cst.Name) and func.value.endswith("_loss_fn")):
            return TENSOR
        if isinstance(func, cst.Name) and _MODEL_NAMES.match(func.value) and callee_kind != SCALAR \
                and self.lookup(func.value, call)[0] is None:
            return TENSOR
        return UNKNOWN

    def _returned_element_kind(self, func: FuncInfo, index: int) -> str:
        """The kind of element ``index`` of the tuples a function returns
        (TENSOR only when every return agrees)."""
        def compute():
            kinds = set()
            for r in func.returns:
                if not isinstance(r.value, cst.Tuple) or index >= len(r.value.elements) or \
                        any(isinstance(e, cst.StarredElement) for e in r.value.elements):
                    kinds.add(UNKNOWN)
                    continue
                kinds.add(self.kind(r.value.elements[index].value))
            return TENSOR if kinds == {TENSOR} and not func.is_async else UNKNOWN
        return self._memoised((func, index, "returned"), compute, UNKNOWN)

    def returns_kind(self, func: FuncInfo) -> str:
        cached = self._returns_cache.get(func)
        if cached is not None:
            return cached
        self._returns_cache[func] = UNKNOWN  # recursion guard
        kinds = {self.kind(r.value) for r in func.returns if r.value is not None}
        declared = self._declared_return(func)
        if declared == TENSOR or declared == SCALAR and kinds <= {UNKNOWN}:
            kinds = {declared}  # `def loss(...) -> torch.Tensor: ... return sum(parts)`: the author says
        if func.is_async:
            kinds = {UNKNOWN}  # calling it returns a coroutine
        result = kinds.pop() if len(kinds) == 1 else UNKNOWN
        self._returns_cache[func] = result
        return result

    def _declared_return(self, func: FuncInfo) -> Optional[str]:
        """TENSOR / SCALAR when the function's return annotation says so (``-> torch.Tensor``)."""
        returns = getattr(func.node, "returns", None)
        if returns is None:
            return None
        text = self.module.code_for_node(returns.annotation).strip().strip("\"'")
        if _TENSOR_ANNOTATIONS.match(text) or tensor_annotation(self, returns.annotation):  # `-> th.Tensor`
            return TENSOR
        if _SCALAR_ANNOTATIONS.match(text):
            return SCALAR
        return None

# Builtins that return Python values (getattr: anything).
_BUILTINS_RETURNING_VALUES = frozenset((
    "float", "int", "bool", "len", "round", "str", "repr", "abs", "min", "max",
    "sum", "range", "enumerate", "zip", "list", "tuple", "dict", "set",
    "sorted", "isinstance", "hasattr", "getattr", "format", "print", "any", "all"))
_SCALAR_LIBRARIES = frozenset(("np", "numpy", "math", "random", "time", "os", "json", "pandas", "pd", "sklearn",
                               "scipy", "statistics"))


def _backpropagated(value: Optional[cst.CSTNode], func: Optional[FuncInfo]) -> bool:
    """``value`` is a name its function calls ``.backward()`` on: a loss tensor."""
    if not isinstance(value, cst.Name) or func is None:
        return False
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward"
               and isinstance(c.func.value, cst.Name) and c.func.value.value == value.value for c in func.calls)
