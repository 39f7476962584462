from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import ClassInfo, FuncInfo, arg_of
from gnnlint.rules.base import Invalid, Rule, Valid
from gnnlint.versions import measured, recompile_limit_name

_DROPOUTS = {"torch.nn.functional.dropout", "torch.dropout", "torch.nn.functional.dropout1d",
             "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout"}
_LIST_GROWERS = {"append", "extend", "insert"}


class RecompileLimitEager(Rule):
    """
    ## What it does
    Flags the recompile storms that end in **silent eager execution**:

    - **(a) a new model compiled per trial, fold or configuration** in one
      process — `torch.compile` in a loop (or in an Optuna-style
      `objective(trial)`) over a model built from the loop's values (hidden
      size, layer count, dropout) — with no `torch._dynamo.reset()` /
      `torch.compiler.reset()` in the loop; also in a function that builds
      the model from its parameters (`def run_config(hidden): ...`) when
      this file, or another file of the project (the sweep script), calls it
      in such a loop;
    - **(b) an int attribute of a compiled module that changes**:
      `self.step += 1` in a compiled forward, or `model.epoch = epoch` in a
      loop when the compiled forward reads `self.epoch`;
    - **(c) `.append` / `.extend` on a persistent list from compiled code**:
      a list attribute built in `__init__` (`self.history = []`) or a
      module-level list, not reset earlier in the same compiled function;
    - **(d) a changing float passed as dropout `p`**: `F.dropout(x, p=p)`
      where `p` is a float parameter of the compiled function.

    `dynamic=False` on a model fed variable-size batches, the fifth storm,
    is GNN007's finding, reported there with error severity.

    ## Why is this bad?
    Dynamo guards on each of these values (an int attribute of a module is
    static, a list's length is guarded, a float `p` is specialised, a new
    model's parameter shapes or layer count fail the guards). Every new
    value recompiles, and after `recompile_limit` (8) dynamo stops trying:
    **the code runs uncompiled from then on, with only a warning in the
    log**. Measured on torch 2.13.0 + torch_geometric 2.8.1 with a tick that
    counts the calls whose forward really ran compiled: **8 of 20 calls
    compiled** for (b), (c) and (d)
    (`shared/evidence/torch-2.13-pyg-2.8.1/e11h_fallback_proof.py`,
    `e03_python_scalars.py`, `e11b_list_append.py`); for (a), runs 9–12 of a
    12-configuration sweep ran **0 of 3 calls compiled**, with `dynamic=True`
    too, while a `torch._dynamo.reset()` per run compiles every run
    (`e11c_new_model_per_run.py`; inductor the same, `e12`). Only torch 2.13
    was measured; the limit (8, `cache_size_limit` before 2.6) exists in
    every version with `torch.compile`.

    `gnnlint verify` confirms each storm by the recompile whose failed guard
    names the finding's value (`self.calls == 3` at the `+=`,
    `len(self.history) == 2` at the `.append`, `self.epoch == 5` where the
    forward reads what the loop sets, `p == 0.25` for the dropout rate, a
    parameter's shape at the compile call of a sweep) and counts the calls
    that still ran compiled. Dynamo names only the **first** failing guard
    of a frame, so when several storms share one forward, verify can confirm
    only the first of them; the others read "not reproduced" although they
    recompile too (`fixtures/recompile_storm_hazard.py` keeps each storm in
    a model of its own for that reason).

    ## Example
    ```python
    for hidden in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096):
        model = torch.compile(GCN(in_dim, hidden, out_dim))
        train(model)              # the 9th configuration runs eagerly
    ```

    ## Use instead
    ```python
    for hidden in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096):
        torch._dynamo.reset()     # a fresh cache per configuration
        model = torch.compile(GCN(in_dim, hidden, out_dim))
        train(model)
    ```
    (b) keep a counter in a registered buffer updated in place, or set
    `torch._dynamo.config.allow_unspec_int_on_nn_module = True` (1
    recompile); a plain object's counter (`Normalizer.num_rec += 1`, not an
    `nn.Module`) recompiles the same way (8 graphs in 20 calls) and the
    config does not cover it: keep it in a 0-d tensor updated in place (1
    graph; `bench/evidence/e30_plain_object_int_attr.py`); (c) reset the list at the start of forward, return the
    values, or write into a preallocated buffer (0 recompiles); (d) keep `p`
    constant, or pass it as a 0-d tensor and use a mask (0 recompiles).

    ## Fix safety
    No automatic fix: where to reset, or how to restructure the state,
    depends on the program.

    ## References
    - [torch.compile: recompilation](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - Evidence: `shared/evidence/torch-2.13-pyg-2.8.1/report.md` (3c, 3d, 3e, 10i, section C)
    """

    code = "GNN015"
    name = "recompile-limit-eager"
    summary = "Recompile storm that ends in silent eager (`recompile_limit`): model per trial, changing int attribute, list append, float dropout p"
    region = "compiled"
    severity = "error"  # after 8 recompiles the code silently runs eagerly
    torch_versions = ">=2.0"
    triggers = (b"compile", b"+=", b"append", b"extend", b"insert", b"dropout")

    VALID = (
        Valid("""
import torch
for hidden in (16, 32, 64):
    torch._dynamo.reset()
    model = torch.compile(GCN(8, hidden, 2))
for epoch in range(100):
    model = torch.compile(base_model)  # re-wrapping one model: no recompile
"""),
        Valid("""
import torch
import torch.nn.functional as F
class Net(torch.nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p
        self.alpha = 0.1
        self.register_buffer("step", torch.zeros((), dtype=torch.long))
    def forward(self, x):
        self.step += 1
        out = []
        for i in range(3):
            out.append(x * i)
        return F.dropout(torch.stack(out), p=self.p, training=self.training) * self.alpha
model = torch.compile(Net())
for epoch in range(10):
    model.alpha = 0.1 * epoch
"""),
    )
    INVALID = (
        Invalid("""
import torch
def objective(trial):
    hidden = trial.suggest_int("hidden", 16, 256)
    model = GCN(8, hidden, 2)
    model = torch.compile(model)
    return train(model)
for hidden in [16, 32, 64]:
    for fold in range(5):
        net = torch.compile(GCN(8, hidden, 2), dynamic=True)
""", lines=(6, 10)),
        # a helper that compiles a model from its parameters, called per configuration
        # (from this file, or from another: the project index says so)
        Invalid("""
import torch
def run_config(hidden, data):
    model = torch.compile(GCN(8, hidden, 2))
    return model(data.x, data.edge_index)
def run_reset(hidden, data):
    torch._dynamo.reset()
    return torch.compile(GCN(8, hidden, 2))(data.x, data.edge_index)
for hidden in (16, 32, 64):
    run_config(hidden, data)
    run_reset(hidden, data)
for fold in range(5):
    torch._dynamo.reset()
    run_config(64, data)
""", lines=(4,)),
        Invalid("""
import torch
import torch.nn.functional as F
HISTORY = []
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0
        self.epoch = 0
        self.att = []
    def forward(self, x, p: float):
        self.step += 1
        self.att.append(x.mean())
        HISTORY.append(x.detach())
        x = F.dropout(x, p=p, training=True)
        return x * (self.epoch < 10)
model = torch.compile(Net())
for ep in range(100):
    model.epoch = ep
""", lines=(12, 13, 14, 15, 19)),
    )

    # ------------------------------------------------------------------ (a)
    def visit_Module(self, node: cst.Module) -> None:
        ctx = self.context
        for site_node, site in ctx.compile_sites:
            if not isinstance(site_node, cst.Call) or site.target_kind in ("optimizer_step", "function", "method"):
                continue
            ctor = _built_here(ctx, site_node)
            if ctor is None:
                continue
            loop, what = self._per_run(site_node, ctor)
            if loop is None:
                continue
            self.report(site_node, f"A new `{ctx.module.code_for_node(ctor.func)}` is compiled {what} with no "
                                   f"`torch._dynamo.reset()`: past {_limit(ctx)} the later runs silently run "
                                   f"eagerly. Each configuration recompiles, with `dynamic=True` too"
                                   f"{_measured(ctx, 'runs 9-12 of 12 ran 0 of 3 calls compiled')}; call "
                                   f"`torch._dynamo.reset()` at the start of each run.")

    def _per_run(self, site_node: cst.Call, ctor: cst.Call) -> tuple[Optional[cst.CSTNode], str]:
        ctx = self.context
        func = ctx.enclosing_function(site_node)
        for loop in _loops_around(ctx, site_node):
            if ctx.args_mention(ctor, ctx.loop_varying_names(loop)):
                if ctx.resets_compiles(loop.body):
                    return None, ""
                return loop, f"in every iteration of `for {ctx.module.code_for_node(loop.target)} in ...`"
        if func is not None and "trial" in func.params \
                and ctx.args_mention(ctor, {"trial"} | ctx.names_bound_in(func.node.body)) \
                and not ctx.resets_compiles(func.node.body):
            return func.node, f"per trial in `{func.qualname}(trial)`"
        if func is not None and ctx.args_mention(ctor, set(func.params)) and not ctx.resets_compiles(func.node.body):
            # def run(hidden): torch.compile(GCN(hidden)), run per iteration of a sweep (here or elsewhere)
            sweep = ctx.sweep_of(func)
            if sweep is not None:
                return func.node, f"on every call of `{func.qualname}` ({sweep})"
        return None, ""

    # ------------------------------------------------------------------ (b), (c)
    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        ctx = self.context
        attr = _self_attr(node.target)
        if attr is None or ctx.compiled_region(node) is None:
            return
        cls = ctx.enclosing_class(node)
        if cls is None or not _init_is(ctx, cls, attr, cst.Integer):
            return
        if not ctx.is_module_class(cls):  # a plain object's int: the same specialization, not the module remedies
            self.report(node, f"`self.{attr}` is an int attribute that changes on every call: each value recompiles, "
                              f"and after {_limit(ctx)} the forward silently runs eagerly. Dynamo treats the int "
                              f"attributes of `{cls.name}` objects as constants"
                              f"{_measured(ctx, '8 of 20 calls compiled; e30')}; keep it in a 0-d tensor updated "
                              f"in place.")
            return
        self.report(node, f"`self.{attr}` is an int attribute that changes on every call: each value recompiles, "
                          f"and after {_limit(ctx)} the forward silently runs eagerly. Dynamo treats module int "
                          f"attributes as constants{_measured(ctx, '8 of 20 calls compiled')}; keep it in a "
                          f"registered buffer updated in place, or set "
                          f"`torch._dynamo.config.allow_unspec_int_on_nn_module = True`.")

    def visit_Assign(self, node: cst.Assign) -> None:
        ctx = self.context
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Attribute):
            return
        target = node.targets[0].target
        owner = target.value
        if not isinstance(owner, cst.Name) or owner.value == "self":
            return
        loop = ctx.loop_around(node)
        if not isinstance(loop, cst.For) or not _int_loop(ctx, loop, node.value):
            return
        cls = ctx.class_of(owner, node)
        compiled = ctx.compiled_value(owner, node)
        if cls is None and compiled is not None:  # model = torch.compile(Net())
            ctor = ctx.constructor_of(owner, node)
            cls = ctx.class_of(ctor.func, node) if ctor is not None else None
            cls = ctx.classes.get(ctx.last_part(ctor.func) or "") if ctor is not None and cls is None else cls
        if not isinstance(cls, ClassInfo) or (cls.name not in ctx.compiled_classes and compiled is None):
            return
        attr = target.attr.value
        if not ctx.attr_uses(cls, attr):
            return
        self.report(node, f"`{owner.value}.{attr}` is set to a new int every iteration: each value recompiles the "
                          f"compiled forward of `{cls.name}`, which silently runs eagerly after {_limit(ctx)}. "
                          f"It reads `self.{attr}`, and module int attributes are static"
                          f"{_measured(ctx, '8 of 20 calls compiled')}; pass it as a tensor, keep it in a buffer, "
                          f"or set `torch._dynamo.config.allow_unspec_int_on_nn_module = True`.")

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _LIST_GROWERS:
            self._list_growth(node, func)
            return
        if (ctx.resolve(func) or "") in _DROPOUTS:
            self._dropout_p(node)

    def _list_growth(self, node: cst.Call, func: cst.Attribute) -> None:
        ctx = self.context
        owner = func.value
        region = ctx.compiled_region(node) if isinstance(owner, (cst.Attribute, cst.Name)) else None
        if region is None:
            return
        info = ctx.enclosing_function(node)
        attr = _self_attr(owner)
        if attr is not None:
            cls = ctx.enclosing_class(node)
            if cls is None or not _init_is(ctx, cls, attr, (cst.List,)) or _reset_before(ctx, info, owner, node):
                return
            what = f"`self.{attr}`"
        elif isinstance(owner, cst.Name):
            binding, scope = ctx.lookup(owner.value, node)
            if scope is not None or binding is None or not isinstance(binding.value, cst.List):
                return  # a local list (or unknown): fine
            what = f"the module-level list `{owner.value}`"
        else:
            return
        self.report(node, f"`.{func.attr.value}` on {what} from the {region}: every call recompiles, and after "
                          f"{_limit(ctx)} it silently runs eagerly. Dynamo guards on the list's length"
                          f"{_measured(ctx, '8 of 20 calls compiled')}; return the values, reset the list at the "
                          f"start of forward, or write into a preallocated buffer.")

    # ------------------------------------------------------------------ (d)
    def _dropout_p(self, node: cst.Call) -> None:
        ctx = self.context
        arg = arg_of(node, "p", 1)
        if arg is None or not isinstance(arg.value, cst.Name):
            return
        info = ctx.enclosing_function(node)
        if info is None or arg.value.value not in info.params or ctx.compiled_region(node) is None:
            return
        param = info.params[arg.value.value]
        annotated_float = param.annotation is not None and \
            ctx.module.code_for_node(param.annotation.annotation) == "float"
        default_float = isinstance(param.default, cst.Float)
        if not (annotated_float or default_float):
            return
        self.report(node, f"Dropout `p={arg.value.value}` is a float argument of the compiled `{info.qualname}`: "
                          f"every new value recompiles, and after {_limit(ctx)} it silently runs eagerly. Floats are "
                          f"specialised{_measured(ctx, '8 of 20 calls compiled')}; keep `p` constant, or pass it "
                          f"as a 0-d tensor and drop with a mask.")


