from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import MODEL, SCALAR, TENSOR, UNKNOWN
from gnnlint.rules.base import Invalid, Rule, Valid

# Methods that copy a tensor to the host. `.tolist()` also exists on numpy
# arrays and `.cpu()` on modules: the receiver's kind decides.
_SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}
_CASTS = {"float", "int", "bool"}
_LOGGING_FUNCS = {"print"}


class HostSync(Rule):
    """
    ## What it does
    Flags device-to-host synchronisations — `.item()`, `.tolist()`, `.cpu()`,
    `.numpy()`, `float(t)` / `int(t)` / `bool(t)`, using a tensor as a
    condition (`if loss > best:`, `if mask.any():`) and `print(t)` — where they
    run under `torch.compile` or once per training/inference step.

    ## Why is this bad?
    Inside a compiled region, each of these is a **graph break**: dynamo stops
    the graph, runs the op in Python, and starts a new graph after it, so the
    compiled model runs as several smaller graphs with Python in between. In a
    training or evaluation loop, each one blocks the host until the GPU has
    finished all queued work — a **device sync every step** that removes the
    overlap of CPU and GPU work that makes small-graph GNN training fast.

    gnnlint only flags values it can tell are tensors (results of torch calls,
    model outputs, criterion results, attributes of a PyG batch, and what is
    computed from them); when unsure, it stays quiet. Calls once per epoch
    outside the batch loop, after training, in preprocessing, on Python or
    numpy numbers, and in branches guarded by `torch.compiler.is_compiling()`
    are not flagged.

    ## Example
    ```python
    for batch in loader:
        loss = criterion(model(batch.x, batch.edge_index), batch.y)
        loss.backward()
        optimizer.step()
        total_loss += float(loss)  # sync every batch
    ```

    ## Use instead
    ```python
    total_loss = torch.zeros((), device=device)
    for batch in loader:
        loss = criterion(model(batch.x, batch.edge_index), batch.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach()
    print(float(total_loss))  # once per epoch
    ```

    ## Fix safety
    No automatic fix: whether a value may stay on the device depends on how
    it is used afterwards.

    ## References
    - [torch.compile: graph breaks](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    """

    code = "GNN001"
    name = "host-sync"
    summary = "Device-to-host sync (`.item()`, `float(t)`, tensor truthiness…) in a compiled region or a hot loop"
    triggers = (b"item(", b"tolist(", b"cpu(", b"numpy(", b"float(", b"int(", b"bool(",
                b"if ", b"while ", b"assert ", b"print(")

    VALID = (
        Valid("""
import torch
for epoch in range(10):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
print(loss.item())  # once, after training
"""),
        Valid("""
import torch
losses = []
for batch in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(batch.x), batch.y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
"""),
        Valid("""
import torch
@torch.compile
def f(x, d: dict):
    for k, v in d.items():
        x = x + v
    if not torch.compiler.is_compiling():
        print(x.item())
    return x
"""),
        Valid("""
import numpy as np
for row in np.arange(10):
    print(float(row))
"""),
        Valid("""
import torch
for epoch in range(10):
    for batch in loader:
        loss = model(batch.x).sum()
        loss.backward()
        optimizer.step()
    print(loss.item())  # once per epoch, outside the batch loop
"""),
    )
    INVALID = (
        Invalid("""
import torch
class GCN(torch.nn.Module):
    def forward(self, x, edge_index):
        n = int(edge_index.max()) + 1
        return x * x.sum().item()

model = torch.compile(GCN())
""", lines=(5, 6)),
        Invalid("""
import torch
total = 0.0
for batch in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(batch.x), batch.y)
    loss.backward()
    optimizer.step()
    total += float(loss)
    if torch.isnan(loss):
        break
""", lines=(9, 10)),
        Invalid("""
import torch
def train():
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = torch.nn.functional.cross_entropy(out, data.y)
    loss.backward()
    optimizer.step()
    return loss

for epoch in range(100):
    loss = train()
    print(f"{loss:.4f}")
    print(loss)
""", lines=(13, 14)),
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x.relu()

model = torch.compile(Net())
for batch in loader:
    pred = model(batch.x).argmax(-1)
    ys = batch.y.cpu().numpy()
""", lines=(10,)),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _SYNC_METHODS and not node.args:
            receiver_kind = self.context.kind(func.value)
            method = func.attr.value
            if receiver_kind in (SCALAR, MODEL):
                return
            if receiver_kind != TENSOR and method in ("tolist", "cpu"):
                return  # numpy arrays have .tolist(); modules have .cpu()
            if receiver_kind == UNKNOWN and method == "numpy" and not self._chained_from_tensor(func.value):
                return
            self._flag(node, f"`.{method}()`")
            return
        resolved = self.context.resolve(func)
        if resolved in _CASTS and len(node.args) == 1 and node.args[0].keyword is None:
            if self.context.is_tensor(node.args[0].value):
                self._flag(node, f"`{resolved}()` of a tensor")
            return
        if resolved in _LOGGING_FUNCS:
            for arg in node.args:
                if arg.keyword is not None:
                    continue
                if self.context.is_tensor(arg.value) or self._formats_tensor(arg.value):
                    self._flag(node, "printing a tensor")
                    return

    def _chained_from_tensor(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in ("cpu", "detach") and self.context.kind(expr.func.value) != SCALAR

    def _formats_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.FormattedString):
            return any(isinstance(part, cst.FormattedStringExpression)
                       and self.context.is_tensor(part.expression) for part in expr.parts)
        if isinstance(expr, cst.ConcatenatedString):
            return self._formats_tensor(expr.left) or self._formats_tensor(expr.right)
        return False

    # tensor truthiness --------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._check_condition(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._check_condition(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check_condition(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check_condition(node.test)

    def _check_condition(self, test: cst.BaseExpression) -> None:
        culprit = self._truthy_tensor(test)
        if culprit is not None:
            self._flag(test, "using a tensor as a condition")

    def _truthy_tensor(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The sub-expression whose truth value is a tensor's, if any."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self._truthy_tensor(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return self._truthy_tensor(expr.left) or self._truthy_tensor(expr.right)
        if self.context.is_tensor(expr):
            return expr
        return None

    # ----------------------------------------------------------------------------------
    def _flag(self, node: cst.CSTNode, what: str) -> None:
        compiled = self.context.compiled_region(node)
        if compiled is not None:
            self.report(node, f"{what} breaks the graph in the {compiled}; keep the value "
                              f"on the device or move it out of the compiled code")
            return
        hot = self.context.hot_region(node)
        if hot is not None:
            self.report(node, f"{what} syncs the device every step ({hot}); keep the value on the "
                              f"device and read it once per epoch")
