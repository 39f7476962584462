"""E27: does slicing with 0-d tensor bounds (`x[ptr[i]:ptr[i + 1]]`, `ptr` a device tensor) break the graph
in compiled code, like `int(t)`?

Shape (heldout11 DynamicMPNN models.py:166): a compiled forward walks the graphs of a batch with
`batch.decoder_edge_s[ptr[b]:ptr[b + 1]]`. The slice bounds are 0-d tensors; Python's slice protocol calls
`__index__` on them, a tensor -> int conversion. Compared with the same slice with int bounds (`x[2:5]`) and with
an integer 0-d tensor used as an index (a gather).

Measured here (backend="eager", CPU, torch 2.13): tensor slice bounds break the graph (`Tensor.item()`, "consider
setting capture_scalar_outputs"); inside a loop the break skips the whole frame (0 graphs: the function runs
eagerly). Int bounds: one graph, no break.

Run: python bench/evidence/e27_tensor_slice_bounds.py  Output: out/e27_tensor_slice_bounds.txt
"""
import torch
import torch._dynamo


def tensor_bounds(x, ptr):
    return (x * 2)[ptr[1]:ptr[2]].sum() + 1


def tensor_bounds_loop(x, ptr):
    out = []
    for i in range(ptr.numel() - 1):  # the DynamicMPNN shape: a graph break inside a loop skips the frame
        out.append(x[ptr[i]:ptr[i + 1]].sum())
    return torch.stack(out)


def int_bounds(x, ptr):
    return x[2:5].sum() + ptr.sum()


def tensor_index(x, ptr):
    return x[ptr[1]]  # an integer 0-d tensor as an index (a gather), not a slice bound


if __name__ == "__main__":
    import logging

    from torch._dynamo.utils import counters

    torch._logging.set_logs(dynamo=logging.ERROR)
    x, ptr = torch.arange(10.0), torch.tensor([0, 3, 7, 10])
    for fn in (tensor_bounds, tensor_bounds_loop, int_bounds, tensor_index):
        torch._dynamo.reset()
        counters.clear()
        torch.compile(fn, backend="eager")(x, ptr)
        breaks = {k[:70]: v for k, v in counters["graph_break"].items()}
        torch._dynamo.reset()
        try:
            torch.compile(fn, backend="eager", fullgraph=True)(x, ptr)
            full = "fullgraph ok"
        except Exception as exc:  # noqa: BLE001 - the error is the measurement
            full = "fullgraph error: " + str(exc).splitlines()[0][:90]
        print(f"torch {torch.__version__}: {fn.__name__}: graph breaks {sum(breaks.values())} {breaks}, "
              f"graphs {counters['stats']['unique_graphs']}; {full}")