def _limit(ctx) -> str:
    """dynamo's recompile limit as the target torch names it."""
    return f"`{recompile_limit_name(ctx.options.torch_version)}` (8)"


def _measured(ctx, numbers: str) -> str:
    """`` (measured: ...)`` when the target is the measured torch + PyG (or unknown)."""
    if not measured(ctx.options.torch_version, ctx.options.pyg_version):
        return ""
    return f" (measured: {numbers}, torch 2.13 + PyG 2.8.1)"


def _loops_around(ctx, node: cst.CSTNode) -> list[cst.For]:
    """The ``for`` loops of the enclosing function whose body runs ``node``, innermost first."""
    out = []
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(anc, cst.For) and child is anc.body:
            out.append(anc)
        child = anc
    return out


def _built_here(ctx, site_node: cst.Call) -> Optional[cst.Call]:
    """The constructor call of the model a compile site compiles, when it is
    built in the same function (``torch.compile(GCN(h))`` / ``m = GCN(h); torch.compile(m)``)."""
    for ctor, node in ctx.compiled_constructors():
        if node is site_node and ctx.enclosing_function(ctor) is ctx.enclosing_function(site_node):
            return ctor
    return None


def _self_attr(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _init_is(ctx, cls: ClassInfo, attr: str, types) -> bool:
    """``self.<attr>`` is set in ``__init__`` to a literal of ``types`` only."""
    init = cls.methods.get("__init__")
    values = [v for v in cls.attrs.get(attr, []) if init is not None and ctx.enclosing_function(v) is init]
    return bool(values) and all(isinstance(v, types) for v in values)


def _reset_before(ctx, info: Optional[FuncInfo], owner: cst.BaseExpression, node: cst.CSTNode) -> bool:
    """``self.x = []`` earlier in the same compiled function."""
    if info is None:
        return False
    text = ctx.module.code_for_node(owner)
    order = ctx.order.get(node, 0)
    for candidate in ctx.attribute_nodes(owner.attr.value if isinstance(owner, cst.Attribute) else ""):
        parent = ctx.parent.get(candidate)
        if isinstance(parent, cst.AssignTarget) and ctx.enclosing_function(candidate) is info \
                and ctx.module.code_for_node(candidate) == text and ctx.order.get(candidate, 0) < order:
            return True
    return False


def _int_loop(ctx, loop: cst.For, value: cst.BaseExpression) -> bool:
    """``value`` is the int loop variable of ``for ep in range(...)`` / ``enumerate``."""
    if not isinstance(value, cst.Name):
        return False
    it = loop.iter
    if isinstance(it, cst.Call) and ctx.last_part(it.func) == "range":
        return value.value in ctx.target_names(loop.target)
    if isinstance(it, cst.Call) and ctx.last_part(it.func) == "enumerate" and isinstance(loop.target, cst.Tuple) \
            and loop.target.elements:
        first = loop.target.elements[0].value
        return isinstance(first, cst.Name) and first.value == value.value
    return False
