"""The step methods of a compiled LightningModule whose ``training_step`` is a
library base class's.

RL / chemistry / forecasting libraries ship a LightningModule base class that
owns the Lightning hooks and delegates the work of a step to one overridable
method; a project subclasses it and overrides only that method::

    from rl4co.models.zoo.pomo import POMO          # a library LightningModule
    class RouteFinderBase(POMO):
        def __init__(self, env, policy, **kw):
            self.save_hyperparameters(logger=False)
            super().__init__(env, policy, **kw)
            self.normalization = ZNormalization()
        def shared_step(self, batch, batch_idx, phase, dataloader_idx=None):
            td = self.env.reset(batch)
            out = self.policy(td, self.env, phase=phase)
            ...
    # run.py: model = hydra.utils.instantiate(cfg.model, env); model = torch.compile(model); trainer.fit(model)

Lightning's Trainer compiles the step methods of a compiled LightningModule
(``lightning.pytorch.utilities.compile.from_compiled``): the library's
``training_step`` runs compiled, and with it the project's override it calls.
gnnlint never reads the library, so it cannot see which method that is; the
rule is the convention those bases follow: **a compiled class that is a
LightningModule (it calls Lightning's own ``self.save_hyperparameters`` /
``self.log`` / ``self.log_dict`` / ``self.manual_backward`` / ``self.optimizers()`` ...), whose step
hooks are not in this file but inherited from an imported base, runs its
own ``shared_step`` / ``_shared_step`` / ``common_step`` / ``_common_step`` /
``model_step`` / ``step`` / ``_step`` compiled** (the names the library's
``training_step`` delegates to). Asked by ``Regions._mark_class``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gnnlint.semantic.vocab import LIGHTNING_STEP_HOOKS

if TYPE_CHECKING:
    from gnnlint.context import FileContext
    from gnnlint.semantic.model import ClassInfo, FuncInfo

# what a Lightning base class's `training_step` / `validation_step` conventionally delegate to
STEP_DELEGATES = ("shared_step", "_shared_step", "common_step", "_common_step", "model_step", "step", "_step")
# methods only a LightningModule has: a class calling them on `self` is one, whatever its bases are named
_LIGHTNING_SELF_API = ("save_hyperparameters", "log", "log_dict", "manual_backward", "optimizers", "lr_schedulers",
                       "toggle_optimizer", "untoggle_optimizer")
_NOT_LIBRARY_BASES = ("object", "ABC", "Generic", "Module", "nn.Module", "torch.nn.Module")


def library_step_methods(ctx: "FileContext", cls: "ClassInfo") -> list[tuple["FuncInfo", str]]:
    """(method, why) for each step method of the compiled class ``cls`` that
    the step hooks it inherits from an imported base run (see the module
    docstring); empty when ``cls`` defines (here, or in a base of this file)
    any Lightning step hook, has no imported base, or shows no Lightning API."""
    if not any(name in c.methods for c in ctx.local_lineage(cls) for name in STEP_DELEGATES):
        return []  # the cheap gate: nothing such a base would run
    if any(ctx.method_of(cls, hook) is not None for hook in LIGHTNING_STEP_HOOKS):
        return []  # the hooks are here: the callee walk follows what they call
    base = _imported_base(ctx, cls)
    if base is None or not _calls_lightning_api(ctx, cls):
        return []
    out = []
    for name in STEP_DELEGATES:
        method = ctx.method_of(cls, name)
        if method is not None:
            out.append((method, f"compiled `{cls.name}.{name}` (Lightning compiles the step methods of a compiled "
                                f"LightningModule; those `{cls.name}` inherits from `{base}` run `self.{name}`)"))
    return out


def _imported_base(ctx: "FileContext", cls: "ClassInfo") -> "str | None":
    """The first base of ``cls`` or of its local bases that is not a class of
    this file nor ``nn.Module`` / ``object``: the one holding the hooks."""
    for current in ctx.local_lineage(cls):
        for base in current.bases:
            if base.split(".")[-1] in ctx.classes or base in _NOT_LIBRARY_BASES:
                continue
            resolved = ctx.resolve_dotted(base) or base
            if resolved in ("torch.nn.Module", "torch.nn.modules.module.Module") \
                    or resolved.split(".")[-1] == "LightningModule":
                continue  # Lightning's own class has no step of its own
            return base
    return None


def _calls_lightning_api(ctx: "FileContext", cls: "ClassInfo") -> bool:
    """A method of ``cls`` or its local bases calls ``self.save_hyperparameters(...)``,
    ``self.log(...)``, ``self.log_dict(...)``, ``self.manual_backward(...)``,
    ``self.optimizers()`` ... (``_LIGHTNING_SELF_API``)."""
    for current in ctx.local_lineage(cls):
        for method in current.methods.values():
            for call in method.calls:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _LIGHTNING_SELF_API \
                        and isinstance(func.value, cst.Name) and func.value.value == "self":
                    return True
    return False


def forward_elsewhere(ctx: "FileContext", cls: "ClassInfo") -> bool:
    """``cls`` has no ``forward`` / ``__call__`` here: an imported base's
    forward runs it, and that forward may run any submodule the class stores
    (``self.pointer = PointerMoE(...)`` in a subclass of a library decoder whose
    forward calls ``self.pointer``), not only those this file's methods call."""
    return not any(ctx.method_of(cls, entry) is not None for entry in ("forward", "__call__")) \
        and _imported_base(ctx, cls) is not None


