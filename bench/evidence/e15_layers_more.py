"""E15 (issue 15): what the shared evidence (shared/evidence/torch-2.13-pyg-2.8.1)
left unmeasured for GNN014/GNN009, measured the same way (its common.py:
backend eager, 2 calls on the same graph, output checked against eager).

- APPNP / SGConv / GCN2Conv: which options avoid the break, and fullgraph=True;
- models.GCN / models.GAT (BasicGNN) with the options passed through to the conv;
- GraphSAGE(jk='lstm') and fullgraph;
- utilities not yet run under fullgraph=True: dropout_node, add_remaining_self_loops,
  coalesce, is_undirected, contains_self_loops;
- a utility break inside a Python loop in the compiled forward: calls that ran compiled;
- PyG norms PairNorm / MeanSubtractionNorm / InstanceNorm / LayerNorm(mode='graph')
  called with batch, with and without the size argument, and under fullgraph=True.

Run: python bench/evidence/e15_layers_more.py  (needs torch + torch_geometric)."""
import os, sys
EVIDENCE = os.environ.get("GNNLINT_EVIDENCE", "/work/shared/evidence/torch-2.13-pyg-2.8.1")
sys.path.insert(0, EVIDENCE)
from common import *  # noqa: F401,F403 (torch, measure, survey, rand_graph, fake_data)
from torch import nn
import torch_geometric.nn as gnn
import torch_geometric.utils as U
from torch_geometric.data import Data
from torch_geometric.datasets import FakeDataset
from torch_geometric.loader import DataLoader
from torch_geometric.transforms import GCNNorm

N, E, F_ = 100, 400, 16
x, ei, _ = rand_graph(N, E, F_)
d = GCNNorm()(Data(x=x, edge_index=ei, num_nodes=N))
ei_n, ew_n = d.edge_index, d.edge_weight
torch.manual_seed(0)
bt = next(iter(DataLoader(FakeDataset(num_graphs=8, avg_num_nodes=30, avg_degree=4, num_channels=16), batch_size=8)))
bx, bb = bt.x, bt.batch


class Fn(nn.Module):
    def __init__(self, f):
        super().__init__(); self.f = f
    def forward(self, *a):
        return self.f(*a)


def first(t):
    return t[0] if isinstance(t, tuple) else t


layer_cases = [
    ("APPNP default", lambda: gnn.APPNP(K=5, alpha=0.1), lambda: (x, ei)),
    ("APPNP add_self_loops=False", lambda: gnn.APPNP(K=5, alpha=0.1, add_self_loops=False), lambda: (x, ei)),
    ("APPNP normalize=False + GCNNorm", lambda: gnn.APPNP(K=5, alpha=0.1, normalize=False), lambda: (x, ei_n, ew_n)),
    ("SGConv default", lambda: gnn.SGConv(F_, 32, K=2), lambda: (x, ei)),
    ("SGConv add_self_loops=False", lambda: gnn.SGConv(F_, 32, K=2, add_self_loops=False), lambda: (x, ei)),
    ("GCN2Conv default", lambda: gnn.GCN2Conv(F_, alpha=0.1), lambda: (x, x, ei)),
    ("GCN2Conv add_self_loops=False", lambda: gnn.GCN2Conv(F_, alpha=0.1, add_self_loops=False), lambda: (x, x, ei)),
    ("GCN2Conv normalize=False + GCNNorm", lambda: gnn.GCN2Conv(F_, alpha=0.1, normalize=False), lambda: (x, x, ei_n, ew_n)),
    ("models.GCN default", lambda: gnn.models.GCN(F_, 32, 2), lambda: (x, ei)),
    ("models.GCN add_self_loops=False", lambda: gnn.models.GCN(F_, 32, 2, add_self_loops=False), lambda: (x, ei)),
    ("models.GCN normalize=False + GCNNorm", lambda: gnn.models.GCN(F_, 32, 2, normalize=False), lambda: (x, ei_n, ew_n)),
    ("models.GAT default", lambda: gnn.models.GAT(F_, 32, 2), lambda: (x, ei)),
    ("models.GAT add_self_loops=False", lambda: gnn.models.GAT(F_, 32, 2, add_self_loops=False), lambda: (x, ei)),
    ("models.GraphSAGE jk='lstm'", lambda: gnn.models.GraphSAGE(F_, 32, 2, jk="lstm"), lambda: (x, ei)),
    ("models.GraphSAGE jk='cat'", lambda: gnn.models.GraphSAGE(F_, 32, 2, jk="cat"), lambda: (x, ei)),
    ("dropout_node(training=True)", lambda: Fn(lambda a, b: first(U.dropout_node(b, num_nodes=N))[0]), lambda: (x, ei)),
    ("add_remaining_self_loops(num_nodes=N)", lambda: Fn(lambda a, b: U.add_remaining_self_loops(b, num_nodes=N)[0]), lambda: (x, ei)),
    ("coalesce(num_nodes=N)", lambda: Fn(lambda a, b: U.coalesce(b, num_nodes=N)), lambda: (x, ei)),
    ("is_undirected(num_nodes=N)", lambda: Fn(lambda a, b: a * float(U.is_undirected(b, num_nodes=N))), lambda: (x, ei)),
    ("contains_self_loops", lambda: Fn(lambda a, b: a * float(U.contains_self_loops(b))), lambda: (x, ei)),
    ("PairNorm(x, batch)", lambda: Fn(lambda a, b: gnn.PairNorm()(a, b)), lambda: (bx, bb)),
    ("PairNorm(x, batch, batch_size=8)", lambda: Fn(lambda a, b: gnn.PairNorm()(a, b, batch_size=8)), lambda: (bx, bb)),
    ("MeanSubtractionNorm(x, batch)", lambda: Fn(lambda a, b: gnn.MeanSubtractionNorm()(a, b)), lambda: (bx, bb)),
    ("MeanSubtractionNorm(x, batch, dim_size=8)", lambda: Fn(lambda a, b: gnn.MeanSubtractionNorm()(a, b, dim_size=8)), lambda: (bx, bb)),
    ("InstanceNorm(x, batch)", lambda: gnn.InstanceNorm(16), lambda: (bx, bb)),
    ("InstanceNorm(x, batch, batch_size=8)", lambda: Fn(lambda a, b, n=gnn.InstanceNorm(16): n(a, b, batch_size=8)), lambda: (bx, bb)),
    ("LayerNorm(mode='graph')(x, batch)", lambda: gnn.LayerNorm(16, mode="graph"), lambda: (bx, bb)),
    ("LayerNorm(mode='graph')(x, batch, batch_size=8)", lambda: Fn(lambda a, b, n=gnn.LayerNorm(16, mode="graph"): n(a, b, batch_size=8)), lambda: (bx, bb)),
    ("LayerNorm(mode='node')(x, batch)", lambda: gnn.LayerNorm(16, mode="node"), lambda: (bx, bb)),
]
FULLGRAPH = {"APPNP default", "SGConv default", "GCN2Conv default", "models.GCN default", "models.GAT default",
             "models.GraphSAGE jk='lstm'", "dropout_node(training=True)", "add_remaining_self_loops(num_nodes=N)",
             "coalesce(num_nodes=N)", "is_undirected(num_nodes=N)", "contains_self_loops", "PairNorm(x, batch)",
             "MeanSubtractionNorm(x, batch)", "InstanceNorm(x, batch)", "LayerNorm(mode='graph')(x, batch)"}

