"""Does a compile in a LightningModule's ``setup`` reach this step hook?

The Lightning template compiles in ``setup``, for one stage only::

    def setup(self, stage):
        if self.hparams.compile and stage == "fit":
            self.net = torch.compile(self.net)

Lightning calls ``setup("predict")`` before ``predict_step``: that compile has
not happened, so ``predict_step`` runs ``self.net`` eagerly (a prediction
script builds the module and predicts; it never fits). ``test_step`` may follow
``fit`` in the same process with the compiled net, so it keeps it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from gnnlint.context import FileContext

# the hooks of a stage that never follows another stage's setup in the same module run
_STAGE_OF_HOOK = {"predict_step": "predict"}


def hook_runs_eager(ctx: "FileContext", at: cst.CSTNode) -> bool:
    """``at`` is in a step hook (``predict_step``) of a class whose every
    compile runs in ``setup`` for other stages only: nothing is compiled there."""
    func = _hook_of(ctx, at)
    if func is None or func.cls is None or func.name not in _STAGE_OF_HOOK:
        return False
    memo = ctx.__dict__.setdefault("_stage_eager_classes", {})
    if func.cls not in memo:
        sites = [node for node, _site in ctx.compile_sites
                 if ctx.enclosing_class(node) is func.cls]
        memo[func.cls] = bool(sites) and all(compile_skips_hook(ctx, node, at) for node in sites)
    return memo[func.cls]


def _hook_of(ctx: "FileContext", at: cst.CSTNode):
    """The stage-only step hook ``at`` runs in: its own method, or the one
    hook every call of its helper method sits in (``predict_step`` calling
    ``self.record_preds(...)``, and nothing else calling it)."""
    func = _outermost(ctx.enclosing_function(at))
    if func is None or func.name in _STAGE_OF_HOOK:
        return func
    if func.cls is None:
        return None
    callers = ctx.callers_of(func)
    hooks = {id(h): h for h in (_outermost(ctx.enclosing_function(c)) for c in callers)
             if h is not None and h.cls is func.cls}
    if len(callers) and len(hooks) == 1:
        hook = next(iter(hooks.values()))
        if hook.name in _STAGE_OF_HOOK and all(
                _outermost(ctx.enclosing_function(c)) is hook for c in callers):
            return hook
    return None


def _outermost(func):
    while func is not None and func.parent is not None:
        func = func.parent
    return func


def compile_skips_hook(ctx: "FileContext", compile_value: cst.CSTNode, at: cst.CSTNode) -> bool:
    """``compile_value`` (a compile call) runs in ``setup`` only for stages
    other than the one of the step hook enclosing ``at``."""
    func = _hook_of(ctx, at)
    if func is None or func.name not in _STAGE_OF_HOOK:
        return False
    stage = _STAGE_OF_HOOK[func.name]
    setup = ctx.enclosing_function(compile_value)
    if setup is None or setup.name != "setup":
        return False
    stages = set()
    for anc in ctx.ancestors(compile_value):
        if anc is setup.node:
            break
        if isinstance(anc, cst.If) and _within(ctx, compile_value, anc.body):
            stages |= _stages_required(anc.test)
    return bool(stages) and stage not in stages


def _within(ctx: "FileContext", node: cst.CSTNode, body: cst.CSTNode) -> bool:
    return any(anc is body for anc in ctx.ancestors(node))


def _stages_required(test: cst.BaseExpression) -> set:
    """The stage names ``test`` requires: ``stage == "fit"``, ``... and stage == "fit"``, ``stage in ("fit",)``."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _stages_required(test.left) | _stages_required(test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.left, cst.Name) and test.left.value == "stage":
        target = test.comparisons[0]
        if isinstance(target.operator, cst.Equal) and isinstance(target.comparator, cst.SimpleString):
            return {target.comparator.evaluated_value}
        if isinstance(target.operator, cst.In) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
            values = [e.value for e in target.comparator.elements]
            if all(isinstance(v, cst.SimpleString) for v in values):
                return {v.evaluated_value for v in values}
    return set()
