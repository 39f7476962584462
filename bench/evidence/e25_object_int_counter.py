"""E25: does an int counter on a plain Python object (not an nn.Module) that a compiled forward runs
recompile on every call, like a module's int attribute (GNN015)?

Shape (heldout8 routefinder reward_normalization.py:173/194): a LightningModule compiled whole stores a
reward normaliser (`self.normalization = CumulativeMean()`, a plain class with `__call__`) whose
`__call__` runs `self.n += 1` inside the compiled `shared_step`.

Measured here (backend="eager", CPU, torch 2.13): the frame recompiles on every call until
`recompile_limit` (8) and then runs eagerly -- dynamo guards on the object's int attribute as on a module's.

Run: python bench/evidence/e25_object_int_counter.py  Output: out/e25_object_int_counter.txt
"""
import torch
import torch._dynamo
from torch._dynamo.utils import counters


class Norm:
    def __init__(self):
        self.n = 0

    def __call__(self, r):
        out = r * 2
        self.n += 1
        return out


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.norm(self.lin(x))


if __name__ == "__main__":
    torch._dynamo.reset()
    counters.clear()
    model = torch.compile(Model(), backend="eager")
    for _ in range(12):
        model(torch.ones(2, 4))
    print(f"torch {torch.__version__}: 12 calls, counter {model.norm.n}, "
          f"graphs compiled {counters['stats']['unique_graphs']} (recompile_limit 8 -> the rest eager)")
