"""s14hooks: per-step code reached by calling an object, not a function (GNN013; semantic/instance_calls.py).

- ``value = metric(out, y)`` every step, with ``metric = RMSE()`` of a torchmetrics ``Metric`` subclass another
  file defines: torchmetrics' ``Metric.forward`` runs the subclass's ``update`` and then its ``compute`` on every
  call, so a sync in either is a per-step sync (curator's ``compute_overall`` ``.item()``s, OGB metrics'
  ``.cpu().numpy()`` in ``compute``). ``metric.update(out, y)`` per step with ``metric.compute()`` at the epoch
  end leaves ``compute`` once per epoch (the torchmetrics idiom): not per step.
- ``self.criterion(out, y)`` with ``self.criterion = ForceLoss()`` of a plain class another file defines: its
  ``__call__`` runs every step (an ``nn.Module``'s forward is not told so: instance_calls.call_methods says why).
- The same in one file (a local ``Metric`` subclass called in the loop).
Each shape in two spellings (a local name / an attribute set in ``__init__``; ``from torchmetrics import Metric``
/ ``torchmetrics.Metric`` through a local base; another file / the same file), each INVALID with VALID twins
(never compiled; called once after the loop; ``update`` per step, ``compute`` per epoch)."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_keys, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

MODEL = """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, x):
            return self.lin(x)
"""

METRICS = """\
    import torch
    from torchmetrics import Metric


    class RMSE(Metric):
        def __init__(self):
            super().__init__()
            self.add_state("err", default=torch.tensor(0.0), dist_reduce_fx="sum")
            self.add_state("n", default=torch.tensor(0), dist_reduce_fx="sum")

        def update(self, pred, target):
            self.err += ((pred - target) ** 2).sum()
            if torch.isnan(self.err).any():
                self.err.zero_()
            self.n += target.numel()

        def compute(self):
            return (self.err / self.n).sqrt().item()
"""
UPDATE_LINE, COMPUTE_LINE = "metrics.py:13:12: GNN013", "metrics.py:18:16: GNN013"

TRAIN = """\
    import torch
    from metrics import RMSE
    from model import Net


    def main(loader):
        model = torch.compile(Net())
        opt = torch.optim.Adam(model.parameters())
        metric = RMSE()
        for x, y in loader:
            out = model(x)
            loss = (out - y).pow(2).mean()
            loss.backward()
            opt.step()
            value = metric(out, y)
            print(value)
"""


def _keys(tmp_path, files: dict) -> list:
    return finding_keys(write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": MODEL, **files}))


def test_calling_an_imported_metric_every_step_runs_its_update_and_compute(tmp_path):
    keys = _keys(tmp_path, {"metrics.py": METRICS, "train.py": TRAIN})
    assert UPDATE_LINE in keys and COMPUTE_LINE in keys, keys
    assert_one_file_agrees(tmp_path, "metrics.py", nonempty=True)


def test_a_metric_held_by_a_trainer_through_a_local_base(tmp_path):
    # another spelling: `import torchmetrics`, the Metric base in between, the metric on `self`, a method's loop
    metrics = """\
        import torchmetrics


        class AtomsMetric(torchmetrics.Metric):
            def update(self, preds, target):
                err = (preds - target).abs()
                self.total = self.total + err.sum()
                self.count = self.count + err.numel()


        class PerAtomMAE(AtomsMetric):
            def compute(self):
                return {"mae": (self.total / self.count).item()}
    """
    trainer = """\
        import torch
        from .metrics import PerAtomMAE


        class Trainer:
            def __init__(self, model, lr):
                self.model = torch.compile(model)
                self.opt = torch.optim.SGD(self.model.parameters(), lr=lr)
                self.train_metric = PerAtomMAE()

            def train_epoch(self, loader):
                for batch in loader:
                    self.opt.zero_grad()
                    pred = self.model(batch.x)
                    loss = (pred - batch.y).square().mean()
                    loss.backward()
                    self.opt.step()
                    logs = self.train_metric(pred.detach(), batch.y)
                    self.log(logs)

            def log(self, logs):
                pass
    """
    keys = _keys(tmp_path, {"pkg/__init__.py": "", "pkg/metrics.py": metrics, "pkg/trainer.py": trainer})
    assert "pkg/metrics.py:13:24: GNN013" in keys, keys


def test_update_every_step_and_compute_per_epoch_leaves_compute_alone(tmp_path):
    # VALID for compute: the torchmetrics idiom (update per step, compute once per epoch)
    train = TRAIN.replace("            value = metric(out, y)\n            print(value)\n",
                          "            metric.update(out, y)\n        print(metric.compute())\n")
    keys = _keys(tmp_path, {"metrics.py": METRICS, "train.py": train})
    assert UPDATE_LINE in keys and COMPUTE_LINE not in keys, keys


def test_a_metric_called_once_after_the_loop_is_not_per_step(tmp_path):
    # VALID: the call is outside the step loop
    train = TRAIN.replace("            value = metric(out, y)\n            print(value)\n",
                          "        print(metric(out, y))\n")
    keys = _keys(tmp_path, {"metrics.py": METRICS, "train.py": train})
    assert not [k for k in keys if k.startswith("metrics.py")], keys


def test_a_metric_called_every_step_of_a_program_that_never_compiles(tmp_path):
    # VALID: GNN013 is about loops driving compiled code
    train = TRAIN.replace("torch.compile(Net())", "Net()")
    keys = _keys(tmp_path, {"metrics.py": METRICS, "train.py": train})
    assert not [k for k in keys if k.startswith("metrics.py")], keys


LOSSES = """\
    import torch
    from torch import nn


    class ForceLoss(nn.Module):
        def forward(self, pred, target):
            mask = target.abs() > 0
            assert mask.sum() > 0
            return (pred[mask] - target[mask]).square().mean()
