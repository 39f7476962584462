"""Where a tensor lives: "is this tensor known to be on the CPU?"

Reading a CPU tensor's value (``.item()``, ``float(t)``, ``print(t)``) does
not sync the device, so the sync rules (GNN001, GNN013) leave such reads
alone (``shared/cases/README.md``: "A CPU tensor does not sync the device:
false"). A tensor is known to be on the host when it is

- built from Python or numpy data without ``device=``: ``torch.tensor(list)``,
  ``torch.as_tensor([...])`` / ``torch.as_tensor(np_array)``, ``torch.from_numpy(a)``,
  or by a factory without ``device=`` (``torch.rand(())``, ``torch.zeros(n)``,
  ``torch.arange(n)``) outside ``with torch.device(...):`` (unless the file calls
  ``torch.set_default_device``);
- the result of ``.cpu()`` / ``.to("cpu")`` (the copy is that call, which the
  sync rules report where it costs something);
- computed from such tensors by ops that keep the device (``.mean()``,
  ``t[i]``, ``t * 2``, ``.float()`` ..., ``torch.cat`` / ``torch.stack`` of
  them), or a name every reaching assignment of which is one of these;
- a test's parameter named after a ``@pytest.fixture`` of the same file that
  returns one (or a tuple element of it, unpacked by position).

Anything else (a tensor whose device is unknown) is not on the host.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic import batch_loops
from gnnlint.semantic.kinds import LEGACY_TENSOR_CONSTRUCTORS, SCALAR, TENSOR
from gnnlint.semantic.model import FuncInfo

_MOVED = ("to", "cuda", "to_device")  # a call whose result lives on a device (unless it names the CPU)

_FROM_DATA = ("torch.tensor", "torch.as_tensor", "torch.asarray")
# factories that build on the default device (the CPU) without `device=`
_FACTORIES = {"torch." + name for name in (
    "rand", "randn", "randint", "randperm", "zeros", "ones", "empty", "full", "arange", "linspace", "eye")}
# elementwise / reducing ops whose result lives on their tensor inputs' device
_HOST_OPS = {"torch." + name for name in (
    "where", "sum", "mean", "abs", "clamp", "maximum", "minimum", "max", "min", "exp", "log", "sqrt",
    "argmax", "argmin", "cumsum", "flatten", "reshape", "transpose", "gather", "masked_fill", "logical_not",
    "logical_and", "logical_or", "eq", "ne", "gt", "lt", "ge", "le",
    "bernoulli", "multinomial", "poisson", "unique", "sort", "argsort", "topk", "bincount", "round",
    "floor", "ceil", "sign", "prod", "std", "var", "any", "all", "isnan", "isfinite", "count_nonzero")}  # sampling ops: drawn on the probabilities' device
_JOINS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack")
_FIXTURES = ("pytest.fixture",)
# methods whose result lives where the receiver does
_MOVES = ("to", "cuda", "pin_memory", "type", "numpy", "tolist", "item")


_JAX_LIBRARIES = ("jax", "equinox", "flax", "haiku", "jraph")

_DTYPES = {"float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16", "int32",
           "int64", "long", "int", "uint8", "bool", "complex64", "complex128"}


class Devices:
    """``host_tensor``. Mixed into FileContext; reads the SemanticModel and the value kinds."""

    def host_on_some_path(self, expr: cst.BaseExpression) -> bool:
        """A name one of whose reaching assignments is already a host tensor
        (``if mask is not None: mask = mask.cpu()``, later ``if mask is not
        None: mask.numpy(force=True)``): that copy, not this read, is the sync."""
        if not isinstance(expr, cst.Name):
            return False
        return any(binding.how == "assign" and binding.value is not None
                   and (_cpu_call(binding.value) or self.host_tensor(binding.value))
                   for binding, _scope in self.reaching(expr.value, expr))

    def host_tensor(self, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """How ``expr`` is known to be a CPU tensor ("`torch.tensor(...)` without
        `device=`", "a `.cpu()` result", "`torch.from_numpy(...)`"), or None."""
        if depth > 12 or self._default_device_set():
            return None
        if isinstance(expr, cst.Call):
            return self._host_call(expr, depth)
        if isinstance(expr, cst.Subscript):
            if isinstance(expr.value, cst.Name) and self._items_moved(expr.value):
                return None  # `frames[t]` after `frames[t] = frames[t].to(device)`
            return self.host_tensor(expr.value, depth + 1)
        if isinstance(expr, (cst.BinaryOperation, cst.Comparison)):
            operands = (expr.left, expr.right) if isinstance(expr, cst.BinaryOperation) \
                else (expr.left, *(c.comparator for c in expr.comparisons))
            sides = [self.host_tensor(side, depth + 1) if self.kind(side) != SCALAR and not _hparam(side)
                     and not self._python_element(side) else "scalar" for side in operands]
            if None in sides:
                return None
            return next((s for s in sides if s != "scalar"), None)
        if isinstance(expr, cst.UnaryOperation):
            return self.host_tensor(expr.expression, depth + 1)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            fresh = batch_loops.fresh_loader_batch(self, expr)  # `for batch in loader:` before it moves
            if fresh is not None:
                return fresh
        if isinstance(expr, cst.Name):
            return self._host_name(expr, depth)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return self._host_self_attr(expr, depth)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value != "self":
            # `sample = batch.to_data_list()[0].cpu()`: the fields of a host copy live on the host too
            found = self._host_name(expr.value, depth + 1) or self._host_object(expr.value)
            return f"a field of {found}" if found is not None else None
        return None

    def _jax_value(self, call: cst.Call) -> Optional[str]:
        """``eqx.filter_jit(self.model)(graph)``, ``jnp.sum(x)``: a JAX array, no torch tensor (a JAX
        backend's branch next to the torch one) -- reading it syncs no torch device."""
        func = call.func
        while isinstance(func, cst.Call):  # `jax.jit(f)(x)`
            func = func.func
        resolved = self.resolve(func) or ""
        return "a JAX value" if resolved.split(".")[0] in _JAX_LIBRARIES else None

    def _host_object(self, name: cst.Name) -> Optional[str]:
        """``sample = batch.to_data_list()[0].cpu()`` (every reaching assignment):
        a host copy of an object, whatever its class (a graph, a batch)."""
        reaching = self.reaching(name.value, name)
        for binding, _f in reaching:
            value = binding.value
            if binding.how != "assign" or not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
                return None
            method, args = value.func.attr.value, value.args
            if not (method == "cpu" and not args or method == "to" and args and self.cpu_device(args[0].value)):
                return None
        return "a host copy (`.cpu()`)" if reaching else None

    def moved_to_device(self, expr: cst.BaseExpression) -> bool:
        """``graph`` after ``graph = graph.to(device)`` / ``graph.cuda()`` (every
        reaching assignment): an object moved to the device, whatever its class
        (a graph, a batch), so its ``.cpu()`` copies device memory back."""
        if not isinstance(expr, cst.Name):
            return False
        reaching = self.reaching(expr.value, expr)
        return bool(reaching) and all(b.how == "assign" and self._device_move(b.value) for b, _f in reaching)

    def _device_move(self, value: Optional[cst.BaseExpression]) -> bool:
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return False
        method, args = value.func.attr.value, value.args
        if method == "cuda":
            return True
        if method != "to" or not args or self._default_device_set():
            return False
        first = args[0].value if args[0].keyword is None else None
        device = first if first is not None else next(
            (a.value for a in args if a.keyword is not None and a.keyword.value == "device"), None)
        return device is not None and not self.cpu_device(device) and not self._dtype_value(device) \
            and not isinstance(device, (cst.Integer, cst.Float))

    def _host_call(self, call: cst.Call, depth: int) -> Optional[str]:
        resolved = self.resolve(call.func) or ""
        # `**tensor_kwargs` may carry `device=`
        has_device = any(a.keyword is not None and a.keyword.value == "device" or a.star == "**" for a in call.args)
        positional = [a.value for a in call.args if a.keyword is None]
        if resolved == "torch.from_numpy":
            return "`torch.from_numpy(...)`"
        if resolved.startswith("torch.") and resolved[6:] in LEGACY_TENSOR_CONSTRUCTORS and positional:
            return f"`{resolved}(...)`, a legacy constructor that builds on the CPU"
        if resolved in _FROM_DATA and positional and not has_device:
            data = positional[0]
            if self.kind(data) == TENSOR:
                return None  # as_tensor(t) is t, wherever it lives
            if resolved == "torch.tensor" or self._python_or_numpy(data):
                return f"`{resolved}(...)` of Python data without `device=`"
            return None
        if resolved in _FACTORIES and not has_device and not self._under_device_context(call):
            return f"`{resolved}(...)` without `device=` (built on the CPU)"
        if resolved in _HOST_OPS and not has_device and positional and self.host_tensor(positional[0], depth + 1) \
                and all(self._host_or_number(a, depth) for a in positional[1:]):
            return self.host_tensor(positional[0], depth + 1)  # torch.where(cpu_mask, 1, 0): on the input's device
        if resolved in _JOINS and positional and isinstance(positional[0], (cst.List, cst.Tuple)) \
                and positional[0].elements and all(
                    not isinstance(e, cst.StarredElement) and self.host_tensor(e.value, depth + 1)
                    for e in positional[0].elements):
            return self.host_tensor(positional[0].elements[0].value, depth + 1)  # cat/stack of CPU tensors
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method == "cpu" and not call.args:  # a tensor, a batch or a module: on the host after it
            return "a `.cpu()` result"
        device = positional[0] if positional else next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == "device"), None)
        if method == "to" and device is not None and self.cpu_device(device):
            return "a `.to(\"cpu\")` result"
        if method == "to" and call.args and all(a.keyword is None and self._dtype_value(a.value) for a in call.args):
            return self.host_tensor(func.value, depth + 1)  # x.cpu().to(dtype): a cast keeps the device
        if method in _MOVES or self.kind(func.value) == SCALAR:
            return None
        return self.host_tensor(func.value, depth + 1)

    def _python_element(self, expr: cst.BaseExpression) -> bool:
        """A loop variable over a ``.tolist()`` result (every reaching binding): a Python number."""
        if not isinstance(expr, cst.Name):
            return False
        reaching = self.reaching(expr.value, expr)
        return bool(reaching) and all(
            b.how == "iter" and isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Attribute)
            and b.value.func.attr.value == "tolist" and not b.value.args for b, _f in reaching)

    def _host_or_number(self, expr: cst.BaseExpression, depth: int) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float)) or (isinstance(expr, cst.UnaryOperation)
                                                          and isinstance(expr.expression, (cst.Integer, cst.Float))):
            return True
        return self.host_tensor(expr, depth + 1) is not None

    def _under_device_context(self, node: cst.CSTNode) -> bool:
        """Inside ``with torch.device(...):``, where factories build on that device."""
        for anc in self.ancestors(node):
            if isinstance(anc, cst.With) and any(
                    isinstance(item.item, cst.Call) and self.resolve(item.item.func) == "torch.device"
                    for item in anc.items):
                return True
        return False

    def _host_name(self, name: cst.Name, depth: int) -> Optional[str]:
        reaching = self._past_host_copy(name.value, self.reaching(name.value, name), depth)
        if not reaching:
            return None
        found = None
        for candidate, func in reaching:
            if candidate.how == "param":
                found = self._host_fixture(name.value, -1, depth)
                if found is None and func is not None:
                    found = self._host_param(candidate, func, depth)
            elif candidate.how in ("iter", "iter_unpack") and self._host_elements(candidate.value, depth):
                found = "an element of a `.cpu()` result"  # `for k, v in td.cpu().items()`
            elif candidate.how in ("iter", "iter_unpack") and candidate.value is not None and self._host_iterated(
                    candidate.value, candidate.index if candidate.how == "iter_unpack" else None, depth):
                found = "an element of a host tensor"  # `for a, b in zip(ids_cpu, types_cpu)`
            elif candidate.how in ("iter", "iter_unpack") and func is not None:
                found = self._host_param(candidate, func, depth)
            elif candidate.how == "unpack" and isinstance(candidate.value, cst.Name) \
                    and self._is_param(candidate.value):
                found = self._host_fixture(candidate.value.value, candidate.index, depth)
            elif candidate.how == "unpack" and isinstance(candidate.value, cst.Call) and candidate.index >= 0:
                callee = self.local_callee(candidate.value)  # `a, masks = self.build(...)`: what it returns
                found = self._host_returned(callee, candidate.index, depth) if isinstance(callee, FuncInfo) \
                    else self._jax_value(candidate.value)
            elif candidate.how != "assign" or candidate.value is None:
                return None
            else:
                found = self.host_tensor(candidate.value, depth + 1)
                if found is not None and batch_loops.FRESH in found and batch_loops.alias_moved(self, name, candidate):
                    return None  # `seq = batch["graphs"]` moved (`seq[t] = seq[t].to(device)`) before this read
            if found is None:
                return None
        return found

    def _past_host_copy(self, name: str, reaching: list, depth: int) -> list:
        """``if hasattr(sid, "cpu"): sid = sid.cpu()`` (or under ``isinstance(sid, Tensor)``):
        the earlier bindings reach past that ``if`` only when its test failed -- when
        ``sid`` is no tensor -- so a tensor read after it is the host copy."""
        copies = [b for b, _f in reaching if b.how == "assign" and b.value is not None
                  and self._copy_under_tensor_test(name, b.value, depth)]
        if not copies:
            return reaching
        first = min(b.order for b in copies)
        return [(b, f) for b, f in reaching if b.order >= first]

    def _copy_under_tensor_test(self, name: str, value: cst.BaseExpression, depth: int) -> bool:
        # `sid.cpu()` is a host copy however deep the question came from (no depth to run out of)
        cpu_copy = isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "cpu" and not value.args
        if not cpu_copy and self.host_tensor(value, depth + 1) is None:
            return False
        stmt = self.statement_of(value)
        branch = self.parent.get(self.parent.get(stmt)) if stmt is not None else None  # If <- IndentedBlock
        if not isinstance(branch, cst.If) or self.parent.get(stmt) is not branch.body:
            return False
        test = branch.test
        if isinstance(test, cst.Call) and self.resolve(test.func) == "hasattr" and len(test.args) == 2 \
                and isinstance(test.args[0].value, cst.Name) and test.args[0].value.value == name:
            return self.literal_value(test.args[1].value) in ("cpu", "detach", "item", "numpy")
        return self._implies(test, name, True) is True

    def _host_iterated(self, iterable: cst.BaseExpression, index: Optional[int], depth: int) -> bool:
        """Iterating ``iterable`` (taking element ``index`` of each item when unpacked) yields host
        values: rows of a host tensor (``for row in t.to("cpu")``), that position of a ``zip`` of
        them, the items of ``enumerate`` over one, or Python numbers (``for v in t.unique().tolist()``)."""
        if not isinstance(iterable, (cst.Call, cst.Name, cst.Attribute, cst.Subscript)) or depth > 12:
            return False
        if isinstance(iterable, cst.Call):
            func, args = self.resolve(iterable.func), [a.value for a in iterable.args if a.keyword is None]
            if func == "zip" and index is not None:
                return 0 <= index < len(args) and self._host_iterated(args[index], None, depth + 1)
            if func == "enumerate" and index is not None and args:
                return index == 0 or (index == 1 and self._host_iterated(args[0], None, depth + 1))
            if isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value == "tolist" \
                    and not iterable.args:
                return index is None  # Python numbers (or lists of them): no tensor to read
        if isinstance(iterable, cst.Name) and self._items_moved(iterable):
            return False
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args \
                and (iterable.func.attr.value, index) in (("items", 1), ("values", None)) \
                and isinstance(iterable.func.value, cst.Attribute) and isinstance(iterable.func.value.value, cst.Name) \
                and iterable.func.value.value.value == "self":
            return self._host_self_attr(iterable.func.value, depth + 1) is not None  # a dict of host buffers
        return index is None and self.host_tensor(iterable, depth + 1) is not None

    def _host_self_attr(self, expr: cst.Attribute, depth: int) -> Optional[str]:
        """``self.coords`` when every ``self.coords = ...`` of the class builds a host buffer
        (``torch.zeros(n, 3)`` without ``device=``) or stores None: item writes into it
        (``self.coords[i] = x``) keep it on the host, so reading it syncs nothing."""
        from gnnlint.semantic.flow import _index

        cls = self.enclosing_class(expr)
        if cls is None or depth > 8:
            return None
        found = None
        for other in _index(self)["attrs"].get(expr.attr.value, ()):
            if not (isinstance(other.value, cst.Name) and other.value.value == "self"):
                continue
            parent = self.parent.get(other)
            if isinstance(parent, cst.AssignTarget):
                value = self.parent.get(parent).value
            elif isinstance(parent, cst.AnnAssign) and parent.target is other:
                value = parent.value
            elif isinstance(parent, cst.Element) or isinstance(parent, (cst.For, cst.AugAssign, cst.WithItem)) \
                    and getattr(parent, "target", None) is other or isinstance(parent, cst.AsName):
                return None  # unpacked into, a loop target, `+=` (a device tensor may replace it): unknown
            else:
                continue  # a read, an item write (`self.coords[i] = x`), a method call
            if self.enclosing_class(other) is not cls:
                return None
            values = [e.value for e in value.elements if isinstance(e, cst.DictElement)] \
                if isinstance(value, cst.Dict) else [value.value] if isinstance(value, cst.DictComp) else [value]
            if isinstance(value, cst.Dict) and len(values) != len(value.elements):
                return None  # `{**other}`
            for item in values:  # a dict of buffers (`{key: torch.zeros(n) for key in names}`): its values
                if item is None or isinstance(item, cst.Name) and item.value == "None" or self._returns_numpy(item):
                    continue  # (`self.coords = self._export(self.coords)` returning `t.cpu().numpy()`: no tensor)
                found = self.host_tensor(item, depth + 1)
                if found is None:
                    return None
        return f"`self.{expr.attr.value}`, {found}" if found is not None else None

    def _returns_numpy(self, value: cst.BaseExpression) -> bool:
        """A call of a local function every ``return`` of which is a ``.numpy()`` / ``.tolist()``."""
        callee = self.local_callee(value) if isinstance(value, cst.Call) else None
        return isinstance(callee, FuncInfo) and bool(callee.returns) and all(
            isinstance(r.value, cst.Call) and isinstance(r.value.func, cst.Attribute)
            and r.value.func.attr.value in ("numpy", "tolist") for r in callee.returns)

    def _items_moved(self, name: cst.Name) -> bool:
        """``graphs[t] = graphs[t].to(device)`` earlier in the function: the list's items were
        replaced by device copies, so iterating it after that yields no host value."""
        from gnnlint.semantic.flow import _index

        func, at = self.enclosing_function(name), self.order.get(name, 0)
        for other in _index(self)["names"].get(name.value, ()):
            sub = self.parent.get(other)
            target = self.parent.get(sub)
            assign = self.parent.get(target)
            if isinstance(sub, cst.Subscript) and sub.value is other and isinstance(target, cst.AssignTarget) \
                    and isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call) \
                    and isinstance(assign.value.func, cst.Attribute) and assign.value.func.attr.value in _MOVED \
                    and self.order.get(other, at) < at and self.enclosing_function(other) is func \
                    and self._host_call(assign.value, 1) is None:  # not `.to("cpu")`
                return True
        return False

    def _host_elements(self, iterable: Optional[cst.BaseExpression], depth: int) -> bool:
        """Iterating ``iterable`` yields CPU tensors: a ``.cpu()`` result, whatever it copied (a
        tensor's rows, a TensorDict's ``.items()`` / ``.values()``)."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value in ("items", "values") and not iterable.args:
            iterable = iterable.func.value
        return isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value == "cpu" and not iterable.args and not self._default_device_set()

    def _is_param(self, name: cst.Name) -> bool:
        return self.sole_binding(name.value, name, "param") is not None

    def _host_fixture(self, param: str, index: int, depth: int) -> Optional[str]:
        """A test's parameter named after a ``@pytest.fixture`` of this file is
        what the fixture returns (``index``: that element of a returned tuple):
        a CPU tensor when every return gives one."""
        fixture = self.functions.get(param)
        if fixture is None or not any((self.resolve(d.decorator.func if isinstance(d.decorator, cst.Call)
                                                    else d.decorator) or "") in _FIXTURES
                                      for d in fixture.node.decorators):
            return None
        return self._host_returned(fixture, index, depth)

    def _host_returned(self, func, index: int, depth: int) -> Optional[str]:
        """Every ``return`` of a local function gives a CPU tensor (``index``:
        that element of a returned tuple)."""
        if not func.returns:
            return None
        found = None
        for ret in func.returns:
            value = ret.value
            if index >= 0:
                if not isinstance(value, cst.Tuple) or index >= len(value.elements):
                    return None
                value = value.elements[index].value
            found = self.host_tensor(value, depth + 1) if value is not None else None
            if found is None:
                return None
        return found

    def _host_param(self, binding, func, depth: int) -> Optional[str]:
        """A parameter (or the loop variable over one) every local caller
        passes a host copy for (``min_diff(..., pbc.tolist())``): whatever its
        annotation says, it holds no device tensor."""
        param = binding.node if binding.how == "param" else binding.value
        if isinstance(param, cst.Call) and self.resolve(param.func) == "enumerate" and param.args:
            param = param.args[0].value  # `for i, periodic in enumerate(pbc)`
        name = param.name.value if isinstance(param, cst.Param) else \
            param.value if isinstance(param, cst.Name) and param.value in func.params else None
        callers = self.callers_of(func) if name is not None else []
        if not callers:
            return None
        for call in callers:
            arg = self.arg_for_param(func, call, name)
            host = isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute) \
                and arg.func.attr.value in ("tolist", "item", "numpy")
            if not host and (arg is None or self.host_tensor(arg, depth + 1) is None):
                return None
        return f"every caller passes a host copy for `{name}`"

    def _python_or_numpy(self, data: cst.BaseExpression) -> bool:
        if self.kind(data) == SCALAR:
            return True
        if isinstance(data, cst.Call):
            resolved = self.resolve(data.func) or ""
            if resolved.startswith("numpy."):
                return True
            if isinstance(data.func, cst.Attribute) and data.func.attr.value in ("numpy", "tolist"):
                return True
        if isinstance(data, cst.Name):
            binding, _ = self.lookup(data.value, data)
            if binding is not None and binding.how == "assign" and binding.value is not None \
                    and binding.value is not data:
                return self._python_or_numpy(binding.value)
        return False

    def _dtype_value(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """``torch.float16``, or a name every reaching binding of which is a torch dtype."""
        resolved = self.resolve(expr) if isinstance(expr, cst.Attribute) else None
        if resolved is not None:
            return resolved.startswith("torch.") and resolved.split(".")[-1] in _DTYPES
        if isinstance(expr, cst.Name) and depth < 2:
            reaching = self.reaching(expr.value, expr)
            return bool(reaching) and all(b.how == "assign" and b.value is not None
                                          and self._dtype_value(b.value, depth + 1) for b, _f in reaching)
        return False

    @staticmethod
    def cpu_device(expr: cst.BaseExpression) -> bool:
        """``"cpu"`` or ``torch.device("cpu")``: the CPU named as a device (``.to(<it>)`` copies to the host)."""
        if isinstance(expr, cst.SimpleString):
            return expr.value.strip("'\"") == "cpu"
        if isinstance(expr, cst.Call) and expr.args and isinstance(expr.args[0].value, cst.SimpleString):
            return expr.args[0].value.value.strip("'\"") == "cpu" and \
                isinstance(expr.func, (cst.Name, cst.Attribute)) and \
                (expr.func.value if isinstance(expr.func, cst.Name) else expr.func.attr.value) == "device"
        return False

    def _default_device_set(self) -> bool:
        cached = getattr(self, "_default_device_cache", None)
        if cached is None:
            cached = any((self.resolve(c.func) or "") == "torch.set_default_device" for c in self.all_calls())
            self._default_device_cache = cached
        return cached


def _cpu_call(value: cst.BaseExpression) -> bool:
    """``x.cpu()``: a host copy of whatever ``x`` was."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "cpu"


def _hparam(expr: cst.BaseExpression) -> bool:
    """``self.hparams.max_weight``: a LightningModule's saved hyperparameter
    (``save_hyperparameters()`` keeps the ``__init__`` arguments): a Python value."""
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Attribute) \
        and expr.value.attr.value == "hparams" and isinstance(expr.value.value, cst.Name) \
        and expr.value.value.value == "self"
