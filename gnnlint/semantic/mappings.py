"""String-keyed values: "is this name a mapping, not a tensor?"

A tensor is never subscripted with a string: ``loss["total_loss"]`` makes
``loss`` a dict (of tensors, often -- what a model returns as ``loss, out =
self.model(batch)``), whatever kinds.py presumes from the call it came from.
Iterating it yields its keys, Python strings: ``for key in loss:
self.log(f"Training/{key}", loss[key])`` formats no tensor (no sync).

``string_keyed(ctx, name)`` is True when another read of the same variable in
the same function -- reached by the same bindings -- subscripts it with a
string literal. Asked by kinds.py for the element of ``for k in <name>:``.

``mapping_annotation(ctx, annotation)`` reads a parameter's annotation the
same way: ``x_dict: Dict[str, Tensor]`` (``dict[...]``, ``Mapping``,
``Optional[...]`` / ``... | None`` around it) is a dict, not a tensor --
``k in x_dict`` hashes a key, it reads no device value -- whose items are
tensors when its value type says so. Asked by kinds.py for the parameter and
for ``x_dict[k]``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.semantic.returned_tensors import tensor_annotation

if TYPE_CHECKING:
    from gnnlint.context import FileContext


_MAPPING_TYPES = frozenset(("Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict",
                            "defaultdict", "ModuleDict", "ParameterDict"))
NOT_MAPPING, MAPPING, TENSOR_MAPPING = 0, 1, 2


def mapping_annotation(ctx: "FileContext", annotation: Optional[cst.BaseExpression]) -> int:
    """NOT_MAPPING, MAPPING (a dict of values of another or unknown type) or TENSOR_MAPPING
    (``Dict[str, Tensor]``, ``Mapping[EdgeType, torch.Tensor]``) for a parameter's annotation."""
    annotation = _strip_optional(annotation)
    head = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    name = head.value if isinstance(head, cst.Name) else head.attr.value if isinstance(head, cst.Attribute) else ""
    if name not in _MAPPING_TYPES:
        return NOT_MAPPING
    if not isinstance(annotation, cst.Subscript) or len(annotation.slice) != 2:
        return MAPPING
    value = annotation.slice[1].slice
    value = value.value if isinstance(value, cst.Index) else None
    return TENSOR_MAPPING if tensor_annotation(ctx, _strip_optional(value)) else MAPPING


def tensor_mapping_param(ctx: "FileContext", expr: cst.BaseExpression) -> bool:
    """``expr`` is a module forward's parameter annotated as a dict of tensors: ``feats[k]`` is a tensor."""
    if not isinstance(expr, cst.Name):
        return False
    reaching = ctx.reaching(expr.value, expr)
    # only a module's forward (where an unannotated input was presumed a tensor anyway): an evaluation
    # helper's `target: dict[str, Tensor]` often holds CPU tensors (`target["natoms"].tolist()`)
    return bool(reaching) and all(
        b.how == "param" and isinstance(b.node, cst.Param) and b.node.annotation is not None
        and f is not None and f.name == "forward" and f.cls is not None and ctx.is_module_class(f.cls)
        and mapping_annotation(ctx, b.node.annotation.annotation) == TENSOR_MAPPING for b, f in reaching)


def _strip_optional(annotation: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """``Optional[X]`` / ``X | None`` / ``None | X`` -> ``X``; a string annotation is left alone."""
    if isinstance(annotation, cst.Subscript) and len(annotation.slice) == 1 \
            and (annotation.value.value if isinstance(annotation.value, cst.Name) else
                 annotation.value.attr.value if isinstance(annotation.value, cst.Attribute) else "") == "Optional":
        index = annotation.slice[0].slice
        return index.value if isinstance(index, cst.Index) else None
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        for keep, other in ((annotation.left, annotation.right), (annotation.right, annotation.left)):
            if isinstance(other, cst.Name) and other.value == "None":
                return keep
    return annotation


def string_keyed(ctx: "FileContext", name: cst.Name) -> bool:
    reaching = ctx.reaching(name.value, name)
    if not reaching:
        return False
    ids = {id(b) for b, _f in reaching}
    func = ctx.enclosing_function(name)
    for use in ctx.name_uses(name.value):
        if use is name or ctx.enclosing_function(use) is not func:
            continue
        parent = ctx.parent.get(use)
        if not (isinstance(parent, cst.Subscript) and parent.value is use and len(parent.slice) == 1):
            continue
        index = parent.slice[0].slice
        if not (isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.ConcatenatedString))):
            continue
        if {id(b) for b, _f in ctx.reaching(use.value, use)} == ids:
            return True
    return False
