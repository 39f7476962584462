"""Per-step code a framework calls (semantic/frameworks.py): a Lightning
Callback's batch hooks run once per training step. They drive compiled code
when the project's Lightning training does: here a model class in another
file compiles the model it wraps, lazily in its forward (the LightningModule
builds its model from a config, so no file names the class it runs). A
project that never compiles gets no per-step finding."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

WRAPPER = """\
    import torch


    class CompiledModel(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self._cache = ({},)

        def forward(self, data):
            cache = self._cache[0]
            if "fn" not in cache:
                compiled = torch.compile(self.model, dynamic=True)
                cache["fn"] = compiled
            compiled = cache["fn"]
            return self._run(compiled, data)

        def _run(self, compiled, data):
            return compiled(data)
"""

CALLBACKS = """\
    import torch
    from lightning.pytorch.callbacks import Callback


    class Stats(Callback):
        def __init__(self, every=100):
            self.every = every
            self.step = 0

        def _log(self, pl_module):
            for name, param in pl_module.named_parameters():
                pl_module.log(name, param.grad.abs().max().item())

        def on_after_backward(self, trainer, pl_module):
            if self.step % self.every == 0:
                self._log(pl_module)

        def on_before_optimizer_step(self, trainer, pl_module, optimizer):
            self.step += 1
            print(pl_module.scale.item())

        def on_train_epoch_end(self, trainer, pl_module):
            print(pl_module.total.item())  # once per epoch: not a step
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/nn/__init__.py": "",
    "demo/nn/compile.py": WRAPPER,
    "demo/train/__init__.py": "",
    "demo/train/callbacks.py": CALLBACKS,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_callback_batch_hooks_drive_the_projects_compiled_models(project):
    whole = whole_tree_lines(project)
    hooks = {line for line in whole if line.startswith("demo/train/callbacks.py:")}
    assert {int(line.split(":")[1]) for line in hooks} == {12, 20}, whole
    assert all("GNN013" in line and "Lightning calls `Stats." in line and "`CompiledModel`" in line
               for line in hooks), hooks


def test_one_file_agrees_with_the_whole_tree(project):
    assert_one_file_agrees(project, "demo/train/callbacks.py")


def test_a_project_that_never_compiles_gets_no_per_step_finding(tmp_path):
    files = dict(PROJECT)
    files["demo/nn/compile.py"] = WRAPPER.replace("torch.compile(self.model, dynamic=True)", "self.model")
    root = write_project(tmp_path / "plain", files)
    whole = whole_tree_lines(root)
    assert not whole, whole


def test_a_wrapper_in_a_test_file_says_nothing_about_training(tmp_path):
    files = {k: v for k, v in PROJECT.items() if k != "demo/nn/compile.py"}
    files["tests/test_compile.py"] = WRAPPER
    root = write_project(tmp_path / "tested", files)
    whole = whole_tree_lines(root)
    assert not any(line.startswith("demo/") for line in whole), whole
