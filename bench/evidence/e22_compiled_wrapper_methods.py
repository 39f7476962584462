"""E22: does a non-`forward` method called on a compiled module's wrapper run compiled?
(GNN013/GNN001 regions; heldout3 labels ADiT `ldm_module.py:544-548`, labelled false: "only
`.encode`/`.decode` are called on the compiled `self.autoencoder`")

`torch.compile(module)` returns an `OptimizedModule` whose `forward` (and `__call__`) run the module's
forward under dynamo. Any other attribute is looked up on the original module
(`OptimizedModule.__getattr__` -> `getattr(self._orig_mod, name)`), so `opt.encode(x)` is the original
module's bound `encode`: called eagerly, and the submodules `encode` calls run eagerly too. Calling
the wrapper itself, `opt(x)`, runs `forward` compiled, and with it whatever `forward` calls
(`self.encode(x)` inside forward is traced).

Measured here (backend="eager", CPU): each method records `torch.compiler.is_compiling()`, and a
boolean mask in `encode` shows as a graph break only when `encode` is traced.

Run: python bench/evidence/e22_compiled_wrapper_methods.py  Output: out/e22_compiled_wrapper_methods.txt
"""
import collections

import torch
from torch._dynamo.utils import counters

seen = collections.defaultdict(set)


def note(where):
    seen[where].add(torch.compiler.is_compiling())


class Decoder(torch.nn.Module):
    def forward(self, z):
        note("Decoder.forward (submodule called by decode)")
        return z * 2


class AutoEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def encode(self, x):
        note("encode")
        return x[x > 0]  # boolean mask: a graph break when traced

    def decode(self, z):
        note("decode")
        return self.decoder(z)

    def forward(self, x):
        note("forward")
        return self.decode(self.encode(x))


def main():
    torch._dynamo.config.capture_scalar_outputs = False
    opt = torch.compile(AutoEncoder(), backend="eager")
    print("type(opt):", type(opt).__name__, "| type(opt.encode.__self__):", type(opt.encode.__self__).__name__)
    x = torch.randn(16)
    counters.clear()
    for _ in range(3):
        opt.decode(opt.encode(x))  # methods on the wrapper
    methods = {k: sorted(v) for k, v in seen.items()}
    breaks_methods = sum(counters["graph_break"].values())
    seen.clear()
    counters.clear()
    for _ in range(3):
        opt(x)  # the wrapper itself: forward
    calls = {k: sorted(v) for k, v in seen.items()}
    breaks_call = sum(counters["graph_break"].values())
    print("opt.encode(x) / opt.decode(z): is_compiling seen per method:", methods, "graph breaks:", breaks_methods)
    print("opt(x):                        is_compiling seen per method:", calls, "graph breaks:", breaks_call)
    assert all(v == [False] for v in methods.values()), methods
    assert breaks_methods == 0
    assert True in calls["encode"] and True in calls["Decoder.forward (submodule called by decode)"]


if __name__ == "__main__":
    main()
