"""A trainer whose model compiles itself (built from a registry in a base
class in another file): the per-step code the training loop reaches in other
files -- the base class's inherited ``self._backward(loss)`` and the helper it
calls, a relaxation function handed the batch with the trainer, a metric picked
by ``eval(name)`` -- drives compiled code (issue 10, the fairchem family). A
pass over a loader of its own (``validate``) is not per step of the training
loop, and the same project without the compile reports nothing."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/registry.py": """\
        class Registry:
            mapping = {}

            @classmethod
            def register_model(cls, name):
                def wrap(klass):
                    cls.mapping[name] = klass
                    return klass
                return wrap

            @classmethod
            def get_model_class(cls, name):
                return cls.mapping[name]


        registry = Registry()
    """,
    "demo/models.py": """\
        import torch
        from demo.registry import registry


        @registry.register_model("fast")
        class Fast(torch.nn.Module):
            def __init__(self, compile=False):
                super().__init__()
                if compile:
                    self.forward = torch.compile(self.forward, dynamic=True)

            def forward(self, batch):
                return batch.x * 2
    """,
    "demo/stats.py": """\
        def weight_stats(model):
            return [p.max().item() for p in model.parameters()]
    """,
    "demo/metrics.py": """\
        TABLE = {"energy": ["mae"]}


        def mae(pred, target):
            return (pred - target).abs().mean().item()


        class Evaluator:
            def eval(self, pred, target):
                return {fn: eval(fn)(pred, target) for fn in TABLE["energy"]}
    """,
    "demo/relax.py": """\
        import torch


        def relax(batch, trainer, steps):
            for _ in range(steps):
                out = trainer.predict(batch)
                if torch.abs(out).max() < 1e-3:
                    break
            return batch
    """,
    "demo/base.py": """\
        from demo.registry import registry
        from demo.stats import weight_stats


        class BaseTrainer:
            def __init__(self, config):
                self.model = registry.get_model_class(config["name"])(**config["args"])

            def _backward(self, loss):
                loss.backward()
                self.optimizer.step()
                if self.step % 100 == 0:
                    print(weight_stats(self.model))

            def validate(self):
                total = 0
                for batch in self.val_loader:
                    total += self.model(batch).sum()
                print(total.item())

            def evaluate(self):
                for batch in self.test_loader:
                    out = self._forward(batch)
                    print(out.sum().item())
    """,
    "demo/trainer.py": """\
        from demo.base import BaseTrainer
        from demo.metrics import Evaluator
        from demo.relax import relax


        class Trainer(BaseTrainer):
            def predict(self, batch):
                return self.model(batch)

            def _forward(self, batch):
                return self.model(batch)

            def train(self):
                for batch in self.train_loader:
                    loss = self.model(batch).sum()
                    self._backward(loss)
                    self.validate()

            def run_relaxations(self):
                evaluator = Evaluator()
                for batch in self.relax_loader:
                    relaxed = relax(batch, self, 300)
                    evaluator.eval(relaxed.pos, relaxed.pos_relaxed)
    """,
}


def _findings(tmp_path, files):
    root = write_project(tmp_path / "proj", files)
    return whole_tree_lines(root, "--select", "GNN013")


def test_per_step_code_the_trainer_reaches_in_other_files(tmp_path):
    found = _findings(tmp_path, PROJECT)
    where = {(line.split(":")[0], int(line.split(":")[1])) for line in found}
    assert ("demo/stats.py", 2) in where, found  # through the inherited `self._backward(loss)`
    assert ("demo/metrics.py", 5) in where, found  # `eval(fn)(...)`, per relaxation batch
    assert ("demo/relax.py", 7) in where, found  # the relaxation the loop hands batch and trainer to
    assert ("demo/base.py", 19) not in where, found  # once per `validate()` pass, not per step
    assert ("demo/base.py", 24) in where, found  # `self._forward(batch)`: left to the subclasses, runs the model


def test_the_same_project_without_compile_reports_nothing(tmp_path):
    files = dict(PROJECT)
    files["demo/models.py"] = PROJECT["demo/models.py"].replace(
        "self.forward = torch.compile(self.forward, dynamic=True)", "self.compiled = False")
    assert _findings(tmp_path, files) == set()
