"""The context's shared answers for issue 10 item 4: eager-only code
(semantic/eager.py) and isinstance narrowing of a value's kind (semantic/narrowing.py)."""

import libcst as cst

from gnnlint.context import SCALAR, TENSOR, UNKNOWN, FileContext
from tests.file_contexts import context_of




def _names(ctx: FileContext, name: str) -> list[cst.Name]:
    return [n for n in ctx.name_uses(name) if ctx.is_read(n)]


def _calls(ctx: FileContext, attr: str) -> list[cst.Call]:
    return [c for c in ctx.all_calls() if isinstance(c.func, cst.Attribute) and c.func.attr.value == attr]


def test_eager_only_guards_disable_and_helpers():
    ctx = context_of("""
        import torch
        import torch_geometric
        from transformers.utils import is_torchdynamo_compiling
        def helper(x):
            return x.eager_helper()
        def shared(x):
            return x.shared_helper()
        class Net(torch.nn.Module):
            def forward(self, x):
                x = shared(x).before_guard()
                if torch_geometric.is_compiling():
                    return x
                return helper(shared(x)).after_guard()
            @torch._dynamo.disable
            def log(self, x):
                return x.disabled()
        class Net2(torch.nn.Module):
            def forward(self, x):
                if not is_torchdynamo_compiling():
                    x = x.not_compiling()
                return self.log2(x).compiled()
            @torch.compiler.disable(recursive=False)
            def log2(self, x):
                return x.disabled2()
        m = torch.compile(Net())
        m2 = torch.compile(Net2())
    """)
    eager = {name: ctx.is_eager_only(_calls(ctx, name)[0]) for name in (
        "eager_helper", "shared_helper", "before_guard", "after_guard", "disabled", "not_compiling", "compiled",
        "disabled2")}
    assert eager == {"eager_helper": True, "shared_helper": False, "before_guard": False, "after_guard": True,
                     "disabled": True, "not_compiling": True, "compiled": False, "disabled2": True}
    # the compile-site analysis does not follow calls from eager-only code
    assert ctx.compiled_region(_calls(ctx, "eager_helper")[0]) is None
    assert ctx.compiled_region(_calls(ctx, "shared_helper")[0]) is not None
    assert ctx.compiled_region(_calls(ctx, "disabled2")[0]) is None


def test_isinstance_narrowing_of_kinds():
    ctx = context_of("""
        import torch
        from torch import Tensor
        def repeat_blocks(sizes, repeats, mask):
            if isinstance(repeats, torch.Tensor):
                repeats = torch.masked_select(repeats, mask)
                inside = repeats
            else:
                other = repeats
            return torch.repeat_interleave(sizes, repeats)
        def counts_of(sizes):
            counts = torch.bincount(sizes)
            if torch.is_tensor(counts) and counts.numel() > 0:
                counts = counts.long()
            return counts
    """)
    uses = _names(ctx, "repeats")
    last = uses[-1]
    # after the branch: what the caller passed (no in-file caller: unknown), not the masked_select
    assert ctx.kind(last) == UNKNOWN and not ctx.likely_tensor(last)
    assert ctx.tensor_narrowing("repeats", last) is None
    other = next(n for n in uses if isinstance(ctx.parent.get(n), cst.Assign)
                 and ctx.parent[n].targets[0].target.value == "other")
    assert ctx.tensor_narrowing("repeats", other) is False and ctx.kind(other) == SCALAR
    # a tensor before the branch stays a tensor
    assert ctx.kind(_names(ctx, "counts")[-1]) == TENSOR
