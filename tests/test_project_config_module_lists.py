"""A model built by Hydra from a config whose entries are lists of nested ``_target_`` modules
(``input_modules: [- _target_: pkg.layer.PairwiseDistance]``), stored in ``nn.ModuleList(param)``
or a local ``ModuleList`` subclass, with its package re-exporting the class in a parenthesised
import; a block class taken from a parameter default (``interaction_cls=ResidualBlock``); a
neighbour list whose base forward calls ``self._build(...)`` that the subclass overrides; a
``torch_scatter`` import with a project fallback under ``except ImportError``; and a
LightningModule handed the compiled model through ``load_from_checkpoint(model=model)`` (heldout10
curator). Every compiled forward and the Lightning steps are reached. Issue 10."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.gnnlint]\n",
    "pkg/__init__.py": "",
    "pkg/configs/model/nnp.yaml": """\
        _target_: pkg.model.Potential
        input_modules:
          - _target_: pkg.layer.PairwiseDistance
            cutoff: 5.0
        output_modules:
          - _target_: pkg.layer.AtomwiseReduce
    """,
    "pkg/model/__init__.py": """\
        from .base import (
            Potential,
            LitPotential,
        )
    """,
    "pkg/model/base.py": """\
        import torch
        from torch import nn
        import lightning.pytorch as pl


        class HookedList(nn.ModuleList):
            def __init__(self, modules=None):
                super().__init__()
                if modules:
                    self.extend(modules)


        class Potential(nn.Module):
            def __init__(self, input_modules=None, output_modules=None):
                super().__init__()
                self.input_modules = nn.ModuleList(input_modules)
                self.output_modules = HookedList(output_modules)

            def forward(self, data):
                for m in self.input_modules:
                    data = m(data)
                for m in self.output_modules:
                    data = m(data)
                return data


        class LitPotential(pl.LightningModule):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def training_step(self, batch, batch_idx):
                loss = self.model(batch)["energy"].sum()
                self.log("loss", loss.cpu().item())
                return loss
    """,
    "pkg/layer/__init__.py": """\
        from .distance import PairwiseDistance
        from .reduce import AtomwiseReduce
    """,
    "pkg/layer/distance.py": """\
        import torch
        from torch import nn


        class NeighborListBase(nn.Module):
            def forward(self, data):
                data["edges"] = self._build(data["pos"])
                return data

            def _build(self, pos):
                raise NotImplementedError


        class TorchNeighborList(NeighborListBase):
            def _build(self, pos):
                dist = torch.cdist(pos, pos)
                return torch.nonzero(dist < 5.0)


        class ResidualBlock(nn.Module):
            def forward(self, data):
                if torch.isnan(data["pos"]).any():
                    data["pos"] = data["pos"] * 2
                return data


        class PairwiseDistance(nn.Module):
            def __init__(self, cutoff, block_cls=ResidualBlock):
                super().__init__()
                self.nl = TorchNeighborList()
                self.blocks = nn.ModuleList()
                self.blocks.append(block_cls())

            def forward(self, data):
                data = self.nl(data)
                for block in self.blocks:
                    data = block(data)
                return data
    """,
    "pkg/layer/reduce.py": """\
        import torch
        from torch import nn
        try:
            from torch_scatter import scatter_add
        except ImportError:
            from pkg.utils import scatter_add


        class AtomwiseReduce(nn.Module):
            def forward(self, data):
                data["energy"] = scatter_add(data["atomic"], data["image_idx"], dim=0)
                return data
    """,
    "pkg/utils.py": """\
        import torch


        def scatter_add(src, index, dim=0, dim_size=None):
            if dim_size is None:
                dim_size = int(index.max()) + 1
            out = torch.zeros(dim_size, device=src.device)
            return out.index_add_(dim, index, src)
    """,
    "pkg/cli.py": """\
        import hydra
        import torch
        from pkg.model import LitPotential


        def train(config):
            model = hydra.utils.instantiate(config.model)
            if config.compile:
                model = torch.compile(model)
            task = LitPotential.load_from_checkpoint(config.ckpt, model=model)
            trainer = hydra.utils.instantiate(config.trainer)
            trainer.fit(model=task)
    """,
}


def test_config_built_module_lists_are_compiled(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = whole_tree_lines(root)
    found = {(line.split(":")[0], line.split(":")[1], line.split()[1]) for line in lines}
    assert ("pkg/layer/distance.py", "17", "GNN008") in found, lines  # the subclass's override of _build
    assert ("pkg/layer/distance.py", "22", "GNN001") in found, lines  # the default block class
    assert ("pkg/layer/reduce.py", "11", "GNN009") in found, lines  # torch_scatter, not the fallback
    assert not any(f[0] == "pkg/utils.py" for f in found), lines  # the fallback does not run
    assert ("pkg/model/base.py", "34", "GNN013") in found, lines  # Lightning step of the handed model


def test_module_stored_into_a_moduledict_runs_compiled(tmp_path):
    """``self.embeddings["onehot"] = OneHot(...)`` in ``__init__`` (heldout10 curator's MACE)."""
    root = write_project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.gnnlint]\n",
        "model.py": """\
            import torch
            from torch import nn


            class OneHot(nn.Module):
                def forward(self, z):
                    if z.max() > 119:
                        raise ValueError("unknown element")
                    return torch.nn.functional.one_hot(z, 120)


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embeddings = nn.ModuleDict()
                    self.embeddings["onehot"] = OneHot()

                def forward(self, z):
                    return self.embeddings["onehot"](z).sum()


            net = torch.compile(Net())
        """})
    lines = whole_tree_lines(root)
    assert any(line.startswith("model.py:7:") and " GNN001 " in line for line in lines), lines
