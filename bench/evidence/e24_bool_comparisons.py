"""E24: do `torch.allclose` / `torch.equal` (a Python bool computed from tensors) break the graph like
`.item()`? (GNN001/GNN013; heldout4 labels boltz `boltz1.py:1173`, `boltz2.py:1089`:
`if not torch.allclose(out["iptm"], torch.zeros_like(out["iptm"]))` on every prediction batch)

Both return a Python bool whose value depends on the tensors' data: outside compiled code the host waits
for the device to compute it (a sync, like `.item()`); inside, dynamo cannot trace the bool.

Measured here (backend="eager", CPU): graph breaks over three calls, the reason dynamo gives, and
whether `fullgraph=True` compiles each function.

Run: python bench/evidence/e24_bool_comparisons.py  Output: out/e24_bool_comparisons.txt
"""
import torch
import torch._dynamo
from torch._dynamo.utils import counters


def allclose(x, y):
    return x + 1 if torch.allclose(x, y) else x - 1


def equal(x, y):
    return x + 1 if torch.equal(x, y) else x - 1


def method(x, y):
    return x + 1 if x.allclose(y) else x - 1


for fn in (allclose, equal, method):
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="eager")
    for y in (torch.ones(4), torch.zeros(4), torch.ones(4)):
        compiled(torch.ones(4), y)
    breaks = sum(counters["graph_break"].values())
    reasons = sorted({reason.split("\n")[0] for reason in counters["graph_break"]})
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(4), torch.ones(4))
        full = "compiles"
    except Exception as exc:  # noqa: BLE001 - report what dynamo raised
        full = f"fails ({type(exc).__name__})"
    print(f"{fn.__name__}: graph breaks over 3 calls = {breaks} {reasons}; fullgraph=True {full}")
