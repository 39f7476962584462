"""A LightningModule built from a Hydra config and compiled whole, whose step
hooks are a LIBRARY base class's (semantic/library_steps.py): Lightning
compiles the inherited `training_step`, which runs the project's override of
the step method it delegates to (`shared_step`); that method's calls run
compiled -- a normaliser object's `__call__` (and, through `super().__call__`,
its base's), and the `policy` the config passes to `__init__`, which the class
hands its base (`super().__init__(env, policy)`) and calls as `self.policy(...)`."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

MODEL = """\
    from typing import Any

    import torch
    from rl4co.models.zoo.pomo import POMO

    from demo.normalization import CumulativeMean, ZNormalization


    class RouteBase(POMO):
        def __init__(self, env, policy, normalize_reward="z", **kwargs):
            self.save_hyperparameters(logger=False)
            super().__init__(env, policy, **kwargs)
            if normalize_reward == "z":
                self.normalization = ZNormalization()
            else:
                self.normalization = CumulativeMean()

        def shared_step(self, batch: Any, batch_idx: int, phase: str, dataloader_idx: int = None):
            td = self.env.reset(batch)
            out = self.policy(td, self.env, phase=phase)
            normalized = self.normalization(rewards=out["reward"])
            return {"loss": -(normalized * out["log_likelihood"]).mean()}

        def helper(self, x):
            return x[x > 0]


    class Sampling(RouteBase):
        def shared_step(self, batch: Any, batch_idx: int, phase: str, dataloader_idx: int = None):
            indices = torch.bernoulli(torch.tensor([0.5, 0.5]))
            if indices[0] == 1:
                batch["open"] = False
            return super().shared_step(batch, batch_idx, phase, dataloader_idx)
"""

NORMALIZATION = """\
    class Base:
        def __call__(self, rewards):
            mask = rewards > 0
            return rewards[mask]


    class CumulativeMean(Base):
        def __call__(self, rewards):
            result = super().__call__(rewards)
            return result


    class ZNormalization:
        def __call__(self, rewards):
            mask = rewards > 0
            return rewards - rewards[mask].mean().item()
"""

POLICY = """\
    import torch


    class MyPolicy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, td, env, phase="train"):
            h = self.lin(td["x"])
            return {"reward": h.sum(-1), "log_likelihood": h.mean(-1), "sel": torch.nonzero(h > 0)}
"""

RUN = """\
    import hydra
    import torch
    from lightning import LightningModule


    @hydra.main(config_path="configs", config_name="main")
    def run(cfg):
        env = hydra.utils.instantiate(cfg.env)
        model: LightningModule = hydra.utils.instantiate(cfg.model, env)
        trainer = hydra.utils.instantiate(cfg.trainer)
        if cfg.get("compile", False):
            model = torch.compile(model)
        trainer.fit(model=model)
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "demo/__init__.py": "",
    "demo/model.py": MODEL,
    "demo/normalization.py": NORMALIZATION,
    "demo/policy.py": POLICY,
    "run.py": RUN,
    "configs/main.yaml": "defaults:\n  - model: route\ncompile: false\n",
    "configs/model/route.yaml": "_target_: demo.model.RouteBase\n\npolicy:\n  _target_: demo.policy.MyPolicy\n",
    "configs/model/sampling.yaml": "_target_: demo.model.Sampling\n\npolicy:\n  _target_: demo.policy.MyPolicy\n",
}


def _rows(whole, name):
    return {(int(line.split(":")[1]), line.split(" ")[1]) for line in whole if line.startswith(name + ":")}


def test_the_step_method_a_library_base_runs_and_what_it_calls_are_compiled(tmp_path):
    root = write_project(tmp_path / "proj", PROJECT)
    whole = whole_tree_lines(root)
    assert _rows(whole, "demo/normalization.py") == {(4, "GNN008"), (16, "GNN001"), (16, "GNN008")}, whole
    assert _rows(whole, "demo/policy.py") == {(11, "GNN008")}, whole  # the config's policy, stored by the base
    # the step method itself, not the helper nothing compiled calls; a CPU bernoulli draw is no sync
    assert _rows(whole, "demo/model.py") == set(), whole
    for name in ("demo/normalization.py", "demo/policy.py"):
        assert_one_file_agrees(root, name, whole=whole, nonempty=True)


def test_without_a_lightning_api_call_the_step_methods_are_not_presumed_run(tmp_path):
    # only `shared_step` runs the normaliser; the policy handed to the base runs in the base's compiled forward
    files = dict(PROJECT, **{"demo/model.py": MODEL.replace("self.save_hyperparameters(logger=False)", "pass")})
    whole = whole_tree_lines(write_project(tmp_path / "proj", files))
    assert _rows(whole, "demo/normalization.py") == set(), whole
    assert _rows(whole, "demo/policy.py") == {(11, "GNN008")}, whole


def test_step_hooks_in_the_class_itself_are_followed_as_before(tmp_path):
    # a class that defines `training_step` runs what that calls: an unrelated `step` is not presumed run
    model = MODEL.replace("        def helper(self, x):", "        def training_step(self, batch, batch_idx):\n"
                          "            return batch\n\n        def helper(self, x):")
    whole = whole_tree_lines(write_project(tmp_path / "proj", dict(PROJECT, **{"demo/model.py": model})))
    assert _rows(whole, "demo/normalization.py") == set(), whole


MOE_POLICY = """\
    from rl4co.models.zoo.am import AttentionModelPolicy

    from demo.decoder import MoEDecoder


    class MoEPolicy(AttentionModelPolicy):
        def __init__(self, encoder=None, decoder=None, num_experts: int = 4):
            if decoder is None:
                decoder = MoEDecoder(num_experts)
            super().__init__(encoder=encoder, decoder=decoder, env_name="tsp")
"""

DECODER = """\
    import torch
    from rl4co.models.zoo.am.decoder import AttentionModelDecoder


    class Dispatcher:
        def __init__(self, gates):
            self.index = torch.nonzero(gates)


    class Pointer(torch.nn.Module):
        def forward(self, x):
            dispatcher = Dispatcher(x)
            return x[dispatcher.index[:, 0]]


    class MoEDecoder(AttentionModelDecoder):
        def __init__(self, num_experts):
            super().__init__()
            self.pointer = Pointer()

        def pre_decoder_hook(self, td):
            self.pointer.moe_loss = 0
            return td
"""


def test_modules_handed_to_a_library_base_whose_forward_runs_them_are_compiled(tmp_path):
    # the policy's forward and the decoder's are the library's: they run what the class hands them
    # (`super().__init__(decoder=decoder)`) and what it stores (`self.pointer`), even when only an
    # eager hook of this file reads it; a helper object built in compiled code runs its `__init__` there
    files = dict(PROJECT, **{"demo/moe_policy.py": MOE_POLICY, "demo/decoder.py": DECODER,
                             "configs/model/moe.yaml": "_target_: demo.model.RouteBase\n\npolicy:\n"
                                                       "  _target_: demo.moe_policy.MoEPolicy\n"})
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    assert _rows(whole, "demo/decoder.py") == {(7, "GNN008")}, whole
    assert_one_file_agrees(root, "demo/decoder.py", whole=whole, nonempty=True)


def test_a_library_subclass_nothing_compiles_is_not_compiled(tmp_path):
    files = dict(PROJECT, **{"demo/moe_policy.py": MOE_POLICY, "demo/decoder.py": DECODER,
                             "run.py": RUN.replace("model = torch.compile(model)", "pass")})
    whole = whole_tree_lines(write_project(tmp_path / "proj", files))
    assert whole == set(), whole