def base_stored_args(ctx: "FileContext", cls: "ClassInfo") -> list:
    """What ``cls`` hands its imported base in ``super().__init__(...)``, where
    the base stores it and runs it: an ``__init__`` parameter passed on
    unchanged (``super().__init__(env, policy, **kwargs)``) that the class's
    compiled methods call as ``self.<parameter>(...)`` without ever assigning
    ``self.<parameter>`` (the base stored it under that name), or -- when the
    forward itself is the base's (``forward_elsewhere``) -- every name or
    construction handed over (``super().__init__(encoder=encoder, decoder=decoder)``
    after ``if encoder is None: encoder = MoEEncoder(...)``): that forward runs
    the modules it is given. The nodes, for ``class_of`` / ``model_choices`` (a
    Hydra config's ``policy: {_target_: ...}``, the constructions reaching the
    name). Asked by ``_mark_class`` for a compiled class; empty when its bases
    are all in this file."""
    init = ctx.method_of(cls, "__init__")
    if init is None or _imported_base(ctx, cls) is None:
        return []
    params = {p.name.value for p in init.node.params.params} - {"self"}
    elsewhere = forward_elsewhere(ctx, cls)
    handed, built = {}, []
    for call in init.calls:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
            for arg in call.args:
                if arg.star:
                    continue
                if isinstance(arg.value, cst.Name) and (arg.value.value in params or elsewhere):
                    handed.setdefault(arg.value.value, arg.value)
                elif elsewhere and isinstance(arg.value, cst.Call):
                    built.append(arg.value)
    if elsewhere:
        return [node for node in list(handed.values()) + built if _not_a_plain_object(ctx, node)]
    lineage = list(ctx.local_lineage(cls))
    called = {call.func.attr.value for c in lineage for method in c.methods.values()
              if method in ctx.compiled_funcs for call in method.calls
              if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
              and call.func.value.value == "self"}  # called from compiled code (marked before the submodule walk)
    return [node for name, node in handed.items()
            if name in called and not any(name in c.attrs or name in c.methods for c in lineage)]


def left_to_base(ctx: "FileContext", cls: "ClassInfo", attr: str, values: list) -> bool:
    """``self.<attr>`` of a class whose forward is an imported base's
    (``forward_elsewhere``) is left for that forward to run: no method of the
    class or its local bases runs it itself (``self.<attr>(...)``; those runs
    are followed where they are), and every value stored there may be a module
    (none an instance of a local class that is no module)."""
    for current in ctx.local_lineage(cls):
        for method in current.methods.values():
            for call in method.calls:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == attr \
                        and isinstance(func.value, cst.Name) and func.value.value == "self":
                    return False
    return all(_not_a_plain_object(ctx, value) for value in values)


def _not_a_plain_object(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """A value handed to a base whose forward is run: not an instance of a
    class of this file that is no module and has no imported base (a config
    record, a helper object; a subclass of a library layer may be a module)."""
    from gnnlint.semantic.model import ClassInfo

    cls = ctx.class_of(node, node)
    return not (isinstance(cls, ClassInfo) and not ctx.is_module_class(cls) and _imported_base(ctx, cls) is None)


def super_method(ctx: "FileContext", call: cst.Call) -> "FuncInfo | None":
    """``super().__call__(td=td)`` / ``super(Cls, self).shared_step(...)`` in a
    method of a class of this file: the method of the nearest base class of
    this file that defines it (what the call runs), or None (a base in another
    file or a library). Asked by the compiled callee walk: an override that
    delegates to its base runs the base's body compiled too."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super"):
        return None
    cls = ctx.enclosing_class(call)
    if cls is None:
        return None
    return next((c.methods[func.attr.value] for c in list(ctx.local_lineage(cls))[1:]
                 if func.attr.value in c.methods), None)
