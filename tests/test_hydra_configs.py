"""Models built by Hydra (issue 10, recall on real code): the classes a
compiled value may be include the ``_target_`` classes of the project's YAML
configs for the group it instantiates (``hydra.utils.instantiate(cfg.encoder)``
-> ``configs/encoder/*.yaml``), compiled "when the config selects it"; the
same findings whether the whole tree, one file or stdin is checked."""
from __future__ import annotations

import pytest

from gnnlint import config_targets
from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

ENCODERS = """\
    import torch
    from torch_geometric.nn import global_mean_pool


    class SchNetEncoder(torch.nn.Module):
        def forward(self, x, batch):
            return global_mean_pool(x, batch)


    class MLPEncoder(torch.nn.Module):
        def forward(self, x, batch):
            keep = x[x > 0]
            return keep.sum()


    class NotInConfigs(torch.nn.Module):
        def forward(self, x, batch):
            return global_mean_pool(x, batch)
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "configs/encoder/schnet.yaml": "# SchNet\n_target_: pkg.encoders.SchNetEncoder\nhidden: 64\n",
    "configs/encoder/mlp.yaml": "_target_: 'pkg.MLPEncoder'  # re-exported by pkg/__init__.py\n",
    "configs/optimizer/adam.yaml": "_target_: torch.optim.Adam\nlr: 0.001\n",
    "configs/head/linear.yaml": "_target_: pkg.heads.Head\n",
    "pkg/__init__.py": "from .encoders import MLPEncoder\n",
    "pkg/encoders.py": ENCODERS,
    "pkg/heads.py": """\
        import torch


        class Head(torch.nn.Module):
            def forward(self, x):
                return x[x > 0]
    """,
    "pkg/lit.py": """\
        import hydra
        import torch


        class LitModel(torch.nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.encoder = hydra.utils.instantiate(cfg.model.encoder)
                self.head = hydra.utils.instantiate(cfg.head)

            def forward(self, x, batch):
                return self.head(self.encoder(x, batch))
    """,
    "train.py": """\
        import torch_geometric
        from pkg.lit import LitModel


        def main(cfg):
            model = LitModel(cfg)
            if cfg.get("compile"):
                model = torch_geometric.compile(model, dynamic=True)
            return model
    """,
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_config_targeted_encoders_of_a_compiled_model_are_compiled(project):
    whole = whole_tree_lines(project)
    assert any(line.startswith("pkg/encoders.py:7:") and "GNN009" in line and "`SchNetEncoder`" in line
               and "when the config selects it, `configs/encoder/schnet.yaml`" in line for line in whole), whole
    # through pkg/__init__.py's re-export (`_target_: pkg.MLPEncoder`)
    assert any(line.startswith("pkg/encoders.py:12:") and "GNN008" in line for line in whole), whole
    assert any(line.startswith("pkg/heads.py:6:") and "GNN008" in line for line in whole), whole
    # a class no config names is not compiled
    assert not any(line.startswith("pkg/encoders.py:18:") for line in whole), whole


@pytest.mark.parametrize("name", ["pkg/encoders.py", "pkg/heads.py"])
def test_one_file_and_stdin_agree_with_the_whole_tree(project, name):
    assert_one_file_agrees(project, name, stdin=True, nonempty=True)


def test_nothing_compiled_nothing_reported(tmp_path):
    files = dict(PROJECT)
    files["train.py"] = "from pkg.lit import LitModel\n\n\ndef main(cfg):\n    return LitModel(cfg)\n"
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    assert not any(line.startswith("pkg/") for line in whole), whole


def test_a_target_of_another_group_is_not_compiled(tmp_path):
    files = dict(PROJECT)
    files["configs/head/linear.yaml"] = "_target_: torch.nn.Linear\n"
    files["configs/model/other.yaml"] = "_target_: pkg.heads.Head\n"  # group `model`, not `head`
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    assert not any(line.startswith("pkg/heads.py:") for line in whole), whole
    assert any(line.startswith("pkg/encoders.py:7:") for line in whole), whole


def test_instantiated_then_compiled_and_a_target_in_the_same_file(tmp_path):
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "conf/model/gcn.yaml": "_target_: train.Net\n",
        "conf/config.yaml": "defaults:\n  - model: gcn\noptimizer:\n  _target_: train.Unrelated\n",
        "conf/experiment/big.yaml": "# @package _global_\nmodel:\n  _target_: train.BigNet\n  hidden: 256\n",
        "train.py": """\
            import torch
            from hydra.utils import instantiate


            class Net(torch.nn.Module):
                def forward(self, x):
                    return x[x > 0]


            class BigNet(torch.nn.Module):
                def forward(self, x):
                    return x.nonzero()


            class Unrelated(torch.nn.Module):
                def forward(self, x):
                    return x[x > 0]


            def main(cfg):
                model = instantiate(cfg.model, _convert_="partial").to("cuda")
                model = torch.compile(model)
                return model
        """,
    }
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    assert any(line.startswith("train.py:7:") and "GNN008" in line for line in whole), whole
    assert any(line.startswith("train.py:12:") and "GNN008" in line for line in whole), whole
    assert not any(line.startswith("train.py:17:") for line in whole), whole


def test_the_line_scan_reads_top_level_and_keyed_targets(tmp_path):
    root = write_project(tmp_path / "proj", {
        "setup.py": "",
        "cfg_tree/configs/encoder/a.yaml": "_target_: pkg.A\nsub:\n  _target_: pkg.Nested\n",
        "cfg_tree/configs/encoder/b.yml": "- not a mapping\n",
        "cfg_tree/configs/run.yaml": "encoder:\n  _target_: \"pkg.C\"\n  x: 1\nlist:\n  - _target_: pkg.D\n",
        "cfg_tree/configs/interp.yaml": "encoder:\n  _target_: ${dp:Thing}\n",
        "cfg_tree/src/code.py": "",
    })
    found = [t for t, _ in config_targets.candidates(str(root / "cfg_tree/src/code.py"), "encoder")]
    assert sorted(found) == ["pkg.A", "pkg.C"]
    assert config_targets.candidates(str(root / "cfg_tree/src/code.py"), "decoder") == []


def test_a_factory_target_compiles_what_it_returns(tmp_path):
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "conf/model/gcn.yaml": "_target_: models.build_model\nname: gcn\n",
        "models.py": """\
            import torch


            class Net(torch.nn.Module):
                def forward(self, x):
                    return x[x > 0]


            def build_model(name):
                return Net()


            def never_named(name):
                return Other()


            class Other(torch.nn.Module):
                def forward(self, x):
                    return x[x > 0]
        """,
        "train.py": """\
            import hydra
            import torch


            def main(cfg):
                return torch.compile(hydra.utils.call(cfg.model))
        """,
    }
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    assert any(line.startswith("models.py:6:") and "GNN008" in line for line in whole), whole
    assert not any(line.startswith("models.py:19:") for line in whole), whole


def test_a_trainer_attribute_built_by_hydra_then_compiled(tmp_path):
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "conf/model/mgn.yaml": "_target_: nets.MeshNet\n",
        "nets.py": """\
            import torch


            class MeshNet(torch.nn.Module):
                def forward(self, x):
                    return x[x > 0]
        """,
        "train.py": """\
            import torch
            from hydra.utils import instantiate


            class Trainer:
                def __init__(self, cfg):
                    self.model = instantiate(cfg.model)
                    if cfg.compile.enabled:
                        self.model = torch.compile(self.model, **cfg.compile.args).to("cuda")
        """,
    }
    root = write_project(tmp_path / "proj", files)
    whole = whole_tree_lines(root)
    assert any(line.startswith("nets.py:6:") and "GNN008" in line for line in whole), whole
