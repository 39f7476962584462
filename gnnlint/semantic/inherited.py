"""Calls that run a compiled attribute through a method inherited from a base
class in another file.

A trainer class compiles its model in ``__init__`` and takes its training
step from a base class the project defines elsewhere::

    from train_base import BaseTrainer
    class GraphCastTrainer(BaseTrainer):
        def __init__(self, cfg):
            self.model = torch.compile(GraphCastNet(...))
    ...
    for data in datapipe:
        loss = trainer.train(x, y)      # BaseTrainer.train runs self.model

``method_callee`` finds no local ``train`` (the base is not in this file), so
the loop looked as if it ran no compiled code. A method the instance takes
from an imported base class, called on an instance of a local class that
holds a compiled attribute, is read as running that compiled attribute
(housekeeping methods -- ``parameters``, ``state_dict``, ``eval`` ... -- and
private ones excepted).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.vocab import MODULE_HOUSEKEEPING

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def inherited_compiled_calls(ctx: "FileContext") -> dict[int, str]:
    """id(call) -> what compiled code it runs, for ``obj.method(...)`` calls
    whose method an instance of a local class holding a compiled ``self.<attr>``
    inherits from a base class imported from another file of the project.
    Asked by the hot-loop analysis (such a call runs the model: a step) and
    by the step analysis (the loop drives compiled code)."""
    return ctx._memoised(("inherited_compiled_calls",), lambda: _inherited_calls(ctx), {})


def _inherited_calls(ctx: "FileContext") -> dict[int, str]:
    from gnnlint.semantic.model import ClassInfo

    holders: dict = {}  # ClassInfo -> compiled attribute
    for site_node, _site in ctx.compile_sites:
        for ref in ctx.compiled_refs(site_node):
            if ref[0] == "self" and len(ref) > 2 and isinstance(ref[2], ClassInfo):
                holders.setdefault(ref[2], ref[1])
    out: dict[int, str] = {}
    if not holders:
        return out
    for call in ctx.all_calls():
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            continue
        method = func.attr.value
        if method.startswith("_"):
            continue
        owner = _constructed(ctx, func.value, call, holders)
        if owner is None:
            continue
        if method in MODULE_HOUSEKEEPING and not (method == "train" and call.args
                                                  and not ctx.is_module_class(owner)):
            continue  # `trainer.train(x, y)` of a trainer is its step, `model.train()` a mode switch
        if ctx.method_of(owner, method) is not None:
            continue  # a local method: the step analysis reads its body
        base = _imported_base(ctx, owner)
        if base is None:
            continue
        out[id(call)] = (f"compiled `self.{holders[owner]}` of `{owner.name}` (through `{method}`, "
                         f"inherited from `{base}`)")
    return out


def _constructed(ctx: "FileContext", name: cst.Name, at: cst.CSTNode, holders: dict):
    """The class of ``holders`` that every value ``name`` may hold is built by
    (``trainer = GraphCastTrainer(cfg)``), or None."""
    reaching = ctx.reaching(name.value, at)
    owners = set()
    for binding, _func in reaching:
        value = binding.value
        if binding.how != "assign" or not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        cls = ctx.classes.get(value.func.value)
        if cls is None or cls not in holders:
            return None
        owners.add(cls)
    return owners.pop() if len(owners) == 1 else None


def _imported_base(ctx: "FileContext", cls) -> "str | None":
    """The first base of ``cls`` (or of its local bases) imported from a
    project module -- not torch, not an installed library's dotted name."""
    for current in ctx.local_lineage(cls):
        for base in current.bases:
            if ctx.classes.get(base.split(".")[-1]) is not None:
                continue  # a local base: its own bases come next in the lineage
            ref = ctx.imports.get(base.split(".")[0])
            if ref is None or "." in base:
                continue
            root = ref.module.split(".")[0] if ref.module else ref.name
            if ref.level or not _installed_library(root):
                return base
    return None


# packages whose classes are not the project's own (a base class from them
# is a framework's, whose methods gnnlint reads elsewhere or not at all)
_LIBRARIES = ("torch", "torch_geometric", "lightning", "pytorch_lightning", "dgl", "transformers",
              "accelerate", "ignite", "jax", "flax", "numpy", "typing", "abc", "collections", "dataclasses")


def _installed_library(root: str) -> bool:
    return root in _LIBRARIES


def inherited_forward_base(ctx: "FileContext", cls):
    """``class MACEStack(Base)`` with ``Base`` imported from another project
    file and no ``forward`` here: the ImportRef of that base, whose file
    holds the forward a compiled instance runs (asked by ``_mark_class``)."""
    if any(ctx.method_of(cls, entry) is not None for entry in ("forward", "__call__")):
        return None
    base = _imported_base(ctx, cls)
    return ctx.imports.get(base) if base is not None else None


def export_compiled_hooks(ctx: "FileContext") -> None:
    """A class of this file compiled because a subclass in another file
    inherits its forward: the methods its compiled code calls on ``self``
    (``self._embedding(data)``), told to the files importing it, where a
    subclass's override of them runs compiled too (``mark_compiled_hooks``)."""
    for cls in ctx.classes.values():
        why = ctx.compiled_classes.get(cls.name)
        if why is None or "(inherited from" not in ctx.project.compiled.get(cls.name, ""):
            continue
        names = sorted({call.func.attr.value for func in ctx.compiled_funcs if func.cls is cls
                        for call in func.calls
                        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                        and call.func.value.value == "self" and ctx.enclosing_function(call) is func})
        if names:
            ctx.exported.compiled_hooks.append((ImportRef("", cls.name), f"{','.join(names)}: {why}"))


def mark_compiled_hooks(ctx: "FileContext") -> None:
    """A compiled class of this file whose forward is an imported base's:
    its own methods that base's compiled code calls on ``self`` (the hooks
    the base told, ``export_compiled_hooks``) run compiled."""
    if not ctx.project.compiled_hooks:
        return
    for cls in list(ctx.classes.values()):
        if cls.name not in ctx.compiled_classes:
            continue
        base = _imported_base(ctx, cls)
        told = ctx.project.compiled_hooks.get(base or "")
        if told is None:
            continue
        for name in told.split(":", 1)[0].split(","):
            method = ctx.method_of(cls, name)
            if method is not None:
                ctx._mark_compiled_func(method, f"compiled forward of `{cls.name}` (`{base}.forward` calls "
                                                f"`self.{name}`)")
