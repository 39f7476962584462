"""Data-dependent shapes: "is this index a boolean mask?" and "is this size
argument a tensor?"

- ``is_bool_mask(ctx, expr)``: whether an index expression is a boolean mask
  (a comparison, a logical op, ``.bool()``, ``torch.isnan(...)``, a PyG
  function returning a mask, a name bound to one, a tensor whose name
  contains ``mask``); integer index tensors such as ``h[batch]`` are not.
- ``likely_tensor(ctx, expr)``: a looser tensor test than ``kind`` for size
  arguments (``repeats``): ``kind`` first, then the shapes of tensor-only
  methods (``.bincount()``, ``.sum(dim)``...). Rules that must be sure ask
  ``kind``/``is_tensor`` (semantic/kinds.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.field_uses import field_used_as_array, used_as_array
from gnnlint.semantic.kinds import BATCH, MODEL, SCALAR, TENSOR
from gnnlint.semantic.list_attrs import list_attribute
from gnnlint.semantic.model import FuncInfo
from gnnlint.semantic.shape_annotations import annotated_dtype
from gnnlint.semantic.syntax import is_none
from gnnlint.semantic.vocab import GRAPHS_TUPLE_CLASSES, GRAPHS_TUPLE_COUNTS, GRAPHS_TUPLE_FIELDS

if TYPE_CHECKING:
    from gnnlint.context import FileContext


_MASK_FUNCS = {
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isin", "isreal", "logical_and", "logical_or",
    "logical_not", "logical_xor", "eq", "ne", "gt", "lt", "ge", "le", "greater", "less",
    "greater_equal", "less_equal", "not_equal", "isclose", "signbit", "bernoulli_mask",
}


_MASK_METHODS = _MASK_FUNCS | {"bool"}


_PYG_MASK_FUNCS = {"index_to_mask", "mask_feature_mask"}


_BOOL_DTYPES = ("torch.bool",)


def _dtype_is_bool(ctx: FileContext, call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return ctx.resolve(arg.value) in _BOOL_DTYPES
    return False


# PyG functions returning a boolean mask as one element of a tuple: name -> indexes
_PYG_MASK_OUTPUTS = {"to_dense_batch": (1,), "remove_isolated_nodes": (2,), "dropout_node": (1, 2),
                     "dropout_edge": (1,)}


# methods that change a tensor's layout or place, not its dtype (`.to(device)` too: a dtype
# argument is the `to` case above)
_LAYOUT_METHODS = frozenset(("squeeze", "unsqueeze", "view", "reshape", "flatten", "contiguous", "clone", "detach",
                             "expand", "expand_as", "permute", "transpose", "t", "to", "cuda"))


def _casts(ctx: FileContext, call: cst.Call) -> bool:
    """``x.to(torch.float)`` / ``x.to(dtype=...)`` / ``x.to(other)``: may change the dtype."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"):
        return False
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return True
        if arg.keyword is None and ((ctx.resolve(arg.value) or "").startswith("torch.")
                                    or ctx.kind(arg.value) == TENSOR):
            return True
    return False


