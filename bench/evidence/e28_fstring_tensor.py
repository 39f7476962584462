"""E28: does formatting a tensor in an f-string break the graph on torch 2.13? (GNN001; heldout label
torchmd-net `torchmdnet/models/utils.py:640`: `warnings.warn(f"Skipping gradients for {(~mask).sum()} atoms ...")`
under `if not mask.all():` in a compiled forward)

Formatting a tensor needs its values on the host (`Tensor.__format__` -> `.item()` for a 0-d tensor, `repr`
otherwise). Measured here (backend="eager", CPU): graph breaks over three calls with different values, the reasons
dynamo gives, and whether `fullgraph=True` compiles each function. `str(t)` / `print(t)` / `t.item()` are the
neighbours that GNN001 reports too; `f"{t.shape}"` / `f"{n}"` of a Python int are the look-alikes that never sync.

Run: python bench/evidence/e28_fstring_tensor.py  Output: out/e28_fstring_tensor.txt
"""
import warnings

import torch
import torch._dynamo
from torch._dynamo.utils import counters

warnings.simplefilter("ignore")


def fstring_unused(x):
    msg = f"sum is {x.sum()}"  # noqa: F841 - the string is built, never used
    return x + 1


def fstring_returned(x):
    return x + 1, f"sum is {x.sum()}"


def fstring_warn(x):
    warnings.warn(f"sum is {x.sum()}")
    return x + 1


def fstring_format_spec(x):
    msg = f"sum is {x.sum():.3f}"  # noqa: F841
    return x + 1


def fstring_vector(x):
    msg = f"x is {x}"  # noqa: F841
    return x + 1


def torchmd_block(x):
    # the torchmd-net shape: the tensor condition is the sync, the f-string sits inside it
    mask = (x != 0).any(dim=1)
    if not mask.all():
        warnings.warn(f"Skipping gradients for {(~mask).sum()} atoms")
    return x[:, 0] * mask


def torchmd_block_no_fstring(x):
    mask = (x != 0).any(dim=1)
    if not mask.all():
        warnings.warn("Skipping gradients for some atoms")
    return x[:, 0] * mask


def str_call(x):
    msg = str(x.sum())  # noqa: F841
    return x + 1


def item_call(x):
    return x + x.sum().item()


def fstring_shape(x):
    msg = f"shape {x.shape} {x.size(0)}"  # noqa: F841
    return x + 1


def run(fn, inputs):
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="eager")
    for x in inputs:
        compiled(x)
    breaks = sum(counters["graph_break"].values())
    reasons = sorted({reason.split("\n")[0][:90] for reason in counters["graph_break"]})
    graphs = counters["stats"]["unique_graphs"]
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(inputs[0])
        full = "compiles"
    except Exception as exc:  # noqa: BLE001 - report what dynamo raised
        full = f"fails ({type(exc).__name__})"
    print(f"{fn.__name__}: graphs={graphs} graph breaks over {len(inputs)} calls = {breaks} {reasons}; "
          f"fullgraph=True {full}")


plain = [torch.randn(5, 3), torch.randn(5, 3), torch.randn(5, 3)]
masked = [torch.randn(5, 3), torch.cat([torch.zeros(1, 3), torch.randn(4, 3)]), torch.randn(5, 3)]
for fn in (fstring_unused, fstring_returned, fstring_warn, fstring_format_spec, fstring_vector, str_call,
           item_call, fstring_shape):
    run(fn, plain)
for fn in (torchmd_block, torchmd_block_no_fstring):
    run(fn, masked)
print("torch", torch.__version__)
