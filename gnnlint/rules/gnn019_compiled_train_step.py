from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import MODEL, OPTIMIZER, SCALAR, SCHEDULER
from gnnlint.rules.base import Invalid, Rule, Valid
from gnnlint.versions import measured

_OPTIMIZER_NAME = ("opt", "optim", "optimizer", "optimiser")


class CompiledTrainStep(Rule):
    """
    ## What it does
    Flags `loss.backward()`, `optimizer.step()` and `optimizer.zero_grad()`
    (also `model.zero_grad()`, `torch.autograd.backward`, a `GradScaler`'s
    `scaler.step(optimizer)`) inside compiled code: a whole training step
    under `@torch.compile` or `torch.compile(train_step)`. One finding per
    call.

    Compiling the optimizer step on its own is not flagged: `torch.compile(
    optimizer.step)`, or PyTorch's compiled-optimizer recipe, a compiled
    function that steps the optimizer (and its scheduler) but runs no
    `backward()` (`@torch.compile(fullgraph=False) def opt_step():
    optimizer.step()`). Neither is `torch.autograd.grad` in a forward (force
    fields compute forces that way).

    ## Why is this bad?
    Dynamo does not trace them: `Optimizer.zero_grad` is marked as skipped,
    `Tensor.backward()` is unsupported ("when trace_autograd_ops is off") and
    `Optimizer.step` calls `torch._dynamo.graph_break()` by design
    (optimizer.py:79). Measured on torch 2.13.0 + torch_geometric 2.8.1:
    a compiled train step has **3 graph breaks on every step**, and turning
    on `compiled_autograd` or `trace_autograd_ops` still leaves 3; compiling
    the model alone: 0 breaks
    (`shared/evidence/torch-2.13-pyg-2.8.1/e08_autocast_trainstep.py`). The
    breaks split the step into pieces that each pay dispatch overhead, and
    anything between them cannot be fused. Only torch 2.13 was measured; the
    rule is declared for every version that has `torch.compile`.

    ## Example
    ```python
    @torch.compile
    def train_step(data):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index), data.y)
        loss.backward()
        optimizer.step()
        return loss
    ```

    ## Use instead
    ```python
    model = torch.compile(model)

    def train_step(data):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.x, data.edge_index), data.y)
        loss.backward()
        optimizer.step()      # or a separately compiled optimizer step
        return loss
    ```

    ## Fix safety
    No automatic fix: moving the compile to the model changes which code
    is compiled.

    ## References
    - [torch.compile: compiling the optimizer](https://pytorch.org/tutorials/recipes/compiling_optimizer.html)
    - [Compiled autograd](https://pytorch.org/tutorials/intermediate/compiled_autograd_tutorial.html)
    """

    code = "GNN019"
    name = "compiled-train-step"
    summary = "`backward()` / `optimizer.step()` / `zero_grad()` inside compiled code (3 graph breaks per step)"
    region = "compiled"
    severity = "warning"  # breaks every step, no eager fallback
    torch_versions = ">=2.0"
    triggers = (b"backward", b"step(", b"zero_grad")

    VALID = (
        Valid("""
import torch
model = torch.compile(model)
def train_step(data):
    optimizer.zero_grad()
    loss = model(data.x, data.edge_index).sum()
    loss.backward()
    optimizer.step()
step = torch.compile(optimizer.step)
"""),
        Valid("""
import torch
model = GIN(48, 96, 3, 6)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)

@torch.compile(fullgraph=False)
def optimizer_step():
    optimizer.step()
    scheduler.step()

for epoch in range(200):
    optimizer.zero_grad()
    model(x, edge_index).sum().backward()
    optimizer_step()
"""),
        Valid("""
import torch
class ForceField(torch.nn.Module):
    def forward(self, pos, z):
        energy = self.net(pos, z).sum()
        forces = -torch.autograd.grad(energy, pos, create_graph=self.training)[0]
        scheduler.step()
        return energy, forces
model = torch.compile(ForceField())
"""),
    )
    INVALID = (
        Invalid("""
import torch
import torch.nn.functional as F
@torch.compile
def train_step(model, optimizer, data):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data.x, data.edge_index), data.y)
    loss.backward()
    optimizer.step()
    return loss
""", lines=(6, 8, 9)),
        Invalid("""
import torch
def step(model, opt, scaler, batch):
    model.zero_grad()
    loss = model(batch).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    return loss
compiled_step = torch.compile(step)
""", lines=(4, 6, 7)),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._backward_in: dict = {}  # function node -> its code runs a backward

    def visit_Call(self, node: cst.Call) -> None:
        what = self._what(node)
        if what is None:
            return
        ctx = self.context
        region = ctx.compiled_region(node)
        if region is None or ctx.in_error_path(node):
            return
        if what.endswith(("step()`", "step(...)`", "zero_grad()`")) and not self._steps_after_backward(node):
            return
        options = ctx.options
        if measured(options.torch_version, options.pyg_version):
            numbers, model = (" (a compiled train step: 3 breaks per step on torch 2.13, even with compiled "
                              "autograd)"), " (0 breaks)"
        else:
            numbers, model = "", ""
        self.report(node, f"{what} in the {region} breaks the graph on every step. Dynamo cannot trace it"
                          f"{numbers}; compile the model instead{model} and, if wanted, the optimizer step on its "
                          f"own.")

    def _what(self, node: cst.Call) -> Optional[str]:
        ctx = self.context
        func = node.func
        if ctx.resolve(func) == "torch.autograd.backward":
            return "`torch.autograd.backward()`"
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        receiver = func.value
        text = ctx.module.code_for_node(receiver)
        kind = ctx.kind(receiver)
        if method == "backward":
            if kind in (SCALAR, MODEL, OPTIMIZER, SCHEDULER) or (ctx.resolve(receiver) or "").startswith("torch."):
                return None
            return f"`{_short(text)}.backward()`"
        if method == "zero_grad":
            if kind in (SCALAR, SCHEDULER):
                return None
            return f"`{_short(text)}.zero_grad()`"
        if method == "step":
            last = (ctx.last_part(receiver) or "").lower()
            if kind == SCHEDULER or "sched" in last:
                return None
            if kind == OPTIMIZER or last.startswith(_OPTIMIZER_NAME) or last.endswith(("opt", "optimizer")):
                return f"`{_short(text)}.step()`"
            if "scaler" in last and node.args:
                return f"`{_short(text)}.step(...)`"
        return None

    def _steps_after_backward(self, node: cst.Call) -> bool:
        """The function holding this optimizer call also runs a backward: a
        whole train step. Without one it is the compiled-optimizer recipe
        (a function that only steps the optimizer and its scheduler)."""
        func = self.context.enclosing_function(node)
        if func is None:
            return True
        known = self._backward_in.get(func.node)
        if known is None:
            known = self._backward_in[func.node] = "backward(" in self.context.module.code_for_node(func.node)
        return known


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
