"""heldout14 shapes (s12trainer): compiles inside trainer classes, hooks and step objects
a custom trainer runs once per step, compiled models handed to trainers in a list.

- molnex: ``Trainer.compile()`` re-binds ``self.model = maybe_compile(self.model, compile=True)``
  (a project wrapper returning ``torch.compile(module, ...)``, another file); the trainer never
  calls ``self.model`` itself: a step object of another file does (``trainer.model(batch)``),
  handed ``self`` with the batch (semantic/batch_loops.py ``model_holder``); the hooks run by name,
  ``self._call_hooks("on_train_batch_end", ...)`` -> ``getattr(hook, hook_name)(*args)``
  (semantic/hook_dispatch.py; the engine delivers the name-addressed fact to every class
  defining such a method with that many arguments, gnnlint/entry_points.py);
- deep-learning-gnn-project: ``models = [torch.compile(model)]`` handed to a trainer built by
  ``hydra.utils.instantiate(cfg.trainer, models=models)``; its loops run
  ``[model(x) for model in self.models]`` (semantic/containers.py); a trainer asserting
  ``isinstance(models[0], GIN)`` never holds the compiled wrapper; ``sum(losses)`` of loss
  tensors is a tensor; ``getattr(model, "update_teacher", None)()`` per step runs that method.
Each shape is tested in two spellings; each INVALID case has a VALID twin."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"


def _lines(tmp_path, files: dict) -> list:
    root = write_project(tmp_path, {"pyproject.toml": PYPROJECT, **files})
    out = finding_lines(run(["check", ".", "--no-cache", "--output-format", "concise"], root).output)
    # "path:line CODE" (the column left out)
    return sorted(line.split(" ")[0].rsplit(":", 2)[0] + " " + line.split(" ")[1] for line in out)


# -- a trainer compiling its model through a project wrapper; steps and hooks elsewhere ------------
WRAPPER = """\
    import torch


    def maybe_compile(module, *, compile=False, dynamic=None, mode=None):
        if not compile:
            return module
        return torch.compile(module, dynamic=dynamic, mode=mode)
"""
STEP = """\
    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from demo.trainer import Trainer


    class DefaultTrainStep:
        def on_train_batch(self, trainer: "Trainer", state, batch):
            predictions = trainer.model(batch)
            loss = trainer.loss_fn(predictions, batch)
            trainer.optimizer.zero_grad()
            loss.backward()
            trainer._call_hooks("on_after_backward", trainer, state)
            trainer.optimizer.step()
            state["train/loss"] = loss.item()
            return {"loss": loss}
"""
HOOKS = """\
    class BaseHook:
        def on_train_batch_end(self, trainer, state, batch, outputs):
            pass


    class ProgressBarHook(BaseHook):
        def on_train_batch_end(self, trainer, state, batch, outputs):
            print(f"{outputs['loss'].item():.4f}")


    class GradClipHook(BaseHook):
        def on_after_backward(self, trainer, state):
            import torch

            norm = torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), 1.0)
            state["train/grad_norm"] = norm.item()


    class LightningStyleCallback:
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            print(outputs["loss"].item())
"""
TRAINER = """\
    import torch

    from demo.hooks import BaseHook
    from demo.steps import DefaultTrainStep


    class Trainer:
        def __init__(self, model, loss_fn, optimizer_factory, train_step=None, hooks=None):
            self.model = model
            self.loss_fn = loss_fn
            self.optimizer = optimizer_factory(self.model.parameters())
            self.train_step = train_step or DefaultTrainStep()
            self.hooks: list[BaseHook] = list(hooks or [])
            self.state = {}

        def _call_hooks(self, hook_name, *args, **kwargs):
            for hook in self.hooks:
                method = getattr(hook, hook_name, None)
                if method is not None:
                    method(*args, **kwargs)

        def train(self, datamodule, max_epochs):
            for epoch in range(max_epochs):
                for batch in datamodule.train_dataloader():
                    outputs = self.train_step.on_train_batch(self, self.state, batch)
                    self._call_hooks("on_train_batch_end", self, self.state, batch, outputs)
    COMPILE"""
COMPILE = """
        def compile(self, *, dynamic=None, mode=None):
            from demo.compile import maybe_compile

            self.model = maybe_compile(self.model, compile=True, dynamic=dynamic, mode=mode)
            return self
