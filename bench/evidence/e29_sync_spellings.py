"""E29: other spellings of a host sync on torch 2.13 (census E2): %-formatting and str.format of a tensor, builtin
min()/max() with a tensor operand, `x in tensor`. (GNN001 / GNN013; heldout labels deepmd-kit training.py
`prop_fmt % (valid_results[k], ...)`, beignet `min(...)` of tensors, FlowDock `max(...)` over a tensor,
alphafold3-pytorch `x in tensor`.)

Each formats or compares values, so eager code reads the tensor on the host (`Tensor.__format__` / `__bool__`).
Measured here (backend="eager", CPU) as e28 does: graph breaks over three calls, dynamo's reasons, and whether
`fullgraph=True` compiles. Result: `"%.3f" % t` and `3 in t` make dynamo give up on the whole frame (graphs=0,
"Data dependent operator" / "Tensor.item()": the function runs eagerly), a break GNN001 reports; `"{:.3f}".format(t)`
is deferred like an f-string (e28) and `max(t, 0.5)` / `min(a, b)` / `max(t)` are traced (no break), so those three
are syncs only in per-step eager code (GNN013). Look-alikes: `"%d" % n` of a Python int, `max(a, b)` of Python numbers, `k in dict`.

Run: python bench/evidence/e29_sync_spellings.py  Output: out/e29_sync_spellings.txt
"""
import warnings

import torch
import torch._dynamo
from torch._dynamo.utils import counters

warnings.simplefilter("ignore")


def percent_format(x):
    msg = "sum %.3f" % x.sum()  # noqa: F841
    return x + 1


def percent_format_tuple(x):
    msg = "%d sum %.3f" % (3, x.sum())  # noqa: F841
    return x + 1


def str_format(x):
    msg = "sum {:.3f}".format(x.sum())  # noqa: F841
    return x + 1


def builtin_max_two(x):
    m = max(x.sum(), 0.5)
    return x + m


def builtin_min_two_tensors(x):
    m = min(x.sum(), x.mean())
    return x + m


def builtin_max_over(x):
    m = max(x[:, 0])
    return x + m


def contains(x):
    if 3 in x:
        return x + 1
    return x - 1


def percent_int(x):
    msg = "n %d" % x.size(0)  # noqa: F841
    return x + 1


def max_numbers(x):
    return x * max(x.size(0), 2)


def dict_contains(x):
    d = {"a": 1}
    return x + 1 if "a" in d else x


def run(fn, inputs):
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="eager")
    for x in inputs:
        compiled(x)
    breaks = sum(counters["graph_break"].values())
    reasons = sorted({reason.split("\n")[0][:90] for reason in counters["graph_break"]})
    graphs = counters["stats"]["unique_graphs"]
    # graphs=0: dynamo gave up on the whole frame (it runs eagerly); the reason is counted as "unimplemented"
    skipped = sorted({reason.split("\n")[0][:70] for reason in counters["unimplemented"]})
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(inputs[0])
        full = "compiles"
    except Exception as exc:  # noqa: BLE001 - report what dynamo raised
        full = f"fails ({type(exc).__name__})"
    torch._dynamo.reset()
    explained = torch._dynamo.explain(fn)(inputs[0])  # counts breaks that skip the whole frame too
    explain_reasons = sorted({r.reason.split("\n")[0][:90] for r in explained.break_reasons})
    print(f"{fn.__name__}: graphs={graphs} graph breaks over {len(inputs)} calls = {breaks} {reasons}; "
          f"fullgraph=True {full}; frame given up: {skipped}; explain: graphs={explained.graph_count} "
          f"breaks={explained.graph_break_count} {explain_reasons}")


plain = [torch.randn(5, 3), torch.randn(5, 3), torch.randn(5, 3)]
for fn in (percent_format, percent_format_tuple, str_format, builtin_max_two, builtin_min_two_tensors,
           builtin_max_over, contains, percent_int, max_numbers, dict_contains):
    run(fn, plain)
print("torch", torch.__version__)