"""


def test_an_imported_callable_object_called_every_step_runs_its_call(tmp_path):
    # a plain class's own `__call__` (an `nn.Module`'s forward is left out: see instance_calls.call_methods)
    losses = """\
        import torch


        class ForceLoss:
            def __call__(self, pred, target):
                if torch.isnan(pred).any():
                    print("nan")
                return (pred - target).square().mean()
    """
    train = """\
        import torch
        from losses import ForceLoss
        from model import Net


        class Runner:
            def __init__(self):
                self.net = torch.compile(Net())
                self.criterion = ForceLoss()
                self.opt = torch.optim.Adam(self.net.parameters())

            def fit(self, loader, epochs):
                for _ in range(epochs):
                    for x, y in loader:
                        loss = self.criterion(self.net(x), y)
                        loss.backward()
                        self.opt.step()
    """
    keys = _keys(tmp_path, {"losses.py": losses, "train.py": train})
    assert "losses.py:6:12: GNN013" in keys, keys


def test_a_loss_module_called_once_to_check_the_setup_is_not_per_step(tmp_path):
    # VALID: a one-off call before the loop
    train = """\
        import torch
        from losses import ForceLoss
        from model import Net


        def main(loader, x0, y0):
            net = torch.compile(Net())
            criterion = ForceLoss()
            print(criterion(net(x0), y0))
            opt = torch.optim.Adam(net.parameters())
            for x, y in loader:
                net(x).sum().backward()
                opt.step()
    """
    keys = _keys(tmp_path, {"losses.py": LOSSES, "train.py": train})
    assert not [k for k in keys if k.startswith("losses.py")], keys


def test_a_local_metric_called_every_step(tmp_path):
    # another file -> the same file: the loop and the Metric subclass together
    train = METRICS + "\n\n" + TRAIN.replace("import torch\nfrom metrics import RMSE\n", "")
    keys = _keys(tmp_path, {"train.py": train})
    assert "train.py:13:12: GNN013" in keys and "train.py:18:16: GNN013" in keys, keys


def test_a_local_metric_updated_every_step_and_computed_per_epoch(tmp_path):
    # VALID for compute (the same file)
    train = METRICS + "\n\n" + TRAIN.replace("import torch\nfrom metrics import RMSE\n", "") \
        .replace("            value = metric(out, y)\n            print(value)\n",
                 "            metric.update(out, y)\n        print(metric.compute())\n")
    keys = _keys(tmp_path, {"train.py": train})
    assert "train.py:13:12: GNN013" in keys and "train.py:18:16: GNN013" not in keys, keys


# --- a callback list iterated in the step loop ------------------------------------------------------
# `for cb in self.callbacks: cb.on_batch_end(...)`: the list is handed in (built from a config, another
# file), so no class is known; every project class's method of that event name taking those arguments
# runs once per step (semantic/hook_dispatch.py `looped_hook`, delivered by name like `_call_hooks("...")`).
CALLBACKS = """\
    class Callback:
        def on_batch_end(self, trainer, batch, loss):
            pass

        def on_epoch_end(self, trainer):
            pass


    class LossPrinter(Callback):
        def on_batch_end(self, trainer, batch, loss):
            print(loss.item())

        def on_epoch_end(self, trainer):
            print(trainer.last.item())
