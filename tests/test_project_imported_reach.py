"""Reach across files into functions and methods (heldout11, s10reach11):

- ``torch.compile(pkg.radius)`` / ``torch.compile(radius)`` of a function another file of the project defines
  (a benchmark compiling its package's function): that function's body is a compiled region
  (semantic/imported_functions.py);
- ``self.<sub>.<method>(...)`` in compiled code (a compiled Lightning ``validation_step`` calling
  ``self.model.sample(batch)``) runs that method of each class the submodule may hold -- a local one, an
  imported one, one a Hydra config group builds (semantic/called_choices.py);
- a function only a DataLoader runs (``collate_fn=``, a Dataset's ``__getitem__``) is eager
  (semantic/eager.py), so GNN004 says nothing there;
- ``a[m], b[m] = x, y`` is a masked assignment, like ``a[m] = x`` (GNN008).
"""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

RADIUS = """\
    import torch


    def radius(x, y, batch_x: torch.Tensor):
        batch_size = int(batch_x.max()) + 1
        row, col = torch.nonzero(x[:, None] - y[None] < 1.0, as_tuple=True)
        return row, col, batch_size
"""


def _codes(lines, name):
    return sorted((line.split(":")[1], line.split(" ")[1]) for line in lines if line.startswith(name))


def test_compiled_package_function_through_its_init(tmp_path):
    write_project(tmp_path, {
        "src/pkg/__init__.py": "from ._radius import radius\n",
        "src/pkg/_radius.py": RADIUS,
        "benchmarks/bench_radius.py": """\
            import torch
            import pkg


            class BenchRadius:
                def __init__(self):
                    self.func = torch.compile(pkg.radius, fullgraph=True)

                def time_radius(self):
                    self.func(self.x, self.y, self.b)
        """,
    })
    assert _codes(whole_tree_lines(tmp_path), "src/pkg/_radius.py") == [("5", "GNN001"), ("6", "GNN008")]


def test_compiled_imported_function_by_name(tmp_path):
    write_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/_radius.py": RADIUS,
        "run.py": """\
            import torch
            from pkg._radius import radius

            fast = torch.compile(radius)
        """,
    })
    assert _codes(whole_tree_lines(tmp_path), "pkg/_radius.py") == [("5", "GNN001"), ("6", "GNN008")]


def test_valid_imported_function_called_not_compiled(tmp_path):
    # VALID: the function is only called eagerly; what is compiled is a library function
    write_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/_radius.py": RADIUS,
        "run.py": """\
            import torch
            from pkg._radius import radius

            relu = torch.compile(torch.nn.functional.relu)
            out = radius(torch.randn(4, 3), torch.randn(4, 3), torch.zeros(4, dtype=torch.long))
        """,
    })
    assert _codes(whole_tree_lines(tmp_path), "pkg/_radius.py") == []


SAMPLER = """\
    import torch


    class Sampler(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x)

        def sample(self, x):
            n = x.sum().item()
            return self.lin(x), n

        def describe(self, x):
            return x.sum().item()
"""


def test_submodule_method_called_from_compiled_step(tmp_path):
    write_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sampler.py": SAMPLER,
        "pkg/module.py": """\
            import lightning as L
            import torch
            from pkg.sampler import Sampler


            class Module(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.net = Sampler()

                def forward(self, x):
                    return self.net(x)

                def validation_step(self, batch, batch_idx):
                    out, n = self.net.sample(batch)
                    return out

                def on_validation_epoch_end(self):
                    self.net.eval()
                    print(self.net.describe(torch.ones(2)))
        """,
        "train.py": """\
            import lightning as L
            import torch
            from pkg.module import Module

            model = torch.compile(Module(), dynamic=True)
            L.Trainer().fit(model)
        """,
    })
    # `sample` runs in the compiled validation_step; `describe` only in an epoch hook (VALID)
    assert _codes(whole_tree_lines(tmp_path), "pkg/sampler.py") == [("13", "GNN001")]


