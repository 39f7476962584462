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


# Module methods that hand back the module or its state, not code that runs on the batch.
_NOT_RUN = frozenset(("to", "eval", "train", "cuda", "cpu", "float", "double", "half", "bfloat16", "type",
                      "parameters", "named_parameters", "modules", "children", "state_dict", "zero_grad",
                      "requires_grad_", "apply", "register_buffer", "forward", "__call__"))
# The separator of a method after a Hydra config group in an exported ref (fact_joins.py's _config_built).
GROUP_MEMBER = "#"


def called_method_choices(ctx: FileContext, func: cst.BaseExpression, call: cst.Call) -> list:
    """``[(FuncInfo | ImportRef, call), ...]`` for ``self.<attr>.<method>(...)``
    (``self.GNN_model.sample(batch)`` in a compiled ``validation_step``): that
    method of each class ``self.<attr>`` may hold -- a local one, an imported
    one (``Class.method``, told to its file), or what a Hydra config group
    builds (``group#method``; the engine names the classes); [] for anything
    else, and for ``to`` / ``eval`` / ``parameters`` and the like."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)
            and isinstance(func.value.value, cst.Name) and func.value.value.value == "self") \
            or func.attr.value in _NOT_RUN or func.attr.value.startswith("__"):
        return []
    cls = ctx.enclosing_class(call)
    if cls is None or ctx.method_of(cls, func.value.attr.value) is not None:
        return []
    method, out = func.attr.value, []
    for choice, _when in ctx.model_choices(func.value, call):
        if isinstance(choice, ClassInfo):
            found = ctx.method_of(choice, method) if choice is not cls and ctx.is_module_class(choice) else None
            if found is not None:
                out.append((found, call))
        elif is_group_ref(choice):
            out.append((ImportRef(choice.module, f"{choice.name}{GROUP_MEMBER}{method}", choice.level), call))
        elif isinstance(choice, ImportRef) and choice.name[:1].isupper() and "." not in choice.name:
            out.append((ImportRef(choice.module, f"{choice.name}.{method}", choice.level), call))
    return out
