"""Is ``self.<attr>`` of a local class compiled from outside the class?

A script often builds the object, then compiles one of its submodules in
place::

    trainer_model = EncoderTrainer(model, ...)
    trainer_model.model = torch.compile(trainer_model.model, dynamic=True)
    L.Trainer(...).fit(trainer_model)

From then on the class's own ``self.model(...)`` calls run the compiled
module, exactly as if ``__init__`` had assigned ``torch.compile(model)``.
``compiled_member(ctx, cls, attr)`` answers it from the file's compile sites
(a handful), so it costs nothing in files that compile nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo


def compiled_member(ctx: "FileContext", cls: "ClassInfo", attr: str) -> Optional[str]:
    """``inst.<attr> = torch.compile(...)`` for an instance ``inst`` of ``cls``:
    the compiled target's text, else None."""
    if not ctx.compile_sites:
        return None
    memo = ctx.__dict__.setdefault("_instance_members", {})
    key = (cls, attr)
    if key not in memo:
        memo[key] = None
        for site_node, _site in ctx.compile_sites:
            target = _assigned_member(ctx, site_node, attr)
            if target is not None and _instance_of(ctx, target.value, site_node, cls):
                memo[key] = ctx.module.code_for_node(target)
                break
    return memo[key]


def member_calls(ctx: "FileContext") -> dict[int, str]:
    """id(call) -> what it runs, for the ``self.<attr>(...)`` calls of a local
    class whose instance's ``<attr>`` a compile call of this file replaced."""
    from gnnlint.semantic.model import ClassInfo

    out: dict[int, str] = {}
    for site_node, _site in ctx.compile_sites:
        parent = ctx.parent.get(site_node)
        target = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 else None
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value != "self"):
            continue
        cls = ctx.class_of(target.value, site_node)
        if not isinstance(cls, ClassInfo):
            continue
        what = f"compiled `{ctx.module.code_for_node(target)}`"
        for method in cls.methods.values():
            for call in method.calls:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == target.attr.value \
                        and isinstance(func.value, cst.Name) and func.value.value == "self":
                    out.setdefault(id(call), what)
    return out


def _assigned_member(ctx: "FileContext", call: cst.CSTNode, attr: str) -> Optional[cst.Attribute]:
    """The ``inst.<attr>`` target the compile call's result is assigned to."""
    parent = ctx.parent.get(call)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return None
    target = parent.targets[0].target
    if isinstance(target, cst.Attribute) and target.attr.value == attr and isinstance(target.value, cst.Name) \
            and target.value.value != "self":
        return target
    return None


def _instance_of(ctx: "FileContext", name: cst.Name, at: cst.CSTNode, cls: "ClassInfo") -> bool:
    return ctx.class_of(name, at) is cls
