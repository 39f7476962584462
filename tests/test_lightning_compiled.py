"""What runs compiled when a compiled LightningModule is trained by `Trainer.fit`
(bench/evidence/e20_lightning_compiled_hooks.py, Lightning's `from_compiled`):
`forward` and the `*_step` methods -- and what they call -- run compiled; the other
hooks run eagerly. A submodule built in `__init__` that only an eager hook runs
(`on_after_batch_transfer` featurising the batch) is not compiled with its owner.
`backward` is a hook Lightning calls once per training step."""
from __future__ import annotations

import pytest

from tests.project_files import whole_tree_lines, write_project

MODEL = """\
    import lightning as L
    import torch


    class Featuriser(torch.nn.Module):
        def forward(self, batch):
            batch.pos = batch.pos[batch.pos[:, 0] > 0]
            return batch


    class Encoder(torch.nn.Module):
        def forward(self, x):
            return x[x > 0]


    class Base(L.LightningModule):
        def featurise(self, batch):
            return self.featuriser(batch)

        def on_after_batch_transfer(self, batch, dataloader_idx):
            return self.featurise(batch)


    class Model(Base):
        def __init__(self):
            super().__init__()
            self.featuriser = Featuriser()
            self.encoder = Encoder()
            print(self.featuriser)

        def forward(self, batch):
            return self.encoder(batch.x)

        def training_step(self, batch, batch_idx):
            picked = batch.y[batch.y > 0]
            return self(batch).sum() + picked.sum()

        def backward(self, loss, *args, **kwargs):
            loss.backward(*args, **kwargs)
            print(loss.item())

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)
"""

TRAIN = """\
    import lightning as L
    import torch

    from demo.model import Model

    model = torch.compile(Model(), dynamic=True)
    L.Trainer(max_epochs=1).fit(model)
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/model.py": MODEL,
    "demo/train.py": TRAIN,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def _found(project) -> dict:
    whole = whole_tree_lines(project)
    return {(int(line.split(":")[1]), line.split(" ")[1]): line for line in whole
            if line.startswith("demo/model.py:")}


def test_submodule_only_an_eager_hook_runs_is_not_compiled(project):
    found = _found(project)
    assert not any(row == 7 for row, _code in found), found  # Featuriser: on_after_batch_transfer only


def test_forward_its_submodules_and_the_step_methods_are_compiled(project):
    found = _found(project)
    assert (13, "GNN008") in found, found  # Encoder, called from forward
    assert (35, "GNN008") in found, found  # training_step: Lightning compiles it
    assert "Lightning compiles the step methods" in found[(35, "GNN008")]


def test_backward_hook_runs_every_training_step(project):
    found = _found(project)
    line = found.get((40, "GNN013"))
    assert line is not None, found
    assert "Lightning calls `Model.backward` once per step" in line


def test_submodule_also_run_from_forward_stays_compiled(tmp_path):
    files = dict(PROJECT)
    files["demo/model.py"] = MODEL.replace("return self.encoder(batch.x)",
                                           "return self.encoder(self.featurise(batch).x)")
    found = _found(write_project(tmp_path / "proj", files))
    assert (7, "GNN008") in found, found


GRAPH_MODEL = """\
    import lightning as L
    import torch
    from torch_geometric.data import Batch


    class GraphModel(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)

        def forward(self, batch):
            return self.lin(batch.x)

        def training_step(self, batch: Batch, batch_idx):
            return self(batch).sum()
"""

FINETUNE = """\
    import hydra
    import lightning as L
    import torch

    from demo.graph_model import GraphModel


    def main(cfg):
        datamodule = hydra.utils.instantiate(cfg.datamodule)
        model: L.LightningModule = GraphModel()
        model = torch.compile(model)
        trainer = L.Trainer(max_epochs=1)
        trainer.fit(model=model, datamodule=datamodule)
"""


def test_trainer_fit_feeds_graph_batches_to_a_compiled_module(tmp_path):
    files = dict(PROJECT, **{"demo/graph_model.py": GRAPH_MODEL, "demo/finetune.py": FINETUNE})
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    found = [line for line in whole if line.startswith("demo/finetune.py:") and " GNN007 " in line]
    assert [int(line.split(":")[1]) for line in found] == [11], whole
    assert "`trainer.fit(...)` runs the compiled steps" in found[0]
    assert "`GraphModel.training_step` takes `Batch` (PyG graph batches)" in found[0]


def test_dynamic_true_or_no_graph_batches_is_not_reported(tmp_path):
    files = dict(PROJECT, **{"demo/graph_model.py": GRAPH_MODEL,
                             "demo/finetune.py": FINETUNE.replace("torch.compile(model)",
                                                                  "torch.compile(model, dynamic=True)")})
    whole = whole_tree_lines(write_project(tmp_path / "a", files))
    assert not any(" GNN007 " in line for line in whole), whole
    files["demo/finetune.py"] = FINETUNE
    files["demo/graph_model.py"] = GRAPH_MODEL.replace("batch: Batch", "batch")
    whole = whole_tree_lines(write_project(tmp_path / "b", files))
    assert not any(" GNN007 " in line for line in whole), whole
