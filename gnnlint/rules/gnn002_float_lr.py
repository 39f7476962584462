from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.versions import matches, torch_label

from gnnlint.context import _NO_VALUE, TENSOR
from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid

# Default lr of each torch.optim optimizer (torch 2.13 signatures).
_DEFAULT_LR = {
    "ASGD": "0.01", "Adadelta": "1.0", "Adafactor": "0.01", "Adagrad": "0.01", "Adam": "0.001",
    "AdamW": "0.001", "Adamax": "0.002", "LBFGS": "1.0", "Muon": "0.001", "NAdam": "0.002",
    "RAdam": "0.001", "RMSprop": "0.01", "Rprop": "0.01", "SGD": "0.001", "SparseAdam": "0.001",
}


def torch_name(context) -> Optional[str]:
    """The local name ``torch`` is imported as, if it is."""
    if context.aliases.get("torch") == "torch":
        return "torch"
    for local, full in context.aliases.items():
        if full == "torch":
            return local
    return None


def import_torch_edit(context) -> NodeEdit:
    """Insert ``import torch`` before the first statement that is not the
    module docstring or a ``from __future__`` import."""
    body = context.module.body
    first = None
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and stmt.body:
            small = stmt.body[0]
            if i == 0 and isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                                 cst.ConcatenatedString)):
                continue
            if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) \
                    and small.module.value == "__future__":
                continue
        first = stmt
        break
    if first is None:
        return NodeEdit(body[-1], "\nimport torch", where="after")
    return NodeEdit(first, "import torch\n", where="before")