only = sys.argv[1:]
header("E15a: breaks per layer/call (backend eager, 2 calls)")
for name, make, args in layer_cases:
    if only and not any(o.lower() in name.lower() for o in only):
        continue
    survey(name, make, args)
header("E15b: the same under fullgraph=True")
for name, make, args in layer_cases:
    if name in FULLGRAPH and (not only or any(o.lower() in name.lower() for o in only)):
        survey(f"[fullgraph=True] {name}", make, args, fullgraph=True)

# E15c: a PyG utility that breaks, called inside a Python loop in the compiled forward
CALLS = 20


class Tick(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(F_, F_)
        self.register_buffer("n_compiled", torch.zeros((), dtype=torch.long))


class LoopDrop(Tick):
    def forward(self, x, ei):
        for _ in range(2):
            e, _m = U.dropout_edge(ei, p=0.2, training=True)
            x = self.lin(x) + U.scatter(x[e[0]], e[1], 0, dim_size=x.size(0))
        (self.n_compiled.add_(1) if torch.compiler.is_compiling() else None)
        return x


class UnrolledDrop(Tick):
    def forward(self, x, ei):
        e, _m = U.dropout_edge(ei, p=0.2, training=True)
        x = self.lin(x) + U.scatter(x[e[0]], e[1], 0, dim_size=x.size(0))
        e, _m = U.dropout_edge(ei, p=0.2, training=True)
        x = self.lin(x) + U.scatter(x[e[0]], e[1], 0, dim_size=x.size(0))
        (self.n_compiled.add_(1) if torch.compiler.is_compiling() else None)
        return x


class LoopGAT(Tick):
    def __init__(self, **kw):
        super().__init__()
        self.convs = nn.ModuleList([gnn.GATConv(F_, F_, **kw) for _ in range(2)])
    def forward(self, x, ei):
        for conv in self.convs:
            x = conv(x, ei).relu()
        (self.n_compiled.add_(1) if torch.compiler.is_compiling() else None)
        return x


class LoopGATTwin(LoopGAT):
    def __init__(self):
        super().__init__(add_self_loops=False)


header("E15c: calls whose user code ran compiled (tick after the loop), 20 calls")
for cls, fullgraph in ((LoopDrop, False), (LoopDrop, True), (UnrolledDrop, False), (LoopGAT, False),
                       (LoopGAT, True), (LoopGATTwin, False)):
    m = cls()
    cm = torch.compile(m, backend="eager", fullgraph=fullgraph)
    def run():
        for _ in range(CALLS):
            cm(x, ei)
    r = measure(run, cls.__name__, max_sites=1, show=False)
    print(f"== {cls.__name__ + (' fullgraph=True' if fullgraph else '')}: err={r['err']} breaks={r['breaks']} "
          f"recompiles={r['recompiles']} calls_that_ran_compiled={int(m.n_compiled)}/{CALLS}")
    for s in r["sites"][:2]:
        print("   BREAK:", s[:300])
