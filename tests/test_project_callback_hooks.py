"""Per-step code reached through a Callback base class (semantic/callback_hooks.py):
a project base class in another file owns the Lightning batch hooks and calls
``self.execute(...)``; a subclass's ``execute`` runs once per step, and so does
the ``get_figure`` override of every local subclass that ``execute`` calls on
``self`` (template methods). They drive compiled code when the project's
Lightning training does (a LightningModule compiling the model it wraps)."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

MODULE = """\
    import torch
    from lightning import LightningModule


    class LitModule(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = torch.compile(net, dynamic=True)

        def forward(self, batch):
            return self.net(batch)

        def training_step(self, batch, batch_idx):
            return self(batch).sum()
"""

BASE = """\
    from lightning import Callback


    class OnStepCallback(Callback):
        def execute(self, trainer, pl_module, outputs, batch):
            raise NotImplementedError

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if trainer.global_step % 100:
                return
            self.execute(trainer, pl_module, outputs, batch)
"""

PLOTS = """\
    from demo.callbacks.base import OnStepCallback


    class LogFigure(OnStepCallback):
        def get_figure(self, batch, outputs):
            raise NotImplementedError

        def execute(self, trainer, pl_module, outputs, batch):
            fig = self.get_figure(batch, outputs)
            return fig

        def summary(self, outputs):
            return outputs["loss"].item()  # never called per step


    class LogScatter(LogFigure):
        def get_figure(self, batch, outputs):
            pred = outputs["pred"].detach().cpu().numpy()
            sample = batch.to_data_list()[0].detach().cpu()
            first = sample.y.item()  # a field of the host copy: no sync
            return pred, first
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/lit.py": MODULE,
    "demo/callbacks/__init__.py": "",
    "demo/callbacks/base.py": BASE,
    "demo/callbacks/plots.py": PLOTS,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_a_subclass_override_called_by_an_imported_callback_hook_runs_per_step(project):
    whole = whole_tree_lines(project)
    plots = {line for line in whole if line.startswith("demo/callbacks/plots.py:")}
    assert {int(line.split(":")[1]) for line in plots} == {18, 19}, whole
    assert all("GNN013" in line and "`OnStepCallback.on_train_batch_end`" in line and "`self.execute`" in line
               for line in plots), plots


def test_one_file_agrees_with_the_whole_tree(project):
    assert_one_file_agrees(project, "demo/callbacks/plots.py")


def test_a_project_that_never_compiles_gets_no_per_step_finding(tmp_path):
    files = dict(PROJECT)
    files["demo/lit.py"] = MODULE.replace("torch.compile(net, dynamic=True)", "net")
    root = write_project(tmp_path / "plain", files)
    whole = whole_tree_lines(root)
    assert not any(line.startswith("demo/callbacks/") for line in whole), whole