def test_collate_fn_and_dataset_items_are_eager(tmp_path):
    write_project(tmp_path, {
        "train.py": """\
            import torch
            from torch.utils.data import DataLoader, Dataset


            class Records(Dataset):
                def __getitem__(self, idx):
                    counts = self.counts[idx]
                    return torch.repeat_interleave(torch.arange(len(counts)), counts)


            def collate(batch):
                num_atoms = torch.tensor([r.numel() for r in batch])
                return torch.repeat_interleave(torch.arange(len(batch)), num_atoms)


            def spread(h, counts):
                return h.repeat_interleave(counts, dim=0)


            class Net(torch.nn.Module):
                def forward(self, h, counts):
                    return spread(h, counts)


            model = torch.compile(Net(), dynamic=True)
            loader = DataLoader(Records(), batch_size=8, collate_fn=collate)
            for h, counts in loader:
                model(h, counts)
        """,
    })
    # VALID: collate and __getitem__ run in the loader; INVALID: `spread` runs in the compiled forward
    assert _codes(whole_tree_lines(tmp_path), "train.py") == [("17", "GNN004")]


def test_masked_tuple_assignment_is_not_a_read(tmp_path):
    write_project(tmp_path, {
        "model.py": """\
            import torch


            class Net(torch.nn.Module):
                def forward(self, s, v, node_mask):
                    out_s, out_v = torch.zeros_like(s), torch.zeros_like(v)
                    out_s[node_mask], out_v[node_mask] = s[node_mask], v
                    return out_s, out_v


            model = torch.compile(Net())
        """,
    })
    # VALID: the targets keep their shape; INVALID: the read `s[node_mask]` on the right
    assert _codes(whole_tree_lines(tmp_path), "model.py") == [("7", "GNN008")]


SWEEP = """\
    import torch
    from e3nn.o3._spherical_harmonics import _spherical_harmonics


    def bench(tensor_shape, l_max):
        joint = torch.rand(tensor_shape, requires_grad=True)
        x, y, z = joint[..., 0], joint[..., 1], joint[..., 2]
        out = torch.compile(_spherical_harmonics, fullgraph=True)(l_max, x, y, z)
        out.backward(gradient=torch.ones_like(out))
        err = out.detach().cpu().numpy()
        return err


    def repeat(num_feats, l_max):
        joint = torch.rand([num_feats, 3])
        return torch.compile(_spherical_harmonics)(l_max, joint[..., 0], joint[..., 1], joint[..., 2])
"""


def test_loop_of_sizes_runs_compiled_function(tmp_path):
    write_project(tmp_path, {"bench.py": SWEEP + """\


        for n in range(2, 8):
            bench((int(10 ** n), 3), l_max=4)
        for _ in range(10):
            repeat(1000, 4)
    """})
    lines = whole_tree_lines(tmp_path)
    # INVALID: a new size per iteration (GNN007) and a host copy per iteration of the loop running the
    # compiled function (GNN013); VALID: `repeat` is run on one size only
    assert _codes(lines, "bench.py") == [("10", "GNN013"), ("8", "GNN007")]


def test_batch_loop_around_an_iterative_sampler(tmp_path):
    write_project(tmp_path, {"sample.py": """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, t, atoms, x):
                return x * t


        def integrate(model, atoms, x, n_steps):
            for k in range(n_steps):
                x = x + 0.1 * model(k / n_steps, atoms, x)
            return x


        def train(model, opt, atoms, x):
            for k in range(10):
                loss = model(0.5, atoms, x).sum()
                loss.backward()
                opt.step()
            return loss


        def run_test(model, opt, species, n_test, bs):
            for i in range(0, n_test, bs):
                atoms = species[i:i + bs].cuda()
                pos = integrate(model, atoms, torch.randn(bs, 3, device="cuda"), 50)
                pos_cpu = pos.cpu().numpy()
            for epoch in range(5):
                atoms = species.cuda()
                loss = train(model, opt, atoms, torch.randn(len(species), 3, device="cuda"))
                print(loss.item())


        model = torch.compile(Net(), dynamic=True)
        run_test(model, torch.optim.Adam(model.parameters()), torch.arange(100), 100, 10)
    """})
    # INVALID: once per batch handed to the sampler; VALID: once per epoch around a training function's loop
    assert _codes(whole_tree_lines(tmp_path), "sample.py") == [("27", "GNN013")]


