"""s12 loops: a timestep loop inside the training batch loop (heldout14 Waymo-GNN).

- ``frames = batch_dict["batch"]``, then ``frames[t] = frames[t].to(device)`` for every item, then
  ``for t, g in enumerate(frames):`` running the compiled model per timestep: the items were replaced
  by device copies, so reading them is a device sync (semantic/devices.py ``_items_moved``), not the
  loader's host batch; a ``.to("cpu")`` re-store keeps them host copies.
- that inner loop is part of the training step the outer iteration takes (it steps the optimizer after
  the rollout): its syncs are "of a training loop", not of an evaluation loop (semantic/steps.py
  ``_inside_training_iteration``); an inner loop under an outer loop that never trains stays evaluation.
Each VALID case has an INVALID twin that keeps the finding."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

TRAIN = """\
    import torch


    def train_epoch(model, loader, optimizer, device):
        for batch_idx, batch_dict in enumerate(loader):
            frames = batch_dict["batch"]
            for t in range(len(frames)):
                frames[t] = frames[t].to(MOVE)
            optimizer.zero_grad()
            total = torch.zeros((), device=device)
            for t, g in enumerate(frames):
                if torch.isnan(g.x).any():
                    continue
                out = model(g.x, g.edge_index)
                total = total + ((out - g.y) ** 2).mean()
            total.backward()
            optimizer.step()


    def main(loader, device):
        model = torch.compile(torch.nn.Linear(2, 2))
        opt = torch.optim.Adam(model.parameters())
        train_epoch(model, loader, opt, device)
"""

# another spelling: a method, the sequence an attribute of the batch, a `.cuda()` re-store, a while loop
ROLLOUT = """\
    import torch


    class Trainer:
        def __init__(self, net, optimizer):
            self.net = torch.compile(net)
            self.optimizer = optimizer

        def fit(self, loader):
            for batch in loader:
                steps = batch.steps
                for i in range(len(steps)):
                    steps[i] = steps[i].MOVE
                self.optimizer.zero_grad()
                loss = 0.0
                k = 0
                while k < len(steps):
                    frame = steps[k]
                    if not torch.any(frame.mask):
                        k += 1
                        continue
                    loss = loss + self.net(frame.x).mean()
                    k += 1
                loss.backward()
                self.optimizer.step()
"""


def _lines(tmp_path, name: str, text: str) -> list:
    root = write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "demo/__init__.py": "",
        f"demo/{name}": text,
    })
    return sorted(finding_lines(run(["check", ".", "--no-cache", "--output-format", "full"], root).output))


def _at(found: list, prefix: str) -> list:
    return [line for line in found if line.startswith(prefix)]


def test_items_moved_in_place_are_device_values_in_the_timestep_loop(tmp_path):
    found = _lines(tmp_path, "train.py", TRAIN.replace("MOVE", "device, non_blocking=True"))
    hits = _at(found, "demo/train.py:12:")
    assert hits and "GNN013" in hits[0] and "training loop" in hits[0], found


def test_items_copied_to_the_cpu_stay_host_values(tmp_path):
    found = _lines(tmp_path, "train.py", TRAIN.replace("MOVE", '"cpu"'))
    assert not _at(found, "demo/train.py:12:"), found


def test_a_while_rollout_in_a_method_over_an_attribute_sequence(tmp_path):
    found = _lines(tmp_path, "trainer.py", ROLLOUT.replace("MOVE", "cuda()"))
    hits = _at(found, "demo/trainer.py:19:")
    assert hits and "GNN013" in hits[0] and "training loop" in hits[0], found


def test_a_while_rollout_over_host_copies_reads_nothing_from_the_device(tmp_path):
    found = _lines(tmp_path, "trainer.py", ROLLOUT.replace("MOVE", 'to("cpu")'))
    assert not _at(found, "demo/trainer.py:19:"), found


def test_an_inner_loop_under_an_outer_loop_that_never_trains_stays_evaluation(tmp_path):
    evaluate = TRAIN.replace("MOVE", "device").replace("            total.backward()\n", "") \
        .replace("            optimizer.step()\n", "")
    hits = _at(_lines(tmp_path, "train.py", evaluate), "demo/train.py:12:")
    assert hits and "evaluation loop" in hits[0], hits
