"""Compiled modules another module holds: "is what this ``torch.compile``
compiles a submodule of the class compiling it?"

``self.autoencoder = torch.compile(self.autoencoder)`` in a method of a
module class (a LightningModule's ``setup``, an ``nn.Module``'s
``__init__``) stores the compiled wrapper in the owner: its forward runs
compiled when the owner calls it, but Lightning's Trainer runs the *owner's*
step methods -- the held LightningModule's ``training_step`` /
``validation_step`` never run, compiled or not (a pretrained autoencoder
inside a latent-diffusion LightningModule). ``held_by_module(ctx, call)``
gives the mark regions.py appends to the compile's reason (`` (held in
`LDM.autoencoder`)``); ``Regions._mark_class`` then marks the forward and
leaves the step methods (``HELD_IN in why``). Also the mark of
``_mark_held`` (an attribute another file compiles).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from gnnlint.context import FileContext

HELD_IN = "(held in "


def held_by_module(ctx: "FileContext", call: Optional[cst.Call]) -> str:
    """`` (held in `Owner.attr`)`` when ``call``'s result is assigned to
    ``self.<attr>`` in a method of a module class, else ``""``."""
    stmt = ctx.parent.get(call) if call is not None else None
    if not isinstance(stmt, cst.Assign):
        return ""
    func = ctx.enclosing_function(call)
    if func is None or func.cls is None or not ctx.is_module_class(func.cls):
        return ""
    for target in stmt.targets:
        node = target.target
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return f" {HELD_IN}`{func.cls.name}.{node.attr.value}`)"
    return ""


def compiled_self(ctx: "FileContext", target: cst.BaseExpression, call: cst.Call):
    """``return torch.compile(self, **kw)`` in a method of a module class (``model =
    model.get_compile(dynamic=True)``): the class compiles itself for whoever calls the method,
    so its forward is compiled (not every instance, unlike ``self.forward = torch.compile(...)``).
    The ``ClassInfo``, or None."""
    if not (isinstance(target, cst.Name) and target.value == "self"):
        return None
    func = ctx.enclosing_function(call)
    if func is None or func.cls is None or func.parent is not None or not func.params \
            or next(iter(func.params)) != "self" or not ctx.is_module_class(func.cls):
        return None
    binding = ctx.lookup("self", call)[0]
    return func.cls if binding is not None and binding.how == "param" else None
