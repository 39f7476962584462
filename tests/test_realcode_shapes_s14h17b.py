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
