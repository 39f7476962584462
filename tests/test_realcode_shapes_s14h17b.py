"""heldout17 shapes (SHEPHERD-Advanced, edge-set-attention):

- ``residual = x_dict if self.use_residual else None`` then ``if k in residual:`` in a compiled forward
  whose ``x_dict: Dict[str, Tensor]``: the annotation says a dict (of tensors), not a tensor, so ``in``
  hashes a key and reads no device value (semantic/mappings.py ``mapping_annotation``, asked by kinds.py);
  ``x_dict[k]`` stays a tensor;
- ``scaler.step(optimizer)`` (AMP's GradScaler) in an outer ``while`` loop around a gradient-accumulation
  ``for``: it steps the optimizer it is handed, so the outer loop is a training loop and its per-step
  ``loss.item()`` under a logging guard syncs on those steps (semantic/optim.py ``steps_optimizer``).
Each VALID case has an INVALID twin that keeps the finding."""
from __future__ import annotations

from tests.project_files import finding_keys

HETERO = """\
    from typing import Dict

    import torch
    from torch import Tensor, nn


    class HeteroLayer(nn.Module):
        def __init__(self, use_residual=True):
            super().__init__()
            self.use_residual = use_residual
            self.lin = nn.Linear(4, 4)

        def forward(self, x_dict: ANNOT) -> Dict[str, Tensor]:
            residual = x_dict if self.use_residual else None
            out = {}
            for node_type in x_dict:
                h = self.lin(x_dict[node_type])
                if residual is not None and node_type in residual:
                    h = h + residual[node_type]
                out[node_type] = h
            return out
"""
HETERO_TRAIN = """\
    import torch
    from demo.layers import HeteroLayer

    model = torch.compile(HeteroLayer())
"""


def _hetero(tmp_path, annot: str, layer: str = HETERO) -> list:
    found = finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/layers.py": layer.replace("ANNOT", annot),
        "demo/train.py": HETERO_TRAIN,
    })
    assert not any(line.endswith("GNN000") for line in found), found
    return found


def test_membership_in_a_dict_of_tensors_picked_by_a_flag_is_no_truth_value(tmp_path):
    found = _hetero(tmp_path, "Dict[str, Tensor]")
    assert not any(line.startswith("demo/layers.py:18:") for line in found), found


def test_membership_in_a_mapping_spelled_otherwise_is_no_truth_value(tmp_path):
    # another spelling: `Mapping[...]` of `torch.Tensor`, `Optional[...]` around it, and an alias name
    layer = HETERO.replace("from typing import Dict", "from typing import Dict, Mapping, Optional") \
        .replace("residual = x_dict if self.use_residual else None",
                 "seen = x_dict\n            residual = seen if self.use_residual else None")
    found = _hetero(tmp_path, "Optional[Mapping[str, torch.Tensor]]", layer)
    assert not any(line.startswith("demo/layers.py:19:") for line in found), found
    found = _hetero(tmp_path, "dict[str, Tensor] | None", layer)
    assert not any(line.startswith("demo/layers.py:18:") for line in found), found


def test_membership_in_a_tensor_picked_by_a_flag_keeps_the_finding(tmp_path):
    found = _hetero(tmp_path, "Tensor")
    assert "demo/layers.py:18:41: GNN001" in found, found


def test_an_item_of_a_dict_of_tensors_is_still_a_tensor(tmp_path):
    # `feats[k].item()` with `feats: Mapping[str, Tensor]` (not named `*_dict`): the value is a tensor
    layer = HETERO.replace("x_dict", "feats").replace(
        "h = self.lin(feats[node_type])", "h = self.lin(feats[node_type])\n                s = feats[node_type].item()")
    found = _hetero(tmp_path, "Dict[str, Tensor]", layer)
    assert "demo/layers.py:18:17: GNN001" in found, found


AMP_LOOP = """\
    import torch
    from torch import nn
    from demo.loss import ContrastiveLoss

    if __name__ == "__main__":
        args = parse()
        model = nn.Linear(4, 4)
        optimizer = make_optimizer(model)
        criterion = ContrastiveLoss()
        if args.compile:
            model = torch.compile(model)
        scaler = torch.amp.GradScaler("cuda")
        it = iter(loader)
        batch = next(it)
        step = 0
        while step < args.max_steps:
            for acc_step in range(args.acc):
                x, y = batch
                out = model(x)
                loss = criterion(out, labels=y) / args.acc
                batch = next(it)
                scaler.scale(loss).backward()
            STEP
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            if (step + 1) % args.log_interval == 0:
                lossf = loss.item() * args.acc
                print(lossf)
            step += 1
"""
AMP_FUNC = """\
    import torch


    class Trainer:
        def __init__(self, model, opt):
            self.model = torch.compile(model)
            self.opt = opt
            self.grad_scaler = torch.cuda.amp.GradScaler()

        def fit(self, batches, n_iters, accum):
            done = 0
            while done < n_iters:
                for _ in range(accum):
                    x, y = next(batches)
                    loss = (self.model(x) - y).pow(2).mean()
                    self.grad_scaler.scale(loss).backward()
                STEP
                self.grad_scaler.update()
                print(loss.item())
                done += 1
"""


def _amp(tmp_path, step: str, source: str = AMP_LOOP, name: str = "train.py") -> list:
    found = finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/loss.py": "import torch\n\n\nclass ContrastiveLoss(torch.nn.Module):\n"
                        "    def forward(self, out, labels):\n        return out.sum()\n",
        f"demo/{name}": source.replace("STEP", step),
    })
    assert not any(line.endswith("GNN000") for line in found), found
    return found


