"""ModuleDicts and their keys: "is this a PyG / torch ModuleDict?" and "is this
subscript key a tuple (an edge type)?"

- ``module_dict_kind(ctx, expr, at)``: ``"pyg"`` for
  ``torch_geometric.nn.ModuleDict``/``HeteroConv.convs``, ``"torch"`` for
  ``torch.nn.ModuleDict``, ``"other"`` for a subclass, else None.
- ``tuple_key(ctx, key)``: a literal tuple, or a variable iterating edge
  types (``for edge_type in data.edge_types`` / ``edge_index_dict``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


_PYG_DICTS = ("torch_geometric.nn.ModuleDict", "torch_geometric.nn.module_dict.ModuleDict",
              "torch_geometric.nn.ParameterDict", "torch_geometric.nn.parameter_dict.ParameterDict")


_TORCH_DICTS = ("torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict", "torch.nn.ParameterDict")


_HETERO_CONTAINERS = ("HeteroConv", "HeteroDictLinear")


def _dict_kind_of_name(ctx: FileContext, dotted: Optional[str], seen: set) -> Optional[str]:
    if not dotted:
        return None
    if dotted in _PYG_DICTS:
        return "pyg"
    if dotted in _TORCH_DICTS:
        return "torch"
    last = dotted.split(".")[-1]
    local = ctx.classes.get(last)
    if local is not None and last not in seen:
        seen.add(last)
        for base in local.bases:
            kind = _dict_kind_of_name(ctx, ctx.resolve_dotted(base), seen)
            if kind is not None:
                return "other" if kind == "torch" else kind
    if last in ("ModuleDict", "ParameterDict") and dotted.startswith("torch_geometric"):
        return "pyg"
    return None


def module_dict_kind(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
    """"pyg" / "torch" / "other" when ``expr`` is a ModuleDict/ParameterDict, else None."""
    values: list[cst.BaseExpression] = []
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        cls = ctx.enclosing_class(at)
        if cls is not None:
            values = list(ctx.class_attr_values(cls, expr.attr.value))
    elif isinstance(expr, cst.Name):
        binding, _ = ctx.lookup(expr.value, at)
        if binding is not None and binding.how == "assign" and binding.value is not None:
            values = [binding.value]
    elif isinstance(expr, cst.Attribute) and expr.attr.value == "convs":
        # HeteroConv(...).convs is a PyG ModuleDict keyed by edge types
        owner = ctx.class_name(expr.value, at) or ""
        if owner.split(".")[-1] in _HETERO_CONTAINERS:
            return "pyg"
        return None
    for value in values:
        if isinstance(value, cst.Call):
            resolved = ctx.resolve(value.func)
            kind = _dict_kind_of_name(ctx, resolved, set())
            if kind is not None:
                return kind
    return None


_EDGE_DICT_SUFFIXES = ("edge_index_dict", "edge_attr_dict", "edge_weight_dict", "adj_t_dict",
                       "edge_label_index_dict", "edge_type_dict", "edge_dict", "rel_dict")


def _edge_typed_iterable(ctx: FileContext, iterable: cst.BaseExpression, depth: int = 0) -> bool:
    """An iterable whose elements are edge types (tuples of strings)."""
    if depth > 3:
        return False
    if isinstance(iterable, cst.Call):
        func = iterable.func
        if isinstance(func, cst.Name) and func.value in ("list", "sorted", "tuple", "set", "reversed") and iterable.args:
            return _edge_typed_iterable(ctx, iterable.args[0].value, depth + 1)
        if isinstance(func, cst.Attribute) and func.attr.value in ("keys", "items"):
            owner = func.value
            last = ctx.last_part(owner.func if isinstance(owner, cst.Call) else owner) or ""
            if last.endswith(_EDGE_DICT_SUFFIXES):
                return True
            kind = module_dict_kind(ctx, owner, iterable)
            return kind == "pyg" and _edge_keyed_dict(ctx, owner, iterable)
        if isinstance(func, cst.Attribute) and func.attr.value == "metadata":
            return False
        return False
    if isinstance(iterable, cst.Subscript):
        # metadata[1] / data.metadata()[1]
        base = iterable.value
        last = ctx.last_part(base.func if isinstance(base, cst.Call) else base) or ""
        if last == "metadata" and len(iterable.slice) == 1:
            index = iterable.slice[0].slice
            return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) \
                and index.value.value == "1"
        return False
    last = ctx.last_part(iterable) or ""
    if last in ("edge_types", "edge_type_list", "rel_types", "relations") or last.endswith("edge_types"):
        return True
    if last.endswith(_EDGE_DICT_SUFFIXES):
        return True
    return False


def _edge_keyed_dict(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """A PyG ModuleDict built from a dict keyed by edge types."""
    values: list[cst.BaseExpression] = []
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        cls = ctx.enclosing_class(at)
        if cls is not None:
            values = list(ctx.class_attr_values(cls, expr.attr.value))
    if isinstance(expr, cst.Attribute) and expr.attr.value == "convs":
        return True
    for value in values:
        if isinstance(value, cst.Call) and value.args:
            first = value.args[0].value
            if isinstance(first, cst.DictComp):
                if tuple_key(ctx, first.key, depth=1):
                    return True
                comp = first.for_in
                if isinstance(first.key, cst.Name) and isinstance(comp.target, cst.Name) \
                        and comp.target.value == first.key.value and _edge_typed_iterable(ctx, comp.iter, 1):
                    return True
            if isinstance(first, cst.Dict):
                for element in first.elements:
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.Tuple):
                        return True
    return False


def tuple_key(ctx: FileContext, key: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether a subscript key is a tuple: a literal, or an edge-type variable."""
    if depth > 4:
        return False
    if isinstance(key, cst.Tuple):
        return True
    if isinstance(key, cst.Name):
        binding, func = ctx.lookup(key.value, key)
        if binding is None:
            return False
        if binding.how == "assign":
            return isinstance(binding.value, cst.Tuple) or (
                isinstance(binding.value, cst.Name) and tuple_key(ctx, binding.value, depth + 1))
        if binding.how == "param":
            param = binding.node
            if isinstance(param, cst.Param) and param.annotation is not None:
                text = ctx.module.code_for_node(param.annotation.annotation).strip()
                if text in ("EdgeType", "Tuple[str, str, str]", "tuple[str, str, str]"):
                    return True
            return key.value == "edge_type"
        if binding.how in ("iter", "iter_unpack"):
            iterable = binding.value
            if iterable is None:
                return False
            if binding.how == "iter":
                return _edge_typed_iterable(ctx, iterable)
            # for et, v in d.items() / for i, et in enumerate(edge_types)
            if isinstance(iterable, cst.Call):
                func = iterable.func
                if isinstance(func, cst.Attribute) and func.attr.value == "items" and binding.index == 0:
                    return _edge_typed_iterable(ctx, iterable)
                if isinstance(func, cst.Name) and func.value == "enumerate" and binding.index == 1 and iterable.args:
                    return _edge_typed_iterable(ctx, iterable.args[0].value)
                if isinstance(func, cst.Name) and func.value == "zip" and 0 <= binding.index < len(iterable.args):
                    return _edge_typed_iterable(ctx, iterable.args[binding.index].value)
            return False
    return False
