"""Models that compile themselves (``self.forward = torch.compile(...)(self.forward)``
in their ``__init__``), picked from a registry in another file and run by a
trainer subclass in a third: the trainer's per-step syncs drive compiled code
(semantic/instances.py). Same answer on the whole tree and on one file."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/registry.py": """\
        class Registry:
            mapping = {"model": {}, "trainer": {}}

            @classmethod
            def register_model(cls, name):
                def wrap(klass):
                    cls.mapping["model"][name] = klass
                    return klass
                return wrap

            @classmethod
            def register_trainer(cls, name):
                def wrap(klass):
                    cls.mapping["trainer"][name] = klass
                    return klass
                return wrap

            @classmethod
            def get_model_class(cls, name):
                return cls.mapping["model"][name]

            @classmethod
            def get_trainer_class(cls, name):
                return cls.mapping["trainer"][name]


        registry = Registry()
    """,
    "demo/models.py": """\
        import torch
        from demo.registry import registry


        @registry.register_model("fast")
        class Fast(torch.nn.Module):
            def __init__(self, compile=False):
                super().__init__()
                self.compile = compile
                if self.compile:
                    self.forward = torch.compile(fullgraph=True, dynamic=True)(self.forward)

            def forward(self, x):
                if not self.compile:
                    assert x.max().item() < 10
                return x * 2


        @registry.register_model("plain")
        class Plain(torch.nn.Module):
            def forward(self, x):
                return x * x.sum().item()
    """,
    "demo/base.py": """\
        from demo.registry import registry


        class BaseTrainer:
            def __init__(self, config):
                self.model = registry.get_model_class(config["name"])(**config["args"]).to("cuda")
                self.loader = registry.get_trainer_class("x")
    """,
    "demo/trainer.py": """\
        import torch
        from demo.base import BaseTrainer


        class Trainer(BaseTrainer):
            def validate(self, loader):
                total = 0.0
                for batch in loader:
                    out = self.model(batch.x.to("cuda"))
                    total += out.sum().item()
                    host = out.detach().cpu().to(torch.float16)
                    print(host.numpy())
                return total

            def run_other(self, loader):
                for batch in loader:
                    print(self.loader(batch).sum().item())
    """,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_trainer_of_a_registered_self_compiling_model_drives_compiled_code(project):
    whole = whole_tree_lines(project)
    trainer = {line for line in whole if line.startswith("demo/trainer.py:")}
    assert {int(line.split(":")[1]) for line in trainer} == {10, 11}, whole  # not the .numpy() of the host copy (12)
    assert any("`Fast`, which compiles its own forward when `self.compile` is set" in line
               and "'fast'" in line for line in trainer), trainer
    # the model's own file: its forward runs compiled, except under `not self.compile`;
    # `Plain` is registered too, but nothing compiles it
    assert not any(line.startswith("demo/models.py:") for line in whole), whole


def test_one_file_agrees_with_the_whole_tree(project):
    assert_one_file_agrees(project, "demo/trainer.py", cached=1)