def test_stored_partial_and_mask_handed_to_helper(tmp_path):
    write_project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/utils.py": """\
            import torch_scatter


            def centralize(batch, key, batch_index):
                centroid = torch_scatter.scatter(batch[key], batch_index, dim=0, reduce="mean")
                return centroid, batch[key] - centroid[batch_index]
        """,
        "pkg/net.py": """\
            from functools import partial

            import torch
            from pkg.utils import centralize


            def tuple_index(x, idx):
                return x[0][idx], x[1][idx]


            def last_rows(x, idx):
                return x[0][idx], x[1][idx]


            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.centralize = partial(centralize, key="pos")

                def forward(self, batch, s, v, src, dst):
                    _, pos = self.centralize(batch, batch_index=batch.batch)
                    mask = src < dst
                    forward = tuple_index((s, v), mask)
                    rows = last_rows((s, v), dst)
                    return pos, forward, rows


            model = torch.compile(Net(), dynamic=True)
        """,
    })
    lines = whole_tree_lines(tmp_path)
    # INVALID: the stored partial runs `centralize` compiled (GNN009); a mask handed to `tuple_index`
    # (GNN008, both reads); VALID: `last_rows` is handed an index tensor, a gather
    assert _codes(lines, "pkg/utils.py") == [("5", "GNN009")]
    assert _codes(lines, "pkg/net.py") == [("8", "GNN008"), ("8", "GNN008")]


def test_mask_a_model_returns(tmp_path):
    write_project(tmp_path, {"module.py": """\
        import lightning as L
        import torch


        class Module(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, batch):
                out = self.lin(batch.x)
                return out, batch.y >= 0

            def training_step(self, batch, batch_idx):
                logits, valid_mask = self(batch)
                logits, valid_count = self(batch)
                loss = torch.nn.functional.cross_entropy(logits[valid_mask], batch.y[valid_count])
                return loss


        model = torch.compile(Module(), dynamic=True)
        L.Trainer().fit(model)
    """})
    # INVALID: a `*mask*` the model returns indexes (twice); VALID: another output used as an index
    assert _codes(whole_tree_lines(tmp_path), "module.py") == [("17", "GNN008")]


SLICES = """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x, edge_attr, num_edges):
            ptr = torch.cat([num_edges.new_zeros(1), num_edges.cumsum(0)])
            n = x.size(0)
            out = []
            for i in range(num_edges.numel()):
                out.append(edge_attr[ptr[i]:ptr[i + 1]].sum(0))
            return torch.stack(out), x[:n // 2], x[1:]


    model = torch.compile(Net(){options})
"""


def test_tensor_slice_bounds(tmp_path):
    write_project(tmp_path, {"a/net.py": SLICES.format(options=""),
                             "b/net.py": SLICES.format(options=", fullgraph=True")})
    lines = whole_tree_lines(tmp_path)
    # INVALID: a 0-d tensor bound (default mode: the frame runs eagerly, e27); VALID: int bounds, and the
    # same code under fullgraph=True (captured as an unbacked int)
    assert _codes(lines, "a/net.py") == [("10", "GNN001")]
    assert _codes(lines, "b/net.py") == []


def test_method_of_a_config_built_submodule(tmp_path):
    write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "configs/model/ar.yaml": "_target_: pkg.sampler.Sampler\n",
        "pkg/__init__.py": "",
        "pkg/sampler.py": SAMPLER,
        "pkg/module.py": """\
            import hydra
            import lightning as L
            import torch


            class Module(L.LightningModule):
                def __init__(self, cfg):
                    super().__init__()
                    self.net = hydra.utils.instantiate(cfg.model)

                def forward(self, x):
                    return self.net(x)

                def validation_step(self, batch, batch_idx):
                    out, n = self.net.sample(batch)
                    return out
        """,
        "train.py": """\
            import torch
            from pkg.module import Module

            model = torch.compile(Module(cfg), dynamic=True)
        """,
    })
    # the group's class runs `sample` in the compiled validation_step (engine: "model#sample")
    assert _codes(whole_tree_lines(tmp_path), "pkg/sampler.py") == [("13", "GNN001")]


def test_pyg_batch_size_slice_is_an_int(tmp_path):
    write_project(tmp_path, {"net.py": """\
        import torch


        class Net(torch.nn.Module):
            def forward(self, batch):
                out = self.lin(batch.x)
                bs = batch.batch_size
                return out[:batch.batch_size], out[:bs]


        model = torch.compile(Net(), dynamic=True)
    """})
    # VALID: NeighborLoader's `batch.batch_size` is a Python int
    assert _codes(whole_tree_lines(tmp_path), "net.py") == []
