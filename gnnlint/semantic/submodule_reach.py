"""Does a compiled class run this submodule from compiled code?

A module built in ``__init__`` (``self.featuriser = Featuriser()``) runs
inside its owner's compiled forward when the forward (or a method it calls)
calls it. A submodule that only eager methods run -- a Lightning data hook
(``on_after_batch_transfer`` featurising the batch before ``training_step``),
``__init__`` building an example batch -- is not compiled, even though it is a
child module of a compiled one: compiling a module compiles the code its
``forward`` runs, not its children (``bench/evidence/e20_lightning_compiled_hooks.py``:
a submodule only ``on_after_batch_transfer`` calls runs eagerly under
``Trainer.fit`` of a compiled LightningModule).

``eager_only_submodule(ctx, cls, attr)`` answers it while the compiled regions
are being built (regions.py asks it after marking the class's compiled entry
methods, so ``ctx.compiled_funcs`` already holds the methods they reach). It
says True only when it knows every run of ``self.<attr>``: every read of it in
the file sits in a method of ``cls`` or of its local base classes, at least one
read is a run outside ``__init__``, and none is in compiled code. Any read
elsewhere (another class, a module-level function) keeps the old answer:
compiled. A submodule nothing reads (built in ``__init__``, never called)
never runs, unless the class reaches its children by name or iteration.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic import flow
from gnnlint.semantic.model import ClassInfo

if TYPE_CHECKING:
    from gnnlint.context import FileContext

_MAX_DEPTH = 4


def eager_only_submodule(ctx: FileContext, cls: ClassInfo, attr: str) -> bool:
    """``self.<attr>`` of ``cls`` is only read by methods that do not run compiled."""
    owners = _local_lineage(ctx, cls)
    ran = read = False
    for node in flow.attribute_nodes(ctx, attr):
        on_self = isinstance(node.value, cst.Name) and node.value.value == "self"
        if on_self and isinstance(ctx.parent.get(node), cst.AssignTarget):
            continue  # `self.featuriser = ...`: the binding, not a run
        read = True
        if not on_self:
            continue
        func = ctx.enclosing_function(node)
        while func is not None and func.parent is not None:
            if func in ctx.compiled_funcs:
                return False
            func = func.parent
        if func is None or func.cls not in owners:
            return False  # read where we do not know who runs it
        if func in ctx.compiled_funcs:
            return False
        if func.name != "__init__":
            ran = True
    # built and never read (a leftover `self.out_norm = Norm(d)` no method calls): it never runs,
    # unless the class reaches its children by name or by iteration
    return ran or not read and not _reads_children_dynamically(ctx, owners)


_DYNAMIC_CHILDREN = ("children", "modules", "named_children", "named_modules", "_modules", "apply", "__dict__")


def _reads_children_dynamically(ctx: FileContext, owners: list) -> bool:
    """``getattr(self, name)``, ``self.children()``, ``self._modules[...]`` in the class or its local bases."""
    for owner in owners:
        for method in owner.methods.values():
            for call in method.calls:
                func = call.func
                if isinstance(func, cst.Name) and func.value in ("getattr", "vars") and call.args \
                        and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self":
                    return True
        for attr in _DYNAMIC_CHILDREN:
            for node in flow.attribute_nodes(ctx, attr):
                if isinstance(node.value, cst.Name) and node.value.value == "self" \
                        and getattr(ctx.enclosing_function(node), "cls", None) is owner:
                    return True
    return False


def _local_lineage(ctx: FileContext, cls: ClassInfo) -> list:
    """``cls`` and its base classes defined in this file."""
    out, todo = [], [cls]
    while todo and len(out) <= _MAX_DEPTH:
        current = todo.pop()
        if current in out:
            continue
        out.append(current)
        for base in current.bases:
            local = ctx.classes.get(base.split(".")[-1])
            if local is not None:
                todo.append(local)
    return out
