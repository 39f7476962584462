"""Which classes may the submodule a compiled function calls be?

``self.encoder(batch)`` inside a compiled method runs the forward of the
class stored in ``self.encoder``. When ``class_of`` has no single answer --
the class is chosen at run time (a factory, a Hydra config filling the
constructor parameter, ``A() if c else B()``) -- ``called_choices(ctx, func,
call)`` answers with every class ``model_choices`` (choices.py) names for it,
as the compiled-forward walk of a class already does for its submodules
(regions.py, ``_mark_class``; for a compiled class that walk answers, with
each choice's condition, so this one stays out). Asked by regions.py's callee walk
(``_callees``) for calls that are not local functions or methods.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.config_targets import is_group_ref
from gnnlint.facts import ImportRef
from gnnlint.semantic.model import ClassInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def called_choices(ctx: FileContext, func: cst.BaseExpression, call: cst.Call) -> list:
    """``[(ClassInfo | ImportRef, call), ...]`` for ``self.<attr>(...)`` whose
    class is chosen at run time; [] for anything else."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return []
    cls = ctx.enclosing_class(call)
    if cls is None or ctx.method_of(cls, func.attr.value) is not None:
        return []  # self.method(...): a method, not a submodule
    if cls.name in ctx.compiled_classes:
        return []  # a compiled class: its own submodule walk names these, with the condition choosing each
    out = []
    for choice, _when in ctx.model_choices(func, call):
        if isinstance(choice, ClassInfo) and choice is not cls and ctx.is_module_class(choice) \
                or isinstance(choice, ImportRef) and (is_group_ref(choice) or choice.name[:1].isupper()):
            out.append((choice, call))
    return out
