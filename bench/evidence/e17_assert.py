"""E17: does an `assert` on a tensor break the graph in compiled code?

The labels disagreed: labelled suite g (vgae_fullbatch_auc.py:23, `assert torch.isfinite(x).all(), 'msg'`)
says a graph break, the real-code label fairchem escn_exportable.py:386 says none. Measured with dynamo's
explain (backend eager), torch 2.13: dynamo rewrites `assert t.all()` / `assert (x > 0).all(), "msg"` into
torch._assert_async (one graph, no break); `assert not t.any()` still breaks, like `if t.all():`.

Run: python bench/evidence/e17_assert.py  (needs torch). Output: out/e17_assert.txt
"""
import torch
import torch._dynamo


def assert_all_msg(x):  # assert torch.isfinite(x).all(), "msg"
    assert torch.isfinite(x).all(), "msg"
    return x + 1


def assert_compare_all(x):  # assert (x > 0).all()
    assert (x > 0).all()
    return x + 1


def assert_torch_all(x):  # assert torch.all(cond) (the function form; heldout8 FraGNNet labels)
    assert torch.all(x >= 0)
    return x + 1


def assert_not_any(x):  # assert not t.any()
    assert not x.any()
    return x + 1


def if_all(x):  # the GNN001 truth test, for comparison
    if x.all():
        return x + 1
    return x


if __name__ == "__main__":
    print("torch", torch.__version__)
    for f, inp in ((assert_all_msg, torch.ones(4)), (assert_compare_all, torch.ones(4)),
                   (assert_torch_all, torch.ones(4)), (assert_not_any, torch.zeros(4)), (if_all, torch.ones(4))):
        torch._dynamo.reset()
        e = torch._dynamo.explain(f)(inp)
        print(f"{f.__name__:20} graphs={e.graph_count} breaks={e.graph_break_count}",
              [str(b.reason)[:60] for b in e.break_reasons])
