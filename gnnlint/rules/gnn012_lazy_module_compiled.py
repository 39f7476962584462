from __future__ import annotations

import libcst as cst

from gnnlint.context import COMPILE_FUNCS
from gnnlint.rules.base import Invalid, Rule, Valid
from gnnlint.versions import measured, measured_torch


class LazyModuleCompiled(Rule):
    """
    ## What it does
    Flags `torch.compile(model)` (or `model.compile()`) when `model` has
    lazily initialised parameters and has not run one eager forward before
    the compile: PyG layers built with `-1` / `(-1, -1)` in_channels
    (`SAGEConv((-1, -1), 64)`, `Linear(-1, 7)`, `GraphSAGE(-1, ...)`,
    `MLP([-1, 64, 7])`, `HeteroConv({...: GATConv((-1, -1), ...)})`),
    `torch.nn.Lazy*` modules, a local model class that builds one, and
    `to_hetero(...)` over such a model. The finding points at the compile
    call.

    An eager forward is a call of the model or of one of its submodules
    (`model(x, edge_index)`, `model.encoder(...)`), `model.load_state_dict(...)`
    (which materialises lazy parameters), `torch_geometric.nn.summary(model,
    ...)`, or a local function that does one of these, before the compile
    statement — typically under `torch.no_grad()` on a sample batch.

    ## Why is this bad?
    Lazy parameters are created by a forward pre-hook on the first call. When
    that first call is the compiled one, dynamo traces the initialisation:

    - **PyG `-1` layers** (`UninitializedParameter.materialize` reassigns
      `__class__`) break the graph. Measured on torch 2.13 + PyG 2.8.1 with a
      `SAGEConv((-1, -1)) → GCNConv(-1) → Linear(-1)` model: 12 graph breaks
      while compiling, and the compiled forward then runs **13 graphs per
      call instead of 7** for the rest of training (the warm model compiles
      to the 7 it needs).
    - **`torch.nn.Lazy*`**: dynamo initialises them while tracing; on torch
      2.13 that works with the default `dynamic`, but with `dynamic=True` the
      first call fails with `InternalTorchDynamoError: SymIntArrayRef
      expected to contain only concrete integers`.

    Not flagged: a model whose in_channels are all known, a lazy model that
    ran a forward (or loaded a state dict) before the compile, a model
    gnnlint cannot trace to its constructor (a parameter, a factory function
    it cannot see into), and a discarded `torch.compile(model)` (GNN010).

    ## Example
    ```python
    model = to_hetero(GNN(hidden_channels=64), data.metadata())
    model = torch.compile(model)
    ```

    ## Use instead
    ```python
    model = to_hetero(GNN(hidden_channels=64), data.metadata())
    with torch.no_grad():  # initialise the lazy parameters eagerly
        model(data.x_dict, data.edge_index_dict)
    model = torch.compile(model)
    ```

    ## Fix safety
    No automatic fix: the forward needs a sample batch from the program.

    ## References
    - [PyG: lazy initialisation (`-1` in_channels)](https://pytorch-geometric.readthedocs.io/en/latest/notes/create_gnn.html)
    - [PyG heterogeneous guide: "initialize lazy modules with one forward"](https://pytorch-geometric.readthedocs.io/en/latest/notes/heterogeneous.html)
    - [torch.nn.modules.lazy.LazyModuleMixin](https://pytorch.org/docs/stable/generated/torch.nn.modules.lazy.LazyModuleMixin.html)
    """

    code = "GNN012"
    name = "lazy-module-compiled"
    summary = "Model with lazy (`-1` in_channels / `Lazy*`) parameters compiled before one eager forward"
    region = "compiled"
    triggers = (b"compile",)

    VALID = (
        # one eager forward first
        Valid("""
import torch
from torch_geometric.nn import SAGEConv, to_hetero
model = to_hetero(GNN(), data.metadata())
with torch.no_grad():
    model(data.x_dict, data.edge_index_dict)
model = torch.compile(model)
"""),
        # in_channels known
        Valid("""
import torch
from torch_geometric.nn import GraphSAGE
model = torch.compile(GraphSAGE(128, 64, num_layers=2))
"""),
        # a state dict materialises the lazy parameters
        Valid("""
import torch
from torch_geometric.nn import GraphSAGE
model = GraphSAGE(-1, 64, num_layers=2)
model.load_state_dict(torch.load("model.pt"))
model = torch.compile(model)
"""),
        # the submodule that is lazy ran eagerly
        Valid("""
import torch
from torch_geometric.nn import GATConv
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = GATConv((-1, -1), 64, add_self_loops=False)
model = Net()
with torch.no_grad():
    model.encoder(data.x_dict, data.edge_index_dict)
model = torch.compile(model)
"""),
        # compiled under another name, warmed up eagerly before its first use
        Valid("""
import torch
from torch_geometric.nn import GraphSAGE
net = GraphSAGE(-1, 64, num_layers=2)
model = torch.compile(net)
with torch.no_grad():
    net(data.x, data.edge_index)
print(model)
out = model(data.x, data.edge_index)
"""),
    )
    INVALID = (
        # the "warm-up" goes through the compiled model; the eager calls come later
        Invalid("""
import torch
from torch_geometric.nn import GraphSAGE
net = GraphSAGE(-1, 64, num_layers=2)
model = torch.compile(net)
with torch.no_grad():
    model(data.x, data.edge_index)
evaluate(net, loader)
""", lines=(5,)),
        Invalid("""
import torch
from torch_geometric.nn import SAGEConv, Linear, to_hetero

class GNN(torch.nn.Module):
    def __init__(self, hidden, out):
        super().__init__()
        self.conv1 = SAGEConv((-1, -1), hidden)
        self.lin = Linear(-1, out)

    def forward(self, x, edge_index):
        return self.lin(self.conv1(x, edge_index).relu())

model = to_hetero(GNN(64, 7), data.metadata(), aggr="sum").to(device)
model = torch.compile(model, dynamic=True)
""", lines=(15,)),
        Invalid("""
import torch
model = torch.nn.Sequential(torch.nn.LazyLinear(64), torch.nn.ReLU(), torch.nn.LazyLinear(7))
compiled = torch.compile(model, dynamic=True)
""", lines=(4,)),
        Invalid("""
import torch
from torch_geometric.nn import GraphSAGE
model = GraphSAGE(-1, 64, num_layers=2)
model.compile()
with torch.no_grad():
    model(data.x, data.edge_index)
""", lines=(5,)),
    )

    def visit_Module(self, node: cst.Module) -> None:
        ctx = self.context
        for site_node, site in ctx.compile_sites:
            if not isinstance(site_node, cst.Call) or site.target_kind in ("optimizer_step", "function", "method"):
                continue
            resolved = ctx.resolve(site_node.func)
            if resolved in COMPILE_FUNCS:
                if isinstance(ctx.parent.get(site_node), cst.Expr):
                    continue  # discarded: nothing is compiled (GNN010)
                target = site_node.args[0].value if site_node.args and site_node.args[0].keyword is None else None
            elif isinstance(site_node.func, cst.Attribute):
                target = site_node.func.value
            else:
                target = None
            if target is None:
                continue
            reason = ctx.lazy_reason(target, site_node)
            if not reason or ctx.eager_forward_before(site_node, target):
                continue
            text = ctx.module.code_for_node(target)
            if len(text) > 40:
                text = site.target if len(site.target) <= 40 else "the model"
            if reason.startswith("`Lazy"):
                short = "the first compiled call initialises them while tracing"
                cost = "Dynamo initialises the `torch.nn.Lazy*` parameters while tracing the first compiled call"
                if measured_torch(ctx.options.torch_version):
                    cost += " (on torch 2.13 this fails with `InternalTorchDynamoError` under `dynamic=True`)"
            else:
                short = "the compiled forward keeps extra graph breaks for good"
                cost = ("The first compiled call traces PyG's lazy initialisation, which breaks the graph "
                        "(`UninitializedParameter.materialize`)")
                if measured(ctx.options.torch_version, ctx.options.pyg_version):
                    cost += " (torch 2.13 + PyG 2.8.1: 13 graphs per call instead of 7 for a 3-layer model)"
            message = (f"`{text}` has lazily initialised parameters ({reason}) and is compiled before one eager "
                       f"forward: {short}. {cost}; run one forward on a sample batch under `torch.no_grad()` "
                       f"before compiling.")
            self.report(site_node, message)
