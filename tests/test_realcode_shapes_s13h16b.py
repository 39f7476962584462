"""heldout16 spatial-omics-gfm: compiled lines that never run for what the project passes.

1. A helper called from compiled code with a value that is always None there returns early under
   ``if pos is None:``; the code after it (and under ``if pos is not None:``) never runs compiled
   (unreached_branches.py, "None argument"). The value is None because the caller's own optional input
   is never given (``self.pool(x, batch)`` without ``pos``; a local call leaving it out), or ``None`` is
   passed outright, or through a second helper.
2. A constructor parameter with a literal default that no construction in the project passes keeps it
   (``HierarchicalPooling(hidden_dim=64)``, never ``pooling_method=``): the ``elif mode == "gated":``
   submodule is never built, the ``else:`` helper never runs (default_off_flags.py, constructions.py).
   An ``__all__`` entry and an unrelated class of the same name elsewhere do not turn it on; a
   construction passing the keyword does.
"""
from __future__ import annotations

from tests.project_files import finding_keys, write_project

POOL = """\
    import torch
    from torch_scatter import scatter_mean


    class Pool(torch.nn.Module):
        def __init__(self, hidden, mode="attention", hops: int = 1):
            super().__init__()
            self.mode = mode
            self.hops = hops
            if mode == "attention":
                self.att = torch.nn.Linear(hidden, 1)
            elif mode == "gated":
                self.gated = Gated(hidden)

        def forward(self, x, batch, pos=None):
            clusters = self._clusters(pos, batch)
            if self.mode == "attention":
                out = x * self.att(x).sigmoid()
            elif self.mode == "gated":
                out = self.gated(x, clusters)
            else:
                out = self._simple(x, clusters)
            if self.hops > 1:
                out = out[out.sum(-1) > 0]
            return out

        def _clusters(self, pos, batch):
            if pos is None:
                return batch
            out = torch.full_like(batch, -1)
            for b in batch.unique():
                mask = batch == b
                out[mask] = pos[mask].argmin()
            return out

        def _simple(self, x, clusters):
            return scatter_mean(x, clusters, dim=0)


    class Gated(torch.nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.gate = torch.nn.Linear(hidden, hidden)

        def forward(self, x, clusters):
            return scatter_mean(self.gate(x) * x, clusters, dim=0)
"""
MODEL = """\
    import torch
    from demo.pool import Pool


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = POOL_CTOR
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x, batch, pos):
            return self.lin(CALL)
"""
TRAIN = """\
    import torch
    from demo.model import Net


    def main(loader):
        model = torch.compile(Net(), dynamic=True)
        for x, batch, pos in loader:
            model(x, batch, pos).sum().backward()
"""
INIT = """\
    from demo.pool import Pool

    __all__ = [
        "Pool",
    ]
"""
OTHER = """\
    import torch


    class Pool(torch.nn.Module):
        def __init__(self, size, kind, depth):
            super().__init__()


    LAYER = Pool(8, "gated", 3)
"""
CLUSTERS = ["demo/pool.py:33:25: GNN008"]
GATED = ["demo/pool.py:46:16: GNN009"]
SIMPLE = ["demo/pool.py:37:16: GNN009"]
HOPS = ["demo/pool.py:24:19: GNN008"]


def _findings(tmp_path, ctor="Pool(8)", call="self.pool(x, batch)", extra=None) -> list:
    root = write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": INIT,
        "demo/pool.py": POOL,
        "demo/other.py": OTHER,
        "demo/model.py": MODEL.replace("POOL_CTOR", ctor).replace("CALL", call),
        "demo/train.py": TRAIN,
        **(extra or {}),
    })
    return finding_keys(root, containing="pool.py")


def test_nothing_runs_for_what_the_project_passes(tmp_path):
    assert _findings(tmp_path) == []


def test_positions_are_passed_the_clusters_run(tmp_path):
    assert _findings(tmp_path, call="self.pool(x, batch, pos)") == CLUSTERS
    assert _findings(tmp_path / "kw", call="self.pool(x, batch, pos=pos)") == CLUSTERS


def test_a_construction_passing_the_mode_keeps_its_branches(tmp_path):
    # any construction passing the mode makes it unknown: every branch on it may run
    assert _findings(tmp_path, ctor='Pool(8, mode="gated")') == sorted(GATED + SIMPLE)
    assert _findings(tmp_path / "hops", ctor='Pool(8, hops=2)') == sorted(HOPS)


def test_positional_mode_or_a_subclass_keep_the_branches(tmp_path):
    assert _findings(tmp_path, ctor='Pool(8, "mean")') == sorted(GATED + SIMPLE)
    sub = {"demo/sub.py": "from demo.pool import Pool\n\n\nclass Big(Pool):\n    pass\n"}
    assert _findings(tmp_path / "sub", extra=sub) == sorted(GATED + SIMPLE + HOPS)