"""
BATCH_END, EPOCH_END = "callbacks.py:11:15: GNN013", "callbacks.py:14:15: GNN013"

TRAINER = """\
    import torch
    from model import Net


    class Trainer:
        def __init__(self, callbacks):
            self.model = torch.compile(Net())
            self.opt = torch.optim.Adam(self.model.parameters())
            self.callbacks = callbacks

        def fit(self, loader, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    loss = (self.model(x) - y).pow(2).mean()
                    loss.backward()
                    self.opt.step()
                    for cb in self.callbacks:
                        cb.on_batch_end(self, (x, y), loss)
                for cb in self.callbacks:
                    cb.on_epoch_end(self)
"""
MAIN = """\
    from callbacks import LossPrinter
    from trainer import Trainer


    def main(loader):
        Trainer([LossPrinter()]).fit(loader, 3)
"""


def test_a_callback_list_iterated_every_step_runs_each_callbacks_batch_hook(tmp_path):
    keys = _keys(tmp_path, {"callbacks.py": CALLBACKS, "trainer.py": TRAINER, "main.py": MAIN})
    assert BATCH_END in keys, keys
    assert EPOCH_END not in keys, keys  # VALID: once per epoch
    assert_one_file_agrees(tmp_path, "callbacks.py", nonempty=True)


def test_callbacks_fired_through_a_helper_method_with_star_args(tmp_path):
    # another spelling: `self._fire(self, loss)` in the step, the loop over callbacks in the helper,
    # a `before_/after_` event name, `*args` forwarded
    trainer = TRAINER.replace("""                    for cb in self.callbacks:
                        cb.on_batch_end(self, (x, y), loss)
""", """                    self._fire(self, (x, y), loss)
""").replace("""        def fit(""", """        def _fire(self, *args):
            for callback in list(self.callbacks):
                callback.after_train_iter(*args)

        def fit(""")
    callbacks = CALLBACKS.replace("def on_batch_end", "def after_train_iter")
    keys = _keys(tmp_path, {"callbacks.py": callbacks, "trainer.py": trainer, "main.py": MAIN})
    assert BATCH_END in keys and EPOCH_END not in keys, keys


def test_callbacks_in_the_trainers_own_file(tmp_path):
    # another file -> the same file
    trainer = CALLBACKS + "\n\n" + TRAINER.replace("import torch\n", "")
    keys = _keys(tmp_path, {"trainer.py": "    import torch\n" + trainer})
    assert "trainer.py:12:15: GNN013" in keys and "trainer.py:15:15: GNN013" not in keys, keys


def test_a_callback_list_of_a_program_that_never_compiles(tmp_path):
    # VALID: nothing compiled
    trainer = TRAINER.replace("torch.compile(Net())", "Net()")
    keys = _keys(tmp_path, {"callbacks.py": CALLBACKS, "trainer.py": trainer, "main.py": MAIN})
    assert not [k for k in keys if k.startswith("callbacks.py")], keys


def test_a_loop_calling_a_plain_verb_on_its_items_is_no_hook_dispatch(tmp_path):
    # VALID: `for m in self.trackers: m.log_value(...)` names no event (no on_/before_/after_)
    trainer = TRAINER.replace("cb.on_batch_end(self, (x, y), loss)", "cb.log_value(self, (x, y), loss)")
    callbacks = CALLBACKS.replace("def on_batch_end", "def log_value")
    keys = _keys(tmp_path, {"callbacks.py": callbacks, "trainer.py": trainer, "main.py": MAIN})
    assert not [k for k in keys if k.startswith("callbacks.py")], keys


# --- typed containers and isinstance tests -----------------------------------------------------------
# `outputs: List[ModelOutput]` stored as `self.outputs = nn.ModuleList(outputs)`: `for output in
# self.outputs: output.calculate_metrics(...)` runs ModelOutput's method (semantic/typed_items.py); there
# `if isinstance(self.metrics[k], AtomsMetric): self.metrics[k](pred, y)` calls an AtomsMetric, whose
# abstract base leaves update/compute to the subclasses of its file: theirs run.
ATOMS_METRICS = """\
    import torch
    from torchmetrics import Metric


    class AtomsMetric(Metric):
        def get_metric_name(self):
            raise NotImplementedError


    class PerAtomRMSE(AtomsMetric):
        def update(self, preds, targets):
            self.err = self.err + (preds - targets).square().sum()
            self.n = self.n + preds.numel()

        def compute(self):
            return {self.get_metric_name(): (self.err / self.n).sqrt().item()}
"""
RMSE_COMPUTE = "atoms_metrics.py:16:41: GNN013"

MODEL_OUTPUT = """\
    from torch import nn
    from atoms_metrics import AtomsMetric


    class ModelOutput(nn.Module):
        def __init__(self, name, metrics):
            super().__init__()
            self.name = name
            self.metrics = {"train": nn.ModuleDict(metrics)}

        def calculate_metrics(self, pred, target, subset):
            values = {}
            for k in self.metrics[subset]:
                if isinstance(self.metrics[subset][k], AtomsMetric):
                    values.update(self.metrics[subset][k](pred, target))
            return values
"""

LIT = """\
    from typing import List

    import torch
    from torch import nn
    from model_output import ModelOutput


    class Lit(nn.Module):
        def __init__(self, model, outputs: List[ModelOutput]):
            super().__init__()
            self.model = torch.compile(model)
            self.outputs = nn.ModuleList(outputs)
            self.opt = torch.optim.Adam(self.model.parameters())

        def fit(self, loader):
            for batch in loader:
                pred = self.model(batch)
                loss = pred.sum()
                loss.backward()
                self.opt.step()
                for output in self.outputs:
                    output.calculate_metrics(pred, batch, "train")
"""


def test_typed_outputs_and_an_isinstance_narrowed_metric_call(tmp_path):
    keys = _keys(tmp_path, {"atoms_metrics.py": ATOMS_METRICS, "model_output.py": MODEL_OUTPUT, "lit.py": LIT})
    assert RMSE_COMPUTE in keys, keys
    assert_one_file_agrees(tmp_path, "atoms_metrics.py", nonempty=True)


def test_typed_callbacks_sequence_through_list_and_a_string_annotation(tmp_path):
    # another spelling: `callbacks: "Sequence[Hook]"` stored as `list(callbacks)`, a plain method name
    hooks = """\
        class Hook:
            def log_step(self, loss):
                pass


        class PrintHook(Hook):
            def log_step(self, loss):
                print(loss.item())
    """
    trainer = """\
        from typing import Sequence

        import torch
        from hooks import Hook


        def train(model, loader, callbacks: "Sequence[Hook]"):
            model = torch.compile(model)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            hooks = list(callbacks)
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                opt.step()
                for hook in hooks:
                    hook.log_step(loss)
    """
    keys = _keys(tmp_path, {"hooks.py": hooks, "trainer.py": trainer})
    assert "hooks.py:8:15: GNN013" in keys, keys


def test_an_isinstance_test_of_another_expression_says_nothing(tmp_path):
    # VALID: the narrowed expression is not the one called
    output = MODEL_OUTPUT.replace("isinstance(self.metrics[subset][k], AtomsMetric)",
                                  "isinstance(self.metrics[subset], AtomsMetric)")
    keys = _keys(tmp_path, {"atoms_metrics.py": ATOMS_METRICS, "model_output.py": output, "lit.py": LIT})
    assert RMSE_COMPUTE not in keys, keys


def test_typed_outputs_called_once_after_training(tmp_path):
    # VALID: the metrics run once, after the loop
    lit = LIT.replace("""                for output in self.outputs:
                    output.calculate_metrics(pred, batch, "train")
""", """            for output in self.outputs:
                output.calculate_metrics(pred, batch, "train")
""")
    keys = _keys(tmp_path, {"atoms_metrics.py": ATOMS_METRICS, "model_output.py": MODEL_OUTPUT, "lit.py": lit})
    assert RMSE_COMPUTE not in keys, keys
