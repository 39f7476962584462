"""E16: does a boolean-mask *assignment* break the graph, as a boolean-mask read does?

Real code labels (bench/realcode) disagreed: `count[count < 1] = 1`, `emb[values == 0] = 0`,
`x[mask] = torch.zeros(...)`. Measured with dynamo's explain (backend eager), torch 2.13.

Run: python bench/evidence/e16_masked_assignment.py  (needs torch). Output: out/e16_masked_assignment.txt
"""
import torch
import torch._dynamo


def read(x, mask):  # the GNN008 pattern: the output's size depends on the data
    return x[mask].sum()


def assign_scalar(x, mask):  # count[count < 1] = 1
    x = x.clone()
    x[mask] = 1.0
    return x * 2


def assign_broadcast_tensor(x, mask):  # x[mask] = torch.zeros(()) / a row broadcast to every selected row
    x = x.clone()
    x[mask] = torch.zeros((), dtype=x.dtype)
    return x * 2


def assign_rows(x, mask):  # x[mask_rows] = torch.zeros(k, d): the value's size is the mask's count
    x = x.clone()
    x[mask] = torch.zeros(int(mask.sum()), x.shape[1])
    return x * 2


def assign_from_masked(x, y, mask):  # x[mask] = y[mask]
    x = x.clone()
    x[mask] = y[mask]
    return x * 2


def assign_given_rows(x, mask, v):  # head[mask] = output_head[:, :d]: a value computed without the mask
    x = x.clone()
    x[mask] = v
    return x * 2


def augmented(x, mask):  # edge_weight[loop_mask] -= 1 (ChebConv.__norm__): reads x[mask], then writes it
    x = x.clone()
    x[mask] -= 1
    return x * 2


def main():
    torch.manual_seed(0)
    x = torch.randn(16, 4)
    y = torch.randn(16, 4)
    rows = x[:, 0] > 0
    elems = x > 0
    cases = [("x[mask].sum()", read, (x, elems)),
             ("x[mask] = 1.0", assign_scalar, (x, elems)),
             ("x[mask] = torch.zeros(())", assign_broadcast_tensor, (x, elems)),
             ("x[rows] = torch.zeros(int(rows.sum()), d)", assign_rows, (x, rows)),
             ("x[mask] = y[mask]", assign_from_masked, (x, y, elems)),
             ("x[rows] = v  (v: k rows computed elsewhere)", assign_given_rows, (x, rows, y[: int(rows.sum())])),
             ("x[mask] -= 1", augmented, (x, elems))]
    print(f"torch {torch.__version__}")
    for name, fn, args in cases:
        torch._dynamo.reset()
        e = torch._dynamo.explain(fn)(*args)
        reasons = sorted({str(r.reason).splitlines()[0][:90] for r in e.break_reasons})
        print(f"{name:45} graphs {e.graph_count} breaks {e.graph_break_count} {reasons}")


if __name__ == "__main__":
    main()