def test_an_amp_scaler_step_makes_the_outer_loop_a_training_loop(tmp_path):
    found = _amp(tmp_path, "scaler.step(optimizer)")
    assert "demo/train.py:27:21: GNN013" in found, found


def test_an_amp_scaler_step_on_self_attributes_in_a_method(tmp_path):
    # another spelling and place: `self.grad_scaler.step(self.opt)` in a trainer's method of another file
    found = _amp(tmp_path, "self.grad_scaler.step(self.opt)", AMP_FUNC, "trainer.py")
    assert "demo/trainer.py:19:19: GNN013" in found, found


def test_a_scaler_step_handed_no_optimizer_makes_no_training_loop(tmp_path):
    # `scheduler.step(metric)` / `env.step(action)`: not an optimizer step, the outer loop is no step loop
    found = _amp(tmp_path, "scaler.step(args.max_steps)")
    assert not any(line.startswith("demo/train.py:27:") for line in found), found
    found = _amp(tmp_path, "self.grad_scaler.step(done)", AMP_FUNC, "trainer.py")
    assert not any(line.startswith("demo/trainer.py:19:") for line in found), found


# SHEPHERD-Advanced: `trainer = Trainer(model=model, ...)` with the compiled model, then `trainer.train()`;
# `Trainer.evaluate()` loops over batches running `self.model` too, but nothing calls it: its syncs run
# in no step of the compiled program (semantic/instance_methods.py, `instance_methods` facts).
TRAINER = """\
    import torch


    class Trainer:
        def __init__(self, model, loader):
            self.model = model
            self.loader = loader
            self.opt = torch.optim.Adam(model.parameters())

        def train(self):
            for epoch in range(3):
                self._epoch()

        def _epoch(self):
            for batch in self.loader:
                loss = self.model(batch).mean()
                loss.backward()
                self.opt.step()
                print(loss.item())

        def evaluate(self, loader=None):
            total = 0.0
            with torch.no_grad():
                for batch in loader or self.loader:
                    loss = self.model(batch).mean()
                    total += loss.item()
            return total
"""
SCRIPT = """\
    import torch
    from demo.trainer import Trainer


    def main(net, loader):
        model = torch.compile(net)
        USE
"""


def _trainer(tmp_path, use: str) -> list:
    found = finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/trainer.py": TRAINER,
        "demo/run.py": SCRIPT.replace("USE", use),
    })
    assert "demo/trainer.py:19:19: GNN013" in found, found  # the training loop the script runs
    return found


def test_a_method_the_compiling_script_never_calls_runs_no_step(tmp_path):
    found = _trainer(tmp_path, "trainer = Trainer(model, loader)\n        trainer.epochs = 3\n        trainer.train()")
    assert not any(line.startswith("demo/trainer.py:26:") for line in found), found


def test_a_method_of_an_instance_used_in_a_chain_runs_no_step(tmp_path):
    # another spelling: `Trainer(model=model, loader=loader).train()`, no name bound
    found = _trainer(tmp_path, "Trainer(model=model, loader=loader).train()")
    assert not any(line.startswith("demo/trainer.py:26:") for line in found), found


def test_a_method_the_script_calls_keeps_its_syncs(tmp_path):
    found = _trainer(tmp_path, "trainer = Trainer(model, loader)\n        trainer.train()\n        trainer.evaluate()")
    assert "demo/trainer.py:26:26: GNN013" in found, found


def test_an_instance_handed_on_may_run_any_method(tmp_path):
    # `report(trainer)`: another function may call `trainer.evaluate()`
    found = _trainer(tmp_path, "trainer = Trainer(model, loader)\n        trainer.train()\n        report(trainer)")
    assert "demo/trainer.py:26:26: GNN013" in found, found


# SHEPHERD-Advanced trainer.py:654: `_, indices = scores.sort(dim=-1, descending=True)` with `scores` a
# dict entry: `dim=` is a tensor method's keyword (a list's sort takes `key`/`reverse`, numpy `axis`), so
# `indices[i].tolist()` copies a device tensor (kind_tables.py ``tensor_keyword_call``).
EVAL_LOOP = """\
    import torch


    def collect(out):
        return {"scores": out, "n": len(out)}


    def validate(model, loader):
        ids = []
        with torch.no_grad():
            for batch in loader:
                outputs = collect(model(batch))
                scores = outputs["scores"]
                _, indices = SORT
                for i in range(4):
                    ids.append(indices[i].tolist())
        return ids


    def main(net, loader):
        model = torch.compile(net)
        validate(model, loader)
"""


def _eval(tmp_path, sort: str) -> list:
    found = finding_keys(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        "demo/run.py": EVAL_LOOP.replace("SORT", sort),
    })
    assert not any(line.endswith("GNN000") for line in found), found
    return found


def test_indices_of_a_sort_along_a_dim_are_a_device_tensor(tmp_path):
    assert "demo/run.py:16:28: GNN013" in _eval(tmp_path, "scores.sort(dim=-1, descending=True)")
    # another spelling: `.max(dim=1)` of a dict entry read directly
    assert "demo/run.py:16:28: GNN013" in _eval(tmp_path, 'outputs["scores"].max(dim=1)')


def test_a_numpy_sort_along_an_axis_is_no_device_tensor(tmp_path):
    found = _eval(tmp_path, "scores.max(axis=1)")
    assert "demo/run.py:16:28: GNN013" not in found, found
    assert not any(line.startswith("demo/run.py:16:") for line in found), found