HELPERS = """\
    import torch


    def radius_groups(pos, batch, r):
        if pos is not None:
            keep = torch.nonzero(pos.norm(dim=-1) < r)
            return keep
        return batch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x, batch, pos=None):
            groups = self._group(batch, None)
            more = self._group(batch, pos)
            return self.lin(x) + groups.sum() + more.sum()

        def _group(self, batch, pos):
            return radius_groups(pos, batch, 1.0)
"""
RUN = """\
    import torch
    from helpers import Net


    def main(loader):
        model = torch.compile(Net(), dynamic=True)
        for x, batch in loader:
            CALL.sum().backward()
"""


def test_an_input_the_compiled_calls_never_give_reaches_a_module_function_through_a_method(tmp_path):
    """Other names, a module-level helper, ``if pos is not None:`` rather than a guard clause, ``None``
    passed outright and a parameter passed through a second function."""
    root = write_project(tmp_path, {"helpers.py": HELPERS, "run.py": RUN.replace("CALL", "model(x, batch)")})
    assert finding_keys(root) == []
    root = write_project(tmp_path / "given", {"helpers.py": HELPERS,
                                              "run.py": RUN.replace("CALL", "model(x, batch, x[:, :3])")})
    assert finding_keys(root) == ["helpers.py:6:16: GNN008"]


# heldout16 MeshGraphNet-Correct-in-Python: misses -----------------------------------------------------------------

NOISE = """\
    import torch


    def node_mask(data, node_types):
        if isinstance(node_types, list):
            mask = torch.zeros_like(data.node_type, dtype=torch.bool)
            for t in node_types:
                mask |= data.node_type == t
        else:
            mask = data.node_type == node_types
        return mask.squeeze()


    def add_noise_(data, fields, std):
        for attr in fields:
            mask = node_mask(data, 0)
            noise = torch.randn_like(data[attr][mask]) * std
            data[attr][mask] += noise
            data[f"target_{attr}"][mask] -= noise


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def _fluid(self, batch):
            return (batch.node_type == 0) & (batch.pos[:, 0] > 0)

        def forward(self, data):
            if self.training:
                add_noise_(data, ["velocity"], 0.01)
            keep = self._fluid(data)
            return self.lin(data["velocity"][keep])


    model = torch.compile(Net(), dynamic=True)
"""


def test_a_mask_a_local_helper_returns_selects_from_a_field_read_by_key(tmp_path):
    """A module function returning a mask built in branches, and a method returning a combined mask; the
    masked value is a field of a PyG data object read by key (a name, an f-string, a string)."""
    root = write_project(tmp_path, {"noise.py": NOISE})
    assert finding_keys(root, containing="GNN008") == [
        "noise.py:17:34: GNN008", "noise.py:18:9: GNN008", "noise.py:19:9: GNN008", "noise.py:34:25: GNN008"]


def test_a_key_read_without_a_mask_is_no_finding(tmp_path):
    source = NOISE.replace("return mask.squeeze()", "return data.node_index") \
        .replace("mask = node_mask(data, 0)", "picked = node_mask(data, 0)").replace("[mask]", "[picked]") \
        .replace("return (batch.node_type == 0) & (batch.pos[:, 0] > 0)", "return batch.idx")
    root = write_project(tmp_path, {"noise.py": source})
    assert finding_keys(root, containing="GNN008") == []


SETUP = """\
    import torch
    from steps import training_step
    from nets import Net


    def setup_experiment(cfg):
        model = Net()
        model = model.to(cfg["device"])
        model = torch.compile(model)
        optimizer = torch.optim.Adam(model.parameters())
        return model, optimizer, cfg["loader"]


    def train_model(model, loader, optimizer):
        for batch in loader:
            losses = training_step(model, batch, optimizer)


    def main(cfg):
        model, optimizer, loader = setup_experiment(cfg)
        train_model(model, loader, optimizer)
"""
STEPS = """\
    import torch


    def training_step(model, data, optimizer):
        optimizer.zero_grad()
        losses = {"total": 0}
        losses["mse"] = torch.nn.functional.mse_loss(model(data), data.y)
        losses["total"] += losses["mse"]
        losses["total"].backward()
        optimizer.step()
        return {key: losses[key].item() for key in losses}
"""
NETS = """\
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 1)

        def forward(self, data):
            return self.lin(data.x)
"""


def test_a_model_a_local_setup_function_compiles_and_returns_in_a_tuple_reaches_the_step(tmp_path):
    root = write_project(tmp_path, {"train.py": SETUP, "steps.py": STEPS, "nets.py": NETS})
    assert finding_keys(root, containing="steps.py") == ["steps.py:11:18: GNN013"]