def is_bool_mask(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    if depth > 6:
        return False
    if isinstance(expr, cst.Comparison):
        if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons):
            return False
        return ctx.kind(expr) != SCALAR
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return is_bool_mask(ctx, expr.expression, depth + 1) or ctx.kind(expr.expression) == TENSOR \
            and _mask_named(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return is_bool_mask(ctx, expr.left, depth + 1) or is_bool_mask(ctx, expr.right, depth + 1)
    if isinstance(expr, cst.Call):
        return _call_is_mask(ctx, expr, depth)
    if isinstance(expr, cst.Subscript):
        if annotated_dtype(ctx, expr.value) == "Bool":
            return True  # `node_mask[row]` of `node_mask: Bool[Tensor, "n"]`: a gather of booleans
        return _mask_slice(ctx, expr, depth)
    if isinstance(expr, cst.Name):
        if annotated_dtype(ctx, expr) == "Bool":
            return True  # a parameter declared `Bool[Tensor, "n"]`
        binding, _scope = ctx.lookup(expr.value, expr)
        if binding is not None and binding.how == "assign" and binding.value is not None:
            if is_bool_mask(ctx, binding.value, depth + 1):
                return True
            if isinstance(binding.value, cst.UnaryOperation) and isinstance(binding.value.operator, cst.BitInvert) \
                    and _mask_named(expr):
                return True  # `step_mask = ~states.is_sink_state`: `~` of a flag array, named a mask
        if binding is not None and binding.how == "unpack" and isinstance(binding.value, cst.Call):
            resolved = ctx.resolve(binding.value.func) or ""
            if resolved.startswith("torch_geometric") and \
                    binding.index in _PYG_MASK_OUTPUTS.get(resolved.split(".")[-1], ()):
                return True  # `dense, mask = to_dense_batch(x, batch)`
        if binding is not None and binding.how == "unpack" and isinstance(binding.value, cst.Call) \
                and binding.index >= 0 and _returns_mask(ctx, binding.value, binding.index, depth):
            return True  # `state_mask, action_mask = _valid_masks(trajs)`: a local helper returning masks
        if binding is not None and binding.how == "param" and depth == 0 \
                and isinstance(_scope, FuncInfo) and _callers_pass_mask(ctx, _scope, expr.value):
            return True  # `tuple_index(x, idx)` that a caller hands a mask: `x[0][idx]` (GNN008)
        if not _mask_named(expr) or binding is not None and binding.how == "assign" \
                and _integer_index(ctx, binding.value):
            return False  # (2nd: `masked_idx = mask.nonzero().squeeze(-1)`: the positions of a mask, not the mask)
        if binding is not None and binding.how == "unpack" and isinstance(binding.value, cst.Call) and (
                isinstance(binding.value.func, cst.Name) and binding.value.func.value == "self"
                or ctx.kind(binding.value.func) == MODEL):
            return True  # `logits, valid_mask = self(batch)`: a mask the model returns
        kind = ctx.kind(expr)
        if kind == TENSOR or kind == BATCH and binding is not None and binding.how == "assign":
            return True  # BATCH: `pad_mask = batch["features"]["res_atom_mask"]`, a mask field of a dict batch
        # an unannotated parameter called `*mask*` of a function that indexes with it
        return kind not in (SCALAR,) and binding is not None and binding.how == "param" \
            and isinstance(binding.node, cst.Param) and (binding.node.default is None or is_none(binding.node.default))
    if isinstance(expr, cst.Attribute):
        return _mask_named(expr) and ctx.kind(expr) == TENSOR
    return False


def _call_is_mask(ctx: FileContext, expr: cst.Call, depth: int) -> bool:
    """A call whose result is a boolean mask (``torch.isin``, ``x.isnan()``, ``zeros(..., dtype=bool)``,
    ``(a > b).squeeze(0)``, a local helper returning one)."""
    resolved = ctx.resolve(expr.func) or ""
    parts = resolved.split(".")
    if parts[0] == "torch" and len(parts) == 2 and parts[1] in _MASK_FUNCS:
        return True
    if parts[0] == "torch" and len(parts) == 2 and parts[1] in (
            "ones", "zeros", "full", "empty", "ones_like", "zeros_like", "full_like", "empty_like", "rand"):
        return _dtype_is_bool(ctx, expr)
    if parts[0] == "torch_geometric" and parts[-1] in _PYG_MASK_FUNCS:
        return True
    if (isinstance(expr.func, cst.Name) or isinstance(expr.func, cst.Attribute)
            and isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self") \
            and _returns_mask(ctx, expr, -1, depth):
        return True  # `mask = create_node_mask(data, types)`, `self._fluid(batch)`: every return is a mask
    if isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        receiver = expr.func.value
        if method in _MASK_METHODS and ctx.kind(receiver) != SCALAR and not (
                isinstance(receiver, cst.Name) and receiver.value in ctx.aliases):
            return True
        if method in ("to", "type") and expr.args and ctx.resolve(expr.args[0].value) in _BOOL_DTYPES:
            return True
        if method in ("new_ones", "new_zeros", "new_full", "new_empty") and _dtype_is_bool(ctx, expr):
            return True
        if method in ("any", "all") and expr.args and ctx.kind(receiver) == TENSOR:
            return True
        if method in _LAYOUT_METHODS and not _casts(ctx, expr) and is_bool_mask(ctx, receiver, depth + 1):
            return True  # `(a > b).squeeze(0)`, `mask.view(-1)`: the same booleans, another layout
    return False


def _returns_mask(ctx: FileContext, call: cst.Call, index: int, depth: int) -> bool:
    """Every ``return a, b`` of the local function ``call`` runs gives a boolean mask at ``index``
    (``-1``: every ``return mask`` gives one)."""
    func = ctx.local_callee(call)
    if not isinstance(func, FuncInfo) or not func.returns or depth > 3:
        return False
    for ret in func.returns:
        value = ret.value
        if index < 0:
            if value is None or not is_bool_mask(ctx, value, depth + 1):
                return False
        elif not (isinstance(value, cst.Tuple) and index < len(value.elements)) \
                or not is_bool_mask(ctx, value.elements[index].value, depth + 1):
            return False
    return True


def _callers_pass_mask(ctx: FileContext, func, name: str) -> bool:
    """Some call of the local function ``func`` passes a boolean mask for its parameter ``name``."""
    def compute() -> bool:
        for call in ctx.callers_of(func):
            arg = ctx.arg_for_param(func, call, name)
            if arg is not None and is_bool_mask(ctx, arg, 1):
                return True
        return False
    return ctx._memoised((func, "mask_param", name), compute, False)


def _mask_slice(ctx: FileContext, expr: cst.Subscript, depth: int) -> bool:
    """``mask[:, :n]`` (basic slicing: the same booleans, a view) of a boolean
    mask; ``batch["features"]["atom_mask"]``, a ``*mask*`` field of a dict batch."""
    elements = [e.slice for e in expr.slice]
    if all(isinstance(e, cst.Slice) or isinstance(e, cst.Index) and isinstance(e.value, cst.Integer)
           for e in elements) and any(isinstance(e, cst.Slice) for e in elements):
        base = expr.value
        if isinstance(base, cst.Name):  # booleans by value, not by name (`mask_idxs = nonzero(m)`)
            binding, _ = ctx.lookup(base.value, base)
            base = binding.value if binding is not None and binding.how == "assign" else None
        return base is not None and is_bool_mask(ctx, base, depth + 1)
    if len(elements) == 1 and isinstance(elements[0], cst.Index) and isinstance(elements[0].value, cst.Name) \
            and ctx.kind(elements[0].value) == SCALAR and isinstance(expr.value, cst.Name):
        # `node_mask[i]`: graph i's row of a batch of masks (a `*mask*` parameter), the same booleans
        binding, _ = ctx.lookup(expr.value.value, expr.value)
        return binding is not None and binding.how == "param" and is_bool_mask(ctx, expr.value, depth + 1)
    if len(elements) == 1 and isinstance(elements[0], cst.Index) \
            and isinstance(elements[0].value, cst.SimpleString):
        key = elements[0].value.evaluated_value
        return isinstance(key, str) and "mask" in key.lower() and ctx.kind(expr.value) in (BATCH, TENSOR)
    return False


# calls whose result is integer positions (long), whatever the name holding it says
_INDEX_FUNCS = frozenset(("nonzero", "argwhere", "argmax", "argmin", "argsort", "randperm", "arange", "multinomial"))
_INT_CASTS = frozenset(("long", "int"))
_INT_DTYPES = ("torch.long", "torch.int64", "torch.int", "torch.int32")


def _integer_index(ctx: FileContext, value: Optional[cst.BaseExpression]) -> bool:
    """``mask.nonzero().squeeze(-1)``, ``torch.argsort(s)[:k]``, ``mask.long()``: integer positions
    (also through layout methods and slices), so indexing with it is a gather, not a boolean mask."""
    for _ in range(8):
        if isinstance(value, cst.Subscript):
            value = value.value  # `idx[:k]`, `nz[:, 0]`: a slice of positions is positions
            continue
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _INDEX_FUNCS or method in _INT_CASTS:
                return True
            if method in ("to", "type") and value.args and ctx.resolve(value.args[0].value) in _INT_DTYPES:
                return True
        resolved = (ctx.resolve(func) or "").split(".")
        if resolved[0] == "torch" and len(resolved) == 2 and resolved[1] in _INDEX_FUNCS:
            return True
        if not (isinstance(func, cst.Attribute) and func.attr.value in _LAYOUT_METHODS):
            return False
        value = func.value
    return False


def _mask_named(expr: cst.BaseExpression) -> bool:
    name = expr.value if isinstance(expr, cst.Name) else (
        expr.attr.value if isinstance(expr, cst.Attribute) else "")
    return "mask" in name.lower()


_TENSOR_ONLY_METHODS = {"bincount", "long", "diff", "count_nonzero", "cumsum", "numel_per"}


_DIM_METHODS = {"sum", "cumsum", "diff", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "count_nonzero",
                "flatten", "squeeze", "unsqueeze", "view", "reshape"}


def likely_tensor(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``ctx.kind(expr) == TENSOR``, or an expression only a tensor produces:
    a method call with a torch-only signature (``.sum(dim=1)``,
    ``.to(torch.long)``, ``.bincount()``, ``.long()``) on something that is not
    a Python/numpy value, or a name bound to one."""
    if depth > 4:
        return False
    kind = ctx.kind(expr)
    if kind == TENSOR:
        return True
    if kind == SCALAR:
        return False
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        receiver_kind = ctx.kind(expr.func.value)
        if receiver_kind == SCALAR:
            return False
        if method in _TENSOR_ONLY_METHODS:
            return True
        if method in _DIM_METHODS and any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args):
            return True
        if method in ("to", "type") and expr.args and (ctx.resolve(expr.args[0].value) or "").startswith("torch."):
            return True
        return False
    if isinstance(expr, cst.Name):
        if ctx.tensor_narrowing(expr.value, expr) is False:
            return False
        # skipping an assignment under `isinstance(name, Tensor)` (narrowing.py)
        binding = ctx.presumed_binding(expr.value, expr)
        if binding is not None and binding.how == "assign" and binding.value is not None:
            return likely_tensor(ctx, binding.value, depth + 1)
    return False


# array methods (field_uses._ARRAY_METHODS) that return an array again (``x.size(1)``, ``x.numel()``, ``x.dim()`` are ints)
_ARRAY_RESULT_METHODS = ("to", "cuda", "contiguous", "view", "reshape", "cumsum")


def int_or_tensor_is_tensor(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """For an argument that can only be an int or a tensor (``repeat_interleave``'s
    ``repeats``): whether this one is not an int -- ``likely_tensor``, or a value
    used as an array where it is bound (``n_node.shape[0]``, ``n.device``,
    ``n.to(...)``; an int has none of these, a numpy scalar no first dimension),
    or made by such a method (``neighbors = neighbors.to(cell.device)``); ``len(n)`` too (an int has
    no length, and ``repeats`` takes no list); a field ``batch["n"]`` / ``data.n`` of a value the
    function reads the same field of as an array (field_uses.py)."""
    if list_attribute(ctx, expr) is not None:
        return False  # `batch[i].layout[k]` with `batch[i].layout.insert(...)` here: a Python list's element
    if likely_tensor(ctx, expr) or annotated_dtype(ctx, expr) is not None:
        return True  # ... or a parameter declared `Int[Tensor, "b"]` / `Int["n"]` (shape_annotations.py)
    if ctx.kind(expr) == SCALAR:
        return False
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value in _ARRAY_RESULT_METHODS \
            and ctx.kind(expr.func.value) not in (SCALAR, MODEL, BATCH)
    if isinstance(expr, cst.Attribute) and expr.attr.value in GRAPHS_TUPLE_COUNTS \
            and _graphs_tuple(ctx, expr.value):
        return True  # `graph.n_edge` of a jraph GraphsTuple
    if not isinstance(expr, cst.Name):
        return field_used_as_array(ctx, expr)  # `v_data["n"]` with `v_data["n"].shape[0]` here
    reaching = ctx.reaching(expr.value, expr)
    if len(reaching) != 1:
        return False
    binding, func = reaching[0]
    if binding.how == "assign" and binding.value is not None and int_or_tensor_is_tensor(ctx, binding.value):
        return True
    if binding.how == "unpack" and binding.value is not None and _graphs_tuple(ctx, binding.value) \
            and 0 <= binding.index < len(GRAPHS_TUPLE_FIELDS) \
            and GRAPHS_TUPLE_FIELDS[binding.index] in GRAPHS_TUPLE_COUNTS:
        return True  # `nodes, ..., n_node, n_edge = graph`: a GraphsTuple's per-graph counts
    scope = func.node if func is not None else None
    if func is None or len(func.bindings.get(expr.value, ())) != 1:
        return False  # one value in the whole function: its uses elsewhere speak for this one
    return any(used_as_array(ctx, use) for use in ctx.name_uses(expr.value)
               if ctx.enclosing_function(use) is func and any(a is scope for a in ctx.ancestors(use)))


def _graphs_tuple(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """``expr`` is a parameter annotated as jraph's ``GraphsTuple`` (the
    annotation resolved through the file's imports)."""
    if not isinstance(expr, cst.Name):
        return False
    binding = ctx.sole_binding(expr.value, expr, "param")
    if binding is None:
        return False
    param = binding.node
    if not isinstance(param, cst.Param) or param.annotation is None:
        return False
    return (ctx.resolve(param.annotation.annotation) or "") in GRAPHS_TUPLE_CLASSES