"""


def _trainer_project(compile_method: str = COMPILE) -> dict:
    return {"demo/__init__.py": "", "demo/compile.py": WRAPPER, "demo/steps.py": STEP, "demo/hooks.py": HOOKS,
            "demo/trainer.py": TRAINER.replace("COMPILE", compile_method)}


def test_a_trainer_compiling_through_a_wrapper_runs_its_step_object_and_hooks_per_step(tmp_path):
    found = _lines(tmp_path, _trainer_project())
    assert "demo/steps.py:15 GNN013" in found, found  # the step object's loss.item()
    assert "demo/hooks.py:8 GNN013" in found, found  # ProgressBarHook, run by name
    # run by name from the step object, through the trainer's dispatcher (another file)
    assert "demo/hooks.py:16 GNN013" in found, found
    # a hook of the same name taking other arguments (a Lightning callback) is not what the trainer runs
    assert not any(line.startswith("demo/hooks.py:21 ") for line in found), found


def test_a_trainer_that_never_compiles_has_no_per_step_hazard(tmp_path):
    assert _lines(tmp_path, _trainer_project(compile_method="")) == []


RUNNER = """\
    import torch
    from demo.callbacks import LossPrinter


    class Runner:
        def __init__(self, model, callbacks=None):
            self.model = torch.compile(model)
            self.opt = torch.optim.Adam(self.model.parameters())
            self.callbacks = callbacks or [LossPrinter()]

        def fire(self, event, *args):
            for cb in self.callbacks:
                getattr(cb, event)(self, *args)

        def fit(self, loader):
            for batch in loader:
                loss = self.model(batch).sum()
                loss.backward()
                self.opt.step()
                self.fire("EVENT", loss)
"""
CALLBACKS = """\
    class Callback:
        def on_batch_end(self, runner, loss):
            pass

        def step(self, runner, loss):
            pass


    class LossPrinter(Callback):
        def on_batch_end(self, runner, loss):
            print(loss.item())

        def step(self, runner, loss):
            print(loss.item())
"""


def test_callbacks_fired_by_event_name_through_getattr_run_per_step(tmp_path):
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/runner.py": RUNNER.replace("EVENT", "on_batch_end"),
                              "demo/callbacks.py": CALLBACKS})
    assert "demo/callbacks.py:11 GNN013" in found, found
    assert not any(line.startswith("demo/callbacks.py:14 ") for line in found), found


def test_a_bare_word_passed_to_a_dispatcher_names_no_hook(tmp_path):
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/runner.py": RUNNER.replace("EVENT", "step"),
                              "demo/callbacks.py": CALLBACKS})
    assert not any(line.startswith("demo/callbacks.py:") for line in found), found


def test_hooks_in_the_trainers_own_file_run_per_step(tmp_path):
    local = RUNNER.replace("EVENT", "on_batch_end").replace("    from demo.callbacks import LossPrinter\n", "") \
        + "\n\n" + CALLBACKS
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/runner.py": local})
    assert "demo/runner.py:32 GNN013" in found, found  # LossPrinter.on_batch_end
    assert not any(line.startswith("demo/runner.py:35 ") for line in found), found  # its `step`


# -- compiled models kept in a list and handed to a trainer -------------------------------------------
EVAL = """\
    import torch
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn import GCNConv


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = GCNConv(4, 4, add_self_loops=False)

        def forward(self, x, edge_index):
            return self.conv(x, edge_index)


    def main(dataset, n):
        loader = DataLoader(dataset, batch_size=32)
        models = []
        for i in range(n):
            model = Net()
            model = torch.compile(model)
            models.append(model)
        losses = []
        with torch.no_grad():
            for data in loader:
                preds = [m(data.x, data.edge_index) for m in models]
                loss = torch.stack(preds).mean()
                losses.append(loss.item())
        return losses
"""


def test_models_appended_to_a_list_run_in_a_comprehension_per_batch(tmp_path):
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/eval.py": EVAL})
    assert "demo/eval.py:20 GNN007" in found, found
    assert "demo/eval.py:27 GNN013" in found, found


def test_a_list_literal_of_compiled_models_in_a_for_loop(tmp_path):
    source = EVAL.replace("        models = []\n        for i in range(n):\n            model = Net()\n"
                          "            model = torch.compile(model)\n            models.append(model)\n",
                          "        model = torch.compile(Net())\n        models = [model]\n\n\n\n") \
        .replace("                preds = [m(data.x, data.edge_index) for m in models]\n",
                 "                preds = []\n                for m in models:\n"
                 "                    preds.append(m(data.x, data.edge_index))\n")
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/eval.py": source})
    assert any(line.startswith("demo/eval.py:29 ") and "GNN013" in line for line in found), found


ENSEMBLE = """\
    import numpy as np
    import torch
    from demo.models import GIN


    class Ensemble:
        def __init__(self, supervised_criterion, optimizer, models, datamodule):
            CHECK
            self.models = models
            self.supervised_criterion = supervised_criterion
            self.optimizer = optimizer(params=[p for m in self.models for p in m.parameters()])
            self.train_dataloader = datamodule.train_dataloader()

        def train(self, epochs):
            for epoch in range(epochs):
                logged = []
                for x, targets in self.train_dataloader:
                    self.optimizer.zero_grad()
                    losses = [self.supervised_criterion(model(x), targets) for model in self.models]
                    loss = sum(losses)
                    logged.append(loss.detach().item())
                    loss.backward()
                    self.optimizer.step()
                    for model in self.models:
                        update = getattr(model, "update_teacher", None)
                        if callable(update):
                            update()
                print(np.mean(logged))
