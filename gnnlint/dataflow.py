"""Old home of the value-flow questions, now in ``gnnlint.semantic`` (issue 14).

Rules ask them through the context (``ctx.compiled_sink(expr)``,
``ctx.is_bool_mask(expr)``, ...); this module only keeps the old
``dataflow.<name>(ctx, ...)`` spellings working for code written before the
split. Answer nothing here: add a question to its module (see
``gnnlint/semantic/README.md``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.semantic.flow import (  # noqa: F401
    TRANSPARENT_METHODS,
    attribute_nodes,
    callers,
    compiled_callee,
    compiled_sink,
    compiled_value,
    is_load,
    is_read,
    name_uses,
)
from gnnlint.semantic.flow import all_calls  # noqa: F401
from gnnlint.semantic.keys import module_dict_kind, tuple_key  # noqa: F401
from gnnlint.semantic.kinds import full_name as _full_name
from gnnlint.semantic.shapes import is_bool_mask, likely_tensor  # noqa: F401
from gnnlint.semantic.syntax import (  # noqa: F401
    arg_of,
    has_star_args,
    is_none,
    literal_string_tuple,
    param_position,
    passed,
)

_is_read = is_read


def full_name(ctx, ref) -> Optional[str]:
    return _full_name(ref)


def class_name(ctx, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> Optional[str]:
    return ctx.class_name(expr, at)
