"""E30: an int attribute of a plain Python object (not an nn.Module) that changes on every call of a compiled
forward (GNN015; a new user's trial: MeshGraphNet-Correct-in-Python's `Normalizer.record` does `self.num_rec += 1`
and is called from the compiled `MeshGraphNet.forward`; its author raised `cache_size_limit` to 32).

Measured on torch 2.13 (backend="eager", CPU), 20 calls: the plain object's counter specializes like an nn.Module's
int attribute (8 graphs, the recompile limit: each value recompiles, then the frame runs eagerly);
`allow_unspec_int_on_nn_module` is about nn.Module attributes only; the same counter kept in a 0-d tensor updated in
place compiles once.

Run: python bench/evidence/e30_plain_object_int_attr.py  Output: out/e30_plain_object_int_attr.txt
"""
import torch, torch._dynamo as dynamo
from torch._dynamo.utils import counters

class Counter:  # a plain object, not an nn.Module
    def __init__(self):
        self.n = 0
    def record(self, x):
        self.n += 1
        return x.mean() / self.n

class ModCounter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0
    def forward(self, x):
        self.n += 1
        return x.mean() / self.n

class Net(torch.nn.Module):
    def __init__(self, counter):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.counter = counter
    def forward(self, x):
        h = self.lin(x)
        return h * self.counter.record(h) if isinstance(self.counter, Counter) else h * self.counter(h)

class TensorCounter(Counter):  # the plain object's counter kept in a tensor, updated in place
    def __init__(self):
        self.n = torch.zeros(())
    def record(self, x):
        self.n += 1
        return x.mean() / self.n

for name, c in (("plain object", Counter()), ("nn.Module", ModCounter()), ("plain object, tensor counter", TensorCounter())):
    dynamo.reset(); counters.clear()
    m = torch.compile(Net(c), backend="eager")
    x = torch.randn(3, 4)
    for _ in range(20):
        m(x)
    print(f"{name}: frames compiled {counters['stats']['unique_graphs']}, "
          f"recompiles {sum(counters['recompiles'].values()) if counters.get('recompiles') else 0}, "
          f"cache limit hit {dict(counters['stats']).get('cache_size_limit_exceeded', 0)}")
