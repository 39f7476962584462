"""E26: does a method reached by attribute on a compiled module's wrapper run compiled when it calls
`self(...)`, and do `cm.forward(x)` / `cm(x)` run compiled? (GNN013/GNN001 regions and step loops;
heldout10 particleflow `inference.py` / `training.py`: `model = torch.compile(model)`, then
`model.predict_particles(X, mask)` whose body calls `self(X, mask)` and reads the result.)

E22 showed that `cm.encode(x)` runs the original module's bound method eagerly. Here the method calls
`self(...)`: `self` is the original module (`OptimizedModule.__getattr__` returns
`getattr(cm._orig_mod, name)`), so `self(x)` is the original module's `__call__` -> its eager
`forward`, not the wrapper's compiled one. A loop that only calls such methods drives no compiled code.

Measured here (backend="eager", CPU): frames dynamo compiles (`counters["stats"]["unique_graphs"]`,
`calls_captured`), graph breaks, and `torch.compiler.is_compiling()` seen in each method, for
`cm.predict(x)` (method calling `self(x)`), `cm.log_info(x)` (method with a sync, no forward),
`cm.forward(x)` and `cm(x)`.

Run: python bench/evidence/e26_wrapper_method_self_call.py  Output: out/e26_wrapper_method_self_call.txt
"""
import collections

import torch
import torch._dynamo
from torch._dynamo.utils import counters

seen = collections.defaultdict(set)


def note(where):
    seen[where].add(torch.compiler.is_compiling())


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        note("forward")
        h = self.lin(x)
        return h[h > 0].sum()  # boolean mask: a graph break when traced

    def predict(self, x):
        note("predict")
        out = self(x)  # the original module: its eager forward
        return out.cpu().item()  # a sync: in a compiled region it would break the graph

    def log_info(self, x):
        note("log_info")
        return float(x.sum())


def run(label, fn, x):
    torch._dynamo.reset()
    seen.clear()
    counters.clear()
    for _ in range(3):
        fn(x)
    graphs = counters["stats"]["unique_graphs"]
    breaks = sum(counters["graph_break"].values())
    where = {k: sorted(v) for k, v in seen.items()}
    print(f"{label:<16} graphs compiled {graphs}  graph breaks {breaks}  is_compiling per method {where}")
    return graphs, breaks, where


def main():
    print("torch", torch.__version__)
    cm = torch.compile(Net(), backend="eager")
    print("type(cm):", type(cm).__name__, "| type(cm.predict.__self__):", type(cm.predict.__self__).__name__)
    x = torch.randn(8, 4)
    g_pred, b_pred, w_pred = run("cm.predict(x)", cm.predict, x)
    g_log, b_log, w_log = run("cm.log_info(x)", cm.log_info, x)
    g_fwd, b_fwd, w_fwd = run("cm.forward(x)", lambda t: cm.forward(t), x)
    g_call, b_call, w_call = run("cm(x)", cm, x)
    assert g_pred == 0 and b_pred == 0 and all(v == [False] for v in w_pred.values()), w_pred
    assert g_log == 0 and w_log == {"log_info": [False]}
    assert g_call > 0 and w_call["forward"] == [True]
    print("cm.forward(x) compiled:", g_fwd > 0 and w_fwd["forward"] == [True])


if __name__ == "__main__":
    main()
