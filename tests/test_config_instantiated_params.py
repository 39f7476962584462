"""A constructor parameter a Hydra config fills with a nested ``_target_``
(under ``_recursive_: False`` the class gets the config and builds it itself:
``self.construct_graph = hydra.utils.instantiate(graph_constructor, d=...)``)
holds that class, and the configs may live next to the entry script
(``experiments/<task>/configs/``), not above the class's file (heldout4,
neural-graphs: ``GraphConstructor`` run by a compiled ``GNNForGeneralization``)."""
from __future__ import annotations

from gnnlint import config_targets
from tests.project_files import finding_lines, run, write_project

MAIN = """\
    import hydra
    import torch
    from torch_geometric.loader import DataLoader


    @hydra.main(config_path="configs", config_name="base")
    def main(cfg):
        model = hydra.utils.instantiate(cfg.model)
        model = torch.compile(model, dynamic=True)
        for batch in DataLoader(cfg.dataset, batch_size=8):
            model(batch).sum().backward()
"""

NET = """\
    import hydra
    import torch


    class Net(torch.nn.Module):
        def __init__(self, builder, d_hid):
            super().__init__()
            self.build = hydra.utils.instantiate(builder, d=d_hid)

        def forward(self, batch):
            return self.build(batch)
"""

BUILDER = """\
    import torch
    from torch_geometric.utils import to_dense_batch


    class Builder(torch.nn.Module):
        def forward(self, batch):
            return to_dense_batch(batch.x, batch.batch)[0]
"""

NET_YAML = """\
_target_: pkg.net.Net
_recursive_: False
d_hid: 8
builder:
  _target_: pkg.builder.Builder
  _recursive_: False
"""


def _project(tmp_path, net_yaml: str = NET_YAML, net: str = NET):
    return write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "experiments/task/main.py": MAIN,
        "experiments/task/configs/base.yaml": "defaults:\n  - model: net\n",
        "experiments/task/configs/model/net.yaml": net_yaml,
        "pkg/__init__.py": "",
        "pkg/net.py": net,
        "pkg/builder.py": BUILDER,
    })


def test_param_fills_finds_configs_next_to_the_entry_script(tmp_path):
    root = _project(tmp_path)
    net = str(root / "pkg" / "net.py")
    assert config_targets.param_fills(net, "Net", "builder") == [("target", "pkg.builder.Builder")]
    assert config_targets.param_fills(net, "Net", "d_hid") == []  # a literal: no class


def test_the_class_the_config_passes_to_instantiate_runs_compiled(tmp_path):
    root = _project(tmp_path)
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    built = [line for line in lines if line.startswith("pkg/builder.py")]
    assert [line.split(" ")[1] for line in built] == ["GNN009"], lines


def test_a_parameter_the_config_does_not_fill_with_a_target_builds_nothing(tmp_path):
    root = _project(tmp_path, NET_YAML.replace("  _target_: pkg.builder.Builder\n", "  d: 4\n"))
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/builder.py") for line in lines), lines


def test_instantiate_of_a_local_value_is_not_the_parameter(tmp_path):
    # the parameter is re-bound to another config before it is built: not what the config passed
    net = NET.replace("        self.build = hydra.utils.instantiate(builder, d=d_hid)",
                      "        builder = {\"_target_\": \"pkg.other.Other\"}\n"
                      "        self.build = hydra.utils.instantiate(builder, d=d_hid)")
    root = _project(tmp_path, net=net)
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/builder.py") for line in lines), lines
