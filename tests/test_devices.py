"""semantic/devices.py: which tensors are known to live on the CPU (issue 10 item 5)."""
import textwrap

import libcst as cst

from gnnlint.context import FileContext


def _values(source: str) -> dict[str, object]:
    ctx = FileContext(cst.parse_module(textwrap.dedent(source)), "case.py")
    out = {}
    for call in ctx.all_calls():
        if isinstance(call.func, cst.Name) and call.func.value == "probe":
            arg = call.args[0].value
            out[ctx.module.code_for_node(arg)] = ctx.host_tensor(arg)
    return out


def test_host_tensors():
    found = _values("""
        import numpy as np
        import torch
        def f(out, losses, device):
            a = torch.tensor(losses)
            b = torch.as_tensor([1.0, 2.0])
            c = out.detach().cpu()
            d = torch.from_numpy(np.ones(3))
            e = torch.tensor(losses, device=device)
            g = torch.tensor(losses).to(device)
            h = torch.as_tensor(out)
            probe(a.mean())
            probe(b * 2)
            probe(c.sum())
            probe(d[0])
            probe(e.mean())
            probe(g)
            probe(h)
            probe(out)
            probe(a + out)
            probe(out.to("cpu"))
    """)
    host = {k for k, v in found.items() if v}
    assert host == {"a.mean()", "b * 2", "c.sum()", "d[0]", 'out.to("cpu")'}


def test_default_device_makes_factories_unknown():
    found = _values("""
        import torch
        torch.set_default_device("cuda")
        a = torch.tensor([1.0])
        probe(a)
    """)
    assert found == {"a": None}


def test_last_partial_batch_message():
    """GNN007 on fixed-size examples without drop_last names drop_last, not dynamic=True, and offers no fix."""
    from gnnlint.config import Settings
    from gnnlint.engine import lint_source
    source = textwrap.dedent("""
        import torch
        import torch_geometric.transforms as T
        from torch_geometric.datasets import ModelNet
        from torch_geometric.loader import DataLoader
        dataset = ModelNet("data", transform=T.SamplePoints(1024))
        model = torch.compile(Net())
        for data in DataLoader(dataset, 32):
            model(data.pos, data.batch)
    """)
    findings = [f for f in lint_source(source, "case.py", Settings()) if f.code == "GNN007"]
    assert len(findings) == 1 and findings[0].fix is None and findings[0].severity == "info"
    assert "`drop_last=True`" in findings[0].message and "`T.SamplePoints(1024)`" in findings[0].message


def test_pytest_fixtures_and_joins_of_host_tensors():
    # a test's parameter named after a fixture is what the fixture returns (by position when unpacked);
    # torch.cat / torch.stack of CPU tensors is a CPU tensor
    found = _values("""
        import pytest
        import torch
        @pytest.fixture
        def sizes():
            n = torch.tensor([5], dtype=torch.long)
            return torch.randn(5, 3, device="cuda"), n
        @pytest.fixture
        def counts():
            return torch.tensor([1, 2])
        def helper():
            return torch.tensor([3])
        def test_it(sizes, counts, helper, other):
            x, n = sizes
            both = torch.cat([n, n])
            probe(n)
            probe(both)
            probe(x)
            probe(counts)
            probe(helper)
            probe(torch.cat([n, other]))
    """)
    assert found["n"] and found["both"] and found["counts"]
    assert found["x"] is None  # a device tensor (torch.randn(..., device=...)) is not known to be on the CPU
    assert found["helper"] is None  # not a fixture: a parameter of that name is whatever the caller passes
    assert found["torch.cat([n, other])"] is None


def test_elements_of_a_cpu_copy_are_host_tensors():
    # the element of a comprehension reads its target (written after it); a `.cpu()` copy's
    # rows / a TensorDict's `.items()` values are on the host, whatever was copied
    found = _values("""
        def f(metric_td, out):
            a = {k: probe(v) for k, v in metric_td.cpu().items()}
            b = [probe(row) for row in out.cpu()]
            c = [probe(dev_row) for dev_row in out]
            for w in metric_td.cpu().values():
                probe(w)
    """)
    host = "an element of a `.cpu()` result"
    assert found == {"v": host, "row": host, "dev_row": None, "w": host}, found


