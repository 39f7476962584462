"""Shape annotations: "does this parameter's annotation declare a tensor, of
which dtype?"

Code typed with jaxtyping (``x: Float[torch.Tensor, "n 3"]``,
``mask: Optional[Bool[Tensor, "n"]]``), torchtyping (``TensorType["n"]``) or
a project's dtype-and-shape aliases over them (``lens: Int["n"]``) declares
each parameter a tensor and names its dtype family. ``kind`` does not read
these (its annotation patterns are torch's and PyG's); the shape questions
ask here instead, so a declared tensor only changes answers that need it:

- ``annotated_dtype(ctx, expr)``: ``expr`` is a name whose binding
  (``lookup``: no assignment before this read) is a parameter with such an annotation: its dtype family
  (``"Bool"``, ``"Int"``, ``"Float"``, ... or ``"Tensor"`` for
  ``TensorType``), else None. Asked by ``int_or_tensor_is_tensor`` (an
  annotated ``repeats`` is a tensor, GNN004) and ``is_bool_mask`` (a ``Bool``
  parameter, or a gather / slice of one, is a boolean mask, GNN008).

Gate: only a name whose binding is a parameter with a subscript annotation;
the regular expression on that annotation's text runs once per parameter
(memoised), no walk.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext


_SHAPE_ANNOTATION = re.compile(
    r"^(Optional\[)?(jaxtyping\.|jt\.)?(?P<dtype>Float|Int|Bool|Shaped|Num|Integer|Real|UInt|Inexact|Complex|"
    r"Float32|Float64|Int64|Int32|UInt8|BFloat16|Float16)\[\s*((torch\.)?Tensor\s*,|[\"'])|"
    r"^(Optional\[)?(torchtyping\.)?(?P<tt>TensorType)\["
)


def annotated_dtype(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    if not isinstance(expr, cst.Name):
        return None
    binding, _scope = ctx.lookup(expr.value, expr)
    if binding is None or binding.how != "param" or not isinstance(binding.node, cst.Param):
        return None
    annotation = binding.node.annotation
    if annotation is None or not isinstance(annotation.annotation, cst.Subscript):
        return None  # every shape annotation is a subscript: `Float[...]`, `Optional[...]`
    return ctx._memoised(("annotated_dtype", binding.node), lambda: _dtype(ctx, annotation.annotation), None)


def _dtype(ctx: FileContext, annotation: cst.Subscript) -> Optional[str]:
    match = _SHAPE_ANNOTATION.match(ctx.module.code_for_node(annotation).strip())
    if match is None:
        return None
    return "Tensor" if match.group("tt") else match.group("dtype")