class FloatLr(Rule):
    """
    ## What it does
    Flags an optimizer built with a Python-number learning rate (a literal,
    a variable, `args.lr`, a config value, or the default) when **both** an LR
    scheduler changes that optimizer's lr (`torch.optim.lr_scheduler.*`,
    `transformers`' `get_*_schedule*`, or a write to
    `opt.param_groups[i]["lr"]`) **and** the optimizer's step is compiled
    (`torch.compile(opt.step)`, or `opt.step()` inside a compiled function).
    The finding points at the optimizer constructor.

    ## Why is this bad?
    The compiled step reads `param_groups[0]['lr']` as a Python float, and
    dynamo guards on its value (`self.param_groups[0]['lr'] == 0.01`). Every
    scheduler step changes it, so the guard fails:

    - **torch 2.13, default `dynamic=None`**: the first lr change recompiles
      the step once; automatic dynamic then traces the lr as a symbolic float
      (automatic-dynamic floats landed in torch 2.6, pytorch/pytorch#141647).
    - **`dynamic=False`**: every lr change recompiles the step, until
      `recompile_limit` (8) is reached — after that the optimizer step
      **silently runs eager** for the rest of training.
    - **torch 2.3–2.5**: floats were always specialised, so every lr change
      recompiled, whatever `dynamic` said (pytorch/pytorch#149406).

    A tensor lr is a graph input, not a guarded constant: the schedulers
    update it in place (pytorch/pytorch#123753) and the step never recompiles.
    `OneCycleLR` and `CyclicLR` also cycle the momentum by default, writing a
    float `betas[0]`/`momentum` every step that the compiled step guards on
    as well (measured: 8 recompiles with a tensor lr); the message then also
    asks for `cycle_momentum=False`.
    Measured on torch 2.13 (Adam + StepLR, 15 steps): float lr → 2 graphs with
    `dynamic=None`, 8 graphs then eager with `dynamic=False`; tensor lr → 1.

    Not flagged: no scheduler or lr write on that optimizer, an eager step,
    a tensor lr (`torch.tensor(...)`, or a name bound to one), and a step
    compiled with `dynamic=True` (torch ≥ 2.7 makes floats dynamic on the first
    compile, pytorch/pytorch#149564). The rule applies to torch ≥ 2.3, the
    first release where LR schedulers work with a compiled optimizer and a
    tensor lr (the official recipe requires 2.3); on older torch there is no
    fix to offer.

    ## Example
    ```python
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
    opt_step = torch.compile(optimizer.step)
    ```

    ## Use instead
    ```python
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=100)
    opt_step = torch.compile(optimizer.step)
    ```

    ## Fix safety
    Safe: wraps the value in `torch.tensor(...)` (adding `lr=` with the
    optimizer's default when it was not given, and `import torch` when torch
    is not imported; an alias such as `import torch as T` is used). The
    schedulers and the optimizer accept a 1-element tensor lr and compute the
    same update. Not offered with `foreach=True` and no `capturable=True`
    (Adam/AdamW reject a tensor lr there), nor when the constructor forwards
    `**kwargs`.

    ## References
    - [Running the compiled optimizer with an LR scheduler (recipe, torch ≥ 2.3)](https://pytorch.org/tutorials/recipes/compiling_optimizer_lr_scheduler.html)
    - [pytorch/pytorch#123753: LR schedulers handle tensor lr](https://github.com/pytorch/pytorch/pull/123753)
    - [pytorch/pytorch#107076: recompile on every lr change](https://github.com/pytorch/pytorch/issues/107076)
    - [pytorch/pytorch#141647: automatic dynamic unspecialised floats (torch 2.6)](https://github.com/pytorch/pytorch/pull/141647)
    - [pytorch/pytorch#149564: dynamic=True makes floats dynamic up front (torch 2.7)](https://github.com/pytorch/pytorch/pull/149564)
    """

    code = "GNN002"
    name = "float-lr"
    summary = "Python-float lr changed by a scheduler while the optimizer step is compiled"
    region = "compiled"
    triggers = (b"compile",)
    fix_applicability = "safe"
    torch_versions = ">=2.3"

    VALID = (
        # tensor lr
        Valid("""
import torch
optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
opt_step = torch.compile(optimizer.step)
"""),
        # no scheduler
        Valid("""
import torch
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
opt_step = torch.compile(optimizer.step)
"""),
        # eager step, compiled model
        Valid("""
import torch
model = torch.compile(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
for epoch in range(10):
    optimizer.step()
    scheduler.step()
"""),
        # the scheduler drives another optimizer
        Valid("""
import torch
opt_a = torch.optim.Adam(model.parameters(), lr=0.01)
opt_b = torch.optim.SGD(other.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(opt_b, step_size=10)
step_a = torch.compile(opt_a.step)
"""),
        # dynamic=True: the lr is a symbolic float from the first compile
        Valid("""
import torch
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
opt_step = torch.compile(optimizer.step, dynamic=True)
"""),
    )
    INVALID = (
        # torch < 2.7: dynamic=True did not yet make the lr dynamic up front
        Invalid("""
import torch
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
opt_step = torch.compile(optimizer.step, dynamic=True)
""", lines=(3,), options=(("torch_version", "2.5.1"),)),
        Invalid("""
import torch
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

@torch.compile(fullgraph=False)
def optimizer_step():
    optimizer.step()
    scheduler.step()
""", lines=(3,), expected_fix="""
import torch
optimizer = torch.optim.AdamW(model.parameters(), lr=torch.tensor(args.lr), weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

@torch.compile(fullgraph=False)
def optimizer_step():
    optimizer.step()
    scheduler.step()
"""),
        # torch imported under an alias; lr given positionally
        Invalid("""
import torch as T
opt = T.optim.SGD(model.parameters(), 0.1, momentum=0.9)
sched = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=1000)
step = T.compile(opt.step, dynamic=False)
""", lines=(3,), expected_fix="""
import torch as T
opt = T.optim.SGD(model.parameters(), T.tensor(0.1), momentum=0.9)
sched = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=1000)
step = T.compile(opt.step, dynamic=False)
"""),
        # default lr, manual lr decay, torch not imported by name
        Invalid("""
\"\"\"Train.\"\"\"
from torch import compile
from torch.optim import Adam
optimizer = Adam(model.parameters())
step = compile(optimizer.step)
for group in optimizer.param_groups:
    group["lr"] = group["lr"] * 0.5
""", lines=(5,), expected_fix="""
\"\"\"Train.\"\"\"
import torch
from torch import compile
from torch.optim import Adam
optimizer = Adam(model.parameters(), lr=torch.tensor(0.001))
step = compile(optimizer.step)
for group in optimizer.param_groups:
    group["lr"] = group["lr"] * 0.5
"""),
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.context
        resolved = ctx.resolve(node.func) or ""
        parts = resolved.split(".")
        if not (len(parts) == 3 and parts[:2] == ["torch", "optim"] and parts[2][:1].isupper()
                and parts[2] != "Optimizer"):
            return
        if ctx.optimizer_ctor(node) is not node:
            return
        lr_arg = self._lr_arg(node)
        if lr_arg is None and any(a.star for a in node.args):
            return  # *args / **kwargs may carry the lr
        if lr_arg is not None and self._is_tensor(lr_arg.value):
            return
        changers = ctx.lr_changers(node)
        if not changers:
            return
        # dynamic=True traces the lr as a symbolic float up front from torch 2.7
        # (pytorch/pytorch#149564); before that it still recompiled.
        dynamic_true_ok = matches(">=2.7", ctx.options.torch_version)
        steps = [(where, dyn) for where, dyn in ctx.compiled_steps(node)
                 if not (dyn is True and dynamic_true_ok) and dyn is not _NO_VALUE]
        if not steps:
            return
        where, dynamic = steps[0]
        opt_name = parts[2]
        if lr_arg is not None:
            value_text = ctx.module.code_for_node(lr_arg.value)
        else:
            value_text = _DEFAULT_LR.get(opt_name)
        changer = changers[0]
        if isinstance(changer, cst.Call):
            changer_text = f"`{ctx.last_part(changer.func)}`"
        else:
            changer_text = "a write to `param_groups[...]['lr']`"
        if isinstance(where, cst.Call) and ctx.resolve(where.func) in ("torch.compile", "torch_geometric.compile"):
            compiled_text = f"`{ctx.module.code_for_node(where)[:60]}`"
        elif isinstance(where, cst.Call):
            compiled_text = f"`{ctx.module.code_for_node(where)[:40]}` in the {ctx.compiled_region(where)}"
        else:
            compiled_text = "the compiled step"
        if dynamic is False:
            short = "every lr change recompiles it, then it silently runs eagerly"
            cost = ("with `dynamic=False` every lr change recompiles the step until `recompile_limit` (8) is hit, "
                    "after which the step silently runs eagerly")
        elif dynamic is True:
            short = "every lr change recompiles it"
            cost = (f"on torch {ctx.options.torch_version or '< 2.7'} even `dynamic=True` specialises the step on "
                    f"the float lr (fixed in torch 2.7)")
        elif matches("<2.6", ctx.options.torch_version):
            short = "every lr change recompiles it, then it silently runs eagerly"
            cost = (f"on torch {ctx.options.torch_version} every lr change recompiles the step, until "
                    f"`cache_size_limit` (8) is hit and it silently runs eagerly")
        else:
            short = "the first lr change recompiles it"
            cost = (f"on {torch_label(ctx.options.torch_version)} (default `dynamic=None`) the lr is then traced as "
                    f"a dynamic float (torch < 2.6: a recompile on every change)")
        cycling = [c for c in changers if isinstance(c, cst.Call) and ctx.last_part(c.func) in ("OneCycleLR", "CyclicLR")
                   and not any(a.keyword is not None and a.keyword.value == "cycle_momentum"
                               and ctx.literal_value(a.value) is False for a in c.args)]
        also = ""
        if cycling:
            also = (f", and `cycle_momentum=False` to `{ctx.last_part(cycling[0].func)}` (it also rewrites the float "
                    f"momentum, `betas[0]`/`momentum`, which the step guards on too)")
        lr_desc = f"Python-number lr `{value_text}`" if lr_arg is not None else \
            f"default Python-float lr ({value_text})"
        message = (f"{changer_text} changes `{opt_name}`'s {lr_desc} and its step is compiled: {short}. "
                   f"The step ({compiled_text}) guards on `param_groups[0]['lr']`; {cost}. "
                   f"Pass `lr={torch_name(ctx) or 'torch'}.tensor({value_text or '...'})`{also}.")
        self.report(node, message, self._fix(node, lr_arg, value_text))

    @staticmethod
    def _lr_arg(call: cst.Call) -> Optional[cst.Arg]:
        positional = 0
        for arg in call.args:
            if arg.keyword is not None:
                if arg.keyword.value == "lr":
                    return arg
                continue
            if arg.star:
                return None
            if positional == 1:
                return arg
            positional += 1
        return None

    def _is_tensor(self, value: cst.BaseExpression) -> bool:
        ctx = self.context
        if ctx.kind(value) == TENSOR:
            return True
        if isinstance(value, cst.Call) and (ctx.resolve(value.func) or "").startswith("torch."):
            return True
        if isinstance(value, cst.Name):
            binding = ctx.feed_binding(value.value, value)
            if binding is not None and binding.how == "assign" and binding.value is not None:
                return self._is_tensor(binding.value) if binding.value is not value else False
            if binding is not None and binding.how == "param":
                func = ctx.enclosing_function(binding.node) if binding.node is not None else None
                if func is not None:
                    for caller in ctx.callers_of(func):
                        passed = ctx.arg_for_param(func, caller, value.value)
                        if passed is not None and ctx.kind(passed) == TENSOR:
                            return True
        return False

    def _fix(self, node: cst.Call, lr_arg: Optional[cst.Arg], value_text: Optional[str]) -> Optional[FixSpec]:
        ctx = self.context
        flags = {a.keyword.value: ctx.module.code_for_node(a.value) for a in node.args if a.keyword is not None}
        if flags.get("foreach") == "True" and flags.get("capturable") != "True":
            return None
        if value_text is None or any(a.star == "**" for a in node.args):
            return None
        name = torch_name(ctx)
        edits = []
        if name is None:
            name = "torch"
            edits.append(import_torch_edit(ctx))
        if lr_arg is not None:
            edits.append(NodeEdit(lr_arg.value, f"{name}.tensor({value_text})"))
        elif node.args:
            edits.append(NodeEdit(node.args[-1].value, f", lr={name}.tensor({value_text})", where="after"))
        else:
            edits.append(NodeEdit(node, f"{ctx.module.code_for_node(node.func)}(lr={name}.tensor({value_text}))"))
        return FixSpec("safe", f"Pass `lr={name}.tensor({value_text})`", tuple(edits))