def test_factories_without_device_build_on_the_cpu():
    found = _values("""
        import torch
        def f(x, rate):
            probe(torch.rand(()) < 0.5)
            probe(torch.zeros(3).sum())
            probe(torch.rand((), device=x.device) < rate)
            probe(torch.arange(5, device="cuda"))
            with torch.device("cuda"):
                probe(torch.ones(2))
            probe(torch.rand_like(x))
    """)
    assert found["torch.rand(()) < 0.5"] == "`torch.rand(...)` without `device=` (built on the CPU)"
    assert found["torch.zeros(3).sum()"] == "`torch.zeros(...)` without `device=` (built on the CPU)"
    assert found["torch.rand((), device=x.device) < rate"] is None
    assert found['torch.arange(5, device="cuda")'] is None
    assert found["torch.ones(2)"] is None  # `with torch.device("cuda"):`
    assert found["torch.rand_like(x)"] is None  # where x lives


def test_tuple_elements_a_local_method_returns_and_torch_ops_of_host_tensors():
    # wheatley's pretrainer: masks built from numpy in a dataset method, unpacked by the
    # training function, handed to a per-step helper that compares `torch.where(masks, 1, 0)`
    found = _values("""
        import numpy as np
        import torch
        class Pretrainer:
            def generate(self, n, device):
                masks = torch.tensor(np.array(n))
                return masks, torch.ones(3, device=device)
            def target(self, all_masks, inds):
                p = torch.where(all_masks[inds], 1, 0)
                total = p[0].sum()
                probe(total == 1)
                probe(torch.where(all_masks[inds], p, 0))
            def train(self, device):
                masks, on_device = self.generate(4, device)
                probe(masks)
                probe(on_device)
                probe(torch.where(on_device, 1, 0))
                self.target(masks, [0])
    """)
    assert found["total == 1"] is not None
    assert found["torch.where(all_masks[inds], p, 0)"] is not None
    assert found["masks"] is not None
    assert found["on_device"] is None
    assert found["torch.where(on_device, 1, 0)"] is None


def test_fields_of_a_host_copy_and_saved_hyperparameters():
    found = _values("""
        import torch
        class Lit:
            def step(self, batch, outputs, phase):
                sample = batch.to_data_list()[0].detach().cpu()
                moved = batch.cuda()
                probe(sample.y)
                probe(moved.y)
                probe(batch.y)
                probe(self.hparams.max_weight * torch.exp(torch.tensor(-5.0 * phase)))
                probe(self.scale * torch.exp(torch.tensor(-5.0 * phase)))
    """)
    host = {k for k, v in found.items() if v}
    assert host == {"sample.y", "self.hparams.max_weight * torch.exp(torch.tensor(-5.0 * phase))"}


def test_keyword_splat_may_carry_the_device():
    found = _values("""
        import torch
        def f(q, tensor_kwargs):
            rot = torch.tensor([[1.0, q]], **tensor_kwargs)
            probe(rot.T)
            probe(rot)
    """)
    assert not any(found.values()), found


def test_elements_of_host_tensors_through_zip_enumerate_and_tolist():
    # `.to("cpu")` copies (particleflow's domain labels): the items of a loop over them, of a
    # `zip` of them, of `enumerate`, a comparison with a `.tolist()` element, `torch.unique` of one
    found = _values("""
        import torch
        def f(batch, dev):
            ids = batch.source_id.detach().to("cpu").long().view(-1)
            types = batch.input_type_id.detach().to("cpu").long().view(-1)
            for a, b in zip(ids, types):
                probe(a)
                probe(b)
            for i, row in enumerate(ids):
                probe(row)
            for v in torch.unique(ids).tolist():
                probe(ids == v)
            probe(torch.unique(ids))
            for a, b in zip(ids, dev):
                probe(b)
            for v in torch.unique(dev).tolist():
                probe(dev == v)
            for w in dev:
                probe(w)
    """)
    assert found["a"] and found["row"] and found["ids == v"] and found["torch.unique(ids)"]
    assert found["b"] is None  # `zip(ids, dev)`: the second position is the device tensor
    assert found["dev == v"] is None and found["w"] is None