"""
MODELS = """\
    import torch


    class GIN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)
            self.register_buffer("_counter", torch.tensor(0))

        def forward(self, x):
            return self.lin(x)

        @torch.no_grad()
        def update_teacher(self):
            self._counter += 1
            if self._counter % 10 != 0:
                return
"""
HYDRA_RUN = """\
    import hydra
    import torch


    @hydra.main(config_path="../configs", config_name="run", version_base=None)
    def main(cfg):
        model = hydra.utils.instantiate(cfg.model)
        if cfg.compile_model:
            model = torch.compile(model)
        models = [model]
        trainer = hydra.utils.instantiate(cfg.trainer, models=models, datamodule=None)
        trainer.train(10)
"""
PLAIN_RUN = """\
    import torch
    from demo.models import GIN
    from demo.trainer import Ensemble


    def main(datamodule):
        model = torch.compile(GIN())
        trainer = Ensemble(torch.nn.MSELoss(), torch.optim.Adam, models=[model], datamodule=datamodule)
        trainer.train(10)
"""


def _ensemble_project(run_py: str, check: str = "pass") -> dict:
    return {"demo/__init__.py": "", "demo/trainer.py": ENSEMBLE.replace("CHECK", check),
            "demo/models.py": MODELS, "demo/run.py": run_py,
            "configs/run.yaml": "defaults:\n  - model: gin\n  - trainer: ensemble\ncompile_model: true\n",
            "configs/model/gin.yaml": "_target_: demo.models.GIN\n",
            "configs/trainer/ensemble.yaml": "_target_: demo.trainer.Ensemble\n"}


def test_a_list_of_compiled_models_handed_to_a_hydra_built_trainer(tmp_path):
    found = _lines(tmp_path, _ensemble_project(HYDRA_RUN))
    assert "demo/trainer.py:21 GNN013" in found, found  # sum(losses) of loss tensors: .item() syncs
    assert "demo/models.py:16 GNN013" in found, found  # update_teacher, run per step by its name


def test_a_list_of_compiled_models_handed_to_an_imported_trainer(tmp_path):
    found = _lines(tmp_path, _ensemble_project(PLAIN_RUN))
    assert "demo/trainer.py:21 GNN013" in found, found


def test_a_trainer_asserting_the_model_class_never_holds_the_compiled_wrapper(tmp_path):
    for run_py in (HYDRA_RUN, PLAIN_RUN):
        found = _lines(tmp_path, _ensemble_project(run_py, check='assert isinstance(models[0], GIN), "GIN only"'))
        assert not any(line.startswith("demo/trainer.py:") for line in found), found


HYDRA_ONE = """\
    import hydra
    import torch


    @hydra.main(config_path="../configs", config_name="run", version_base=None)
    def main(cfg):
        model = torch.compile(hydra.utils.instantiate(cfg.model))
        trainer = hydra.utils.instantiate(cfg.trainer, model=model)
        trainer.fit(10)
"""
ONE_TRAINER = """\
    import torch


    class Trainer:
        def __init__(self, model, loader, lr=1e-3):
            self.model = model
            self.loader = loader
            self.opt = torch.optim.Adam(model.parameters(), lr=lr)

        def fit(self, epochs):
            for epoch in range(epochs):
                for batch in self.loader:
                    loss = self.model(batch).mean()
                    loss.backward()
                    self.opt.step()
                    print(loss.item())
"""


def test_one_compiled_model_handed_to_a_hydra_built_trainer_by_keyword(tmp_path):
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/run.py": HYDRA_ONE, "demo/trainer.py": ONE_TRAINER,
                              "demo/models.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n",
                              "configs/run.yaml": "defaults:\n  - model: net\n  - trainer: base\n",
                              "configs/model/net.yaml": "_target_: demo.models.Net\n",
                              "configs/trainer/base.yaml": "_target_: demo.trainer.Trainer\nloader: null\n"})
    assert "demo/trainer.py:16 GNN013" in found, found
