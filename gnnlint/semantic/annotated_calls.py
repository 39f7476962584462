"""Which project methods does a compiled function run through a typed parameter or an imported base?

A script compiles a closure around a method of the project's base class and builds the subclasses::

    # train.py
    from gfn.gflownet import PFBasedGFlowNet, TBGFlowNet, ModifiedDBGFlowNet

    def prepare_loss_fn(gflownet: PFBasedGFlowNet, args):
        def loss_wrapper(env, batch):
            return gflownet.loss(env, batch)       # compiled: the loss of whichever class gflownet is
        return torch.compile(loss_wrapper, mode=args.mode)

    gflownet = TBGFlowNet(pf, pb) if args.tb else ModifiedDBGFlowNet(pf, pb)

    # gflownet/trajectory_balance.py
    class TBGFlowNet(TrajectoryBasedGFlowNet):     # TrajectoryBasedGFlowNet imported from base.py
        def loss(self, env, trajectories):
            scores = self.get_scores(trajectories)  # the base's get_scores, compiled

- ``annotated_methods``: ``obj.m(...)`` in compiled code, ``obj`` a parameter (of the function or of the
  function it is nested in) annotated with an imported project class ``C``: ``C.m`` and ``X.m`` for each
  imported project class ``X`` this file (the program) builds -- the classes the object may be. Not every
  subclass of ``C`` in the project: a subclass no compiling program builds never runs compiled. Each is a
  ``compiled`` fact for the class's file (regions.py marks that method, ``_mark_member``), as
  ``called_method_choices`` tells ``self.<attr>.m(...)``;
- ``inherited_self_method``: ``self.m(...)`` of a method whose class gets ``m`` from an imported base:
  ``Base.m``, told to the base's file.
Both are asked by the compiled callee walk (regions.py ``_callees``) for calls nothing else answers; the
gates are exact: a parameter annotated with an imported class name; an imported base.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from gnnlint.facts import ImportRef
from gnnlint.semantic.called_choices import _NOT_RUN
from gnnlint.semantic.classes import _LIBRARIES

if TYPE_CHECKING:
    from gnnlint.context import FileContext


def _project_class(ctx: "FileContext", name: str) -> Optional[ImportRef]:
    """The import of a capitalised project class bound to ``name`` (not a library's)."""
    ref = ctx.imports.get(name)
    if ref is None or not ref.name or not ref.name[:1].isupper() or "." in ref.name:
        return None
    if not ref.level and ref.module.split(".")[0] in _LIBRARIES:
        return None
    return ref


def _built_classes(ctx: "FileContext") -> list:
    """The imported project classes this file constructs (``TBGFlowNet(pf=pf)``), memoised."""
    key = ("annotated_calls.built",)
    if key not in ctx._memo:
        names: dict[str, ImportRef] = {}
        calls = list(ctx.module_calls) + [call for info in ctx.func_info.values() for call in info.calls]
        for call in calls:
            if isinstance(call.func, cst.Name) and call.func.value not in names:
                ref = _project_class(ctx, call.func.value)
                if ref is not None and ctx.lookup(call.func.value, call)[0] is None:
                    names[call.func.value] = ref
        ctx._memo[key] = list(names.values())
    return ctx._memo[key]


def annotated_methods(ctx: "FileContext", func: cst.BaseExpression, call: cst.Call) -> list:
    """``[ImportRef("C.m"), ImportRef("X.m"), ...]`` for ``obj.m(...)`` with ``obj`` a parameter annotated
    ``obj: C`` (C imported from the project); [] for anything else."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) \
            or func.value.value == "self" or func.attr.value in _NOT_RUN or func.attr.value.startswith("__"):
        return []
    binding, _ = ctx.lookup(func.value.value, call)
    if binding is None or binding.how != "param" or not isinstance(binding.node, cst.Param) \
            or binding.node.annotation is None or not isinstance(binding.node.annotation.annotation, cst.Name):
        return []
    ref = _project_class(ctx, binding.node.annotation.annotation.value)
    if ref is None:
        return []
    method = func.attr.value
    out = [ImportRef(ref.module, f"{ref.name}.{method}", ref.level)]
    out += [ImportRef(built.module, f"{built.name}.{method}", built.level) for built in _built_classes(ctx)
            if built.name != ref.name]
    return out


def inherited_self_method(ctx: "FileContext", func: cst.BaseExpression, call: cst.Call) -> Optional[ImportRef]:
    """``Base.m`` for ``self.m(...)`` in a class that neither defines ``m`` nor stores ``self.m`` here,
    with an imported project base (the first one, as Python's lookup goes); None for anything else."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self") \
            or func.attr.value in _NOT_RUN or func.attr.value.startswith("__"):
        return None
    cls = ctx.enclosing_class(call)
    if cls is None:
        return None
    return inherited_method(ctx, cls, func.attr.value)


def inherited_method(ctx: "FileContext", cls: "ClassInfo", name: str) -> Optional[ImportRef]:
    """``Base.name`` when ``cls`` neither defines nor stores ``name`` here and gets it from an imported
    project base (``torch.compile(sim.run)`` in another file, ``run`` defined by ``Dynamics``)."""
    lineage = list(ctx.local_lineage(cls))
    if any(name in c.methods or name in c.attrs for c in lineage):
        return None
    for current in lineage:
        for base in current.bases:
            if base in ctx.classes or "." in base:
                continue
            ref = _project_class(ctx, base)
            if ref is not None:
                return ImportRef(ref.module, f"{ref.name}.{name}", ref.level)
    return None