def test_the_same_setup_returning_the_plain_model_is_no_step_of_compiled_code(tmp_path):
    root = write_project(tmp_path, {"train.py": SETUP.replace("model = torch.compile(model)", "pass"),
                                    "steps.py": STEPS, "nets.py": NETS})
    assert finding_keys(root, containing="steps.py") == []


def test_a_builder_method_returning_the_compiled_model_alone(tmp_path):
    """Another spelling: a builder returning only the compiled model, the loop in a method of a trainer."""
    source = SETUP.replace("return model, optimizer, cfg[\"loader\"]", "return model") \
        .replace("model, optimizer, loader = setup_experiment(cfg)",
                 "model = setup_experiment(cfg)\n        optimizer, loader = cfg['opt'], cfg['loader']")
    root = write_project(tmp_path, {"train.py": source, "steps.py": STEPS, "nets.py": NETS})
    assert finding_keys(root, containing="steps.py") == ["steps.py:11:18: GNN013"]


# heldout16 relational-transformer and spatial-omics-gfm: misses -------------------------------------------------

WANDB = """\
    import torch
    import wandb as wb


    def train(net, loader, opt):
        net = torch.compile(net, dynamic=True)
        for step, batch in enumerate(loader):
            loss = net(batch).mean()
            opt.zero_grad()
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            wb.log({"loss": LOSS, "lr": opt.param_groups[0]["lr"], "step": step}, step=step)
            wb.log({"grad_norm": NORM})
"""


def test_a_tensor_value_logged_to_wandb_every_step(tmp_path):
    """The loss and a clip_grad_norm_ result (two spellings of a device tensor) in the dict wandb.log reads."""
    source = WANDB.replace("LOSS", "loss").replace("NORM", "norm")
    assert finding_keys(tmp_path, {"train.py": source}) == ["train.py:13:9: GNN013", "train.py:14:9: GNN013"]


def test_python_numbers_logged_to_wandb_are_no_finding(tmp_path):
    source = WANDB.replace("LOSS", "loss.detach()").replace("NORM", "float(1.0)")
    source = source.replace('"loss": loss.detach()', '"loss": 0.5')
    assert finding_keys(tmp_path, {"train.py": source}) == []


TRAINER = """\
    import torch
    from torch.nn.parallel import DistributedDataParallel


    class Trainer:
        def __init__(self, model, opt, use_compile=True):
            self.model = model
            self.net = None
            self.opt = opt
            self.use_compile = use_compile

        def setup(self):
            self.net = self._wrap()
            if self.use_compile:
                try:
                    self.net = torch.compile(self.net, dynamic=True)
                except Exception:
                    pass

        def _wrap(self):
            return DistributedDataParallel(self.model)

        def fit(self, train_loader, val_loader, epochs):
            for epoch in range(epochs):
                self._train_epoch(train_loader)
                if epoch % 2 == 0:
                    metrics = self._validate(val_loader)

        def _train_epoch(self, loader):
            for batch in loader:
                out = self.net(x=batch.x, edge_index=batch.edge_index)
                self.opt.zero_grad()
                out.mean().backward()
                self.opt.step()

        def _validate(self, loader):
            total = 0.0
            with torch.no_grad():
                for batch in loader:
                    out = self.net(x=batch.x, edge_index=batch.edge_index)
                    total += out.mean().item()
            return total

        def _statistics(self, loader):
            sizes = []
            for batch in loader:
                sizes.append(batch.x.sum().item())
            return sizes
"""


def test_the_validation_method_the_epoch_loop_calls_next_to_the_training_one(tmp_path):
    """Its batch loop runs the compiled model (held in an attribute first set to None, so no kind says
    it is a model): a per-step sync; a loader loop that runs no model is not."""
    assert finding_keys(tmp_path, {"trainer.py": TRAINER}) == ["trainer.py:41:26: GNN013"]


def test_a_validation_pass_a_while_epoch_loop_calls_with_other_names(tmp_path):
    """Another spelling: a while epoch loop, the evaluation called every few epochs, an enumerate over tqdm."""
    source = TRAINER.replace("for epoch in range(epochs):", "epoch = 0\n            while epoch < epochs:") \
        .replace("metrics = self._validate(val_loader)", "metrics = self._validate(val_loader)\n                epoch += 1") \
        .replace("def _validate(self, loader):", "def run_eval(self, loader):") \
        .replace("self._validate(val_loader)", "self.run_eval(val_loader)") \
        .replace("                for batch in loader:\n                    out = self.net",
                 "                for i, batch in enumerate(tqdm(loader)):\n                    out = self.net") \
        .replace("    import torch\n", "    import torch\n    from tqdm import tqdm\n", 1)
    assert finding_keys(tmp_path, {"trainer.py": source}) == ["trainer.py:44:26: GNN013"]
