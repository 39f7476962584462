"""E27: does slicing with 0-d tensor bounds (`x[ptr[i]:ptr[i + 1]]`, `ptr` a device tensor) break the graph
in compiled code, like `int(t)`?

Shape (heldout11 DynamicMPNN models.py:166): a compiled forward walks the graphs of a batch with
`batch.decoder_edge_s[ptr[b]:ptr[b + 1]]`. The slice bounds are 0-d tensors; Python's slice protocol calls
`__index__` on them, a tensor -> int conversion. Compared with the same slice with int bounds (`x[2:5]`) and with
an integer 0-d tensor used as an index (a gather).

Measured here (backend="eager", CPU, torch 2.13), calling each compiled function on four different `ptr`s:
- default mode: dynamo hits "Graph break from `Tensor.item()`" at the slice and compiles no graph for the frame
  (unique_graphs 0: the function runs eagerly every call);
- fullgraph=True: one graph, no error, no recompile for new bound values (the bound is captured as an unbacked int).
So gnnlint reports tensor slice bounds in compiled code (GNN001) except where every compile site of the file passes
fullgraph=True, and per step in eager code (GNN013: `__index__` of a device tensor syncs).

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
    ptrs = ([0, 3, 7, 10], [0, 2, 5, 10], [0, 4, 6, 10], [0, 1, 9, 10])
    for fn in (tensor_bounds, tensor_bounds_loop, int_bounds, tensor_index):
        for full in (False, True):
            torch._dynamo.reset()
            counters.clear()
            compiled = torch.compile(fn, backend="eager", fullgraph=full)
            try:
                for p in ptrs:
                    compiled(torch.arange(10.0), torch.tensor(p))
                error = ""
            except Exception as exc:  # noqa: BLE001 - the error is the measurement
                error = "; error: " + str(exc).splitlines()[0][:80]
            print(f"torch {torch.__version__}: {fn.__name__} fullgraph={full}: unique graphs "
                  f"{counters['stats']['unique_graphs']}, graph breaks {sum(counters['graph_break'].values())}{error}")
