"""Compiled code reaching a package's own functions and configs (s2-pyg):

- a compiled model's layers imported through a package's ``from .conv import *``
  and re-exports reach the layer's file and the helpers it calls from there
  (``torch_geometric.utils.remove_self_loops``), past ``@overload`` stubs;
- a helper compiled only through other files' calls reports only what those
  calls run: a branch for an optional input no compiled call gives
  (``if edge_attr is not None:``) or for a sparse input stays silent;
- ``torch.compile(model, **cfg.compile.args)`` reads the options from the
  project's Hydra YAML configs (``compile: args: {backend: inductor}``).
"""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

LIB = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "lib/__init__.py": "",
    "lib/nn/__init__.py": "from .conv import *  # noqa\n",
    "lib/nn/conv/__init__.py": "from .my_conv import MyConv\n",
    "lib/utils/__init__.py": "from .loop import remove_loops\n",
    "lib/utils/loop.py": """\
        from typing import overload
        import torch
        from lib.utils.sparse import to_coo


        @overload
        def remove_loops(edge_index, edge_attr=None):
            pass


        def remove_loops(edge_index, edge_attr=None):
            layout = None
            if edge_index.is_sparse:
                layout = edge_index.layout
            mask = edge_index[0] != edge_index[1]
            edge_index = edge_index[:, mask]
            if layout is not None:
                return to_coo(edge_index), None
            if edge_attr is not None:
                edge_attr = edge_attr[mask]
            return edge_index, edge_attr


        def unused(edge_index):
            return edge_index[:, edge_index[0] > 0]
    """,
    "lib/utils/sparse.py": """\
        import torch


        def to_coo(edge_index):
            n = int(edge_index.max()) + 1
            return torch.sparse_coo_tensor(edge_index, torch.ones(edge_index.size(1)), (n, n))
    """,
    "lib/nn/conv/my_conv.py": """\
        import torch
        from lib.utils import remove_loops


        class MyConv(torch.nn.Module):
            def forward(self, x, edge_index, edge_weight=None):
                edge_index, edge_weight = remove_loops(edge_index, edge_weight)
                return x
    """,
    "bench/run.py": """\
        import torch
        from lib.nn import MyConv


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = MyConv()

            def forward(self, x, edge_index):
                return self.conv(x, edge_index)


        model = torch.compile(Net())
    """,
}


def test_a_compiled_layer_reaches_the_package_helper_but_not_its_optional_branches(tmp_path):
    root = write_project(tmp_path / "proj", LIB)
    lines = whole_tree_lines(root, "--select", "GNN001,GNN005,GNN008")
    found = sorted(line.split(" ")[0] + line.split(" ")[1] for line in lines)
    # line 16: the mask read every call runs; not 20 (edge_attr: no compiled call gives it),
    # not 18 / sparse.py (a sparse input only), not 26 (no compiled caller)
    assert found == ["lib/utils/loop.py:16:18:GNN008"], lines


def test_the_optional_branch_runs_when_a_compiled_call_gives_it(tmp_path):
    files = dict(LIB)
    files["lib/nn/conv/my_conv.py"] = LIB["lib/nn/conv/my_conv.py"].replace(
        "remove_loops(edge_index, edge_weight)", "remove_loops(edge_index, x.new_ones(edge_index.size(1)))")
    root = write_project(tmp_path / "proj", files)
    lines = whole_tree_lines(root, "--select", "GNN008")
    assert {line.split(":")[0] + ":" + line.split(":")[1] for line in lines} == \
        {"lib/utils/loop.py:16", "lib/utils/loop.py:20"}, lines


def test_an_eager_only_package_stays_silent(tmp_path):
    files = dict(LIB)
    files["bench/run.py"] = LIB["bench/run.py"].replace("model = torch.compile(Net())", "model = Net()")
    root = write_project(tmp_path / "proj", files)
    assert not whole_tree_lines(root, "--select", "GNN001,GNN005,GNN008")


HYDRA = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "conf/config.yaml": "model:\n  hidden: 64\ncompile:\n  enabled: true\n  args:\n    backend: inductor  # fast\n",
    "conf/experiment/big.yaml": "# @package _global_\ncompile:\n  enabled: true\n",
    "train.py": """\
        import hydra
        import torch
        from torch_geometric.loader import DataLoader


        class Trainer:
            def __init__(self, cfg, model, dataset):
                self.loader = DataLoader(dataset, batch_size=8, shuffle=True)
                self.model = torch.compile(model, **cfg.compile.args)

            def fit(self):
                for batch in self.loader:
                    self.model(batch)


        @hydra.main(config_path="conf", config_name="config")
        def main(cfg):
            Trainer(cfg, build(), load()).fit()
    """,
}


def test_compile_options_from_the_hydra_config(tmp_path):
    root = write_project(tmp_path / "proj", HYDRA)
    lines = whole_tree_lines(root, "--select", "GNN007")
    assert [line.split(":")[0] + ":" + line.split(":")[1] for line in lines] == ["train.py:9"], lines


def test_a_config_that_sets_dynamic_or_configs_that_disagree(tmp_path):
    files = dict(HYDRA)
    files["conf/config.yaml"] = HYDRA["conf/config.yaml"].replace("backend: inductor", "{backend: inductor, dynamic: true}")
    files["conf/config.yaml"] = "compile:\n  args: {backend: inductor, dynamic: true}\n"
    root = write_project(tmp_path / "a", files)
    assert not whole_tree_lines(root, "--select", "GNN007")
    files["conf/experiment/big.yaml"] = "# @package _global_\ncompile:\n  args:\n    backend: eager\n"
    root = write_project(tmp_path / "b", files)  # one config sets dynamic, another leaves it out: unknown
    assert not whole_tree_lines(root, "--select", "GNN007")


ORIGINS = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "lib/__init__.py": "",
    "lib/index.py": """\
        import torch


        def index2ptr(index: torch.Tensor, size=None):
            if size is None:
                size = int(index.max()) + 1
            return torch.zeros(size + 1)
    """,
    # compiled here first, with a size: never reaches the `size is None` branch
    "lib/a_sized.py": """\
        import torch
        from lib.index import index2ptr


        class Sized(torch.nn.Module):
            def forward(self, batch, n):
                return index2ptr(batch, n.shape[0])


        model = torch.compile(Sized())
    """,
    # compiled with a size that may be None (its own optional parameter, re-bound): may take it
    "lib/a_maybe.py": """\
        import torch
        from lib.index import index2ptr


        def to_ptr(batch, size=None):
            if size is None:
                size = batch.numel()
            return index2ptr(batch, size)


        class Maybe(torch.nn.Module):
            def forward(self, batch):
                return to_ptr(batch)


        model = torch.compile(Maybe())
    """,
    # compiled without a size: this call takes the branch
    "lib/b_unsized.py": """\
        import torch
        from lib.index import index2ptr


        class Unsized(torch.nn.Module):
            def forward(self, batch):
                return index2ptr(batch)


        model = torch.compile(Unsized())
    """,
}


def test_the_message_names_the_compiled_call_that_takes_the_branch(tmp_path):
    # index2ptr is compiled through two files' calls; only b_unsized.py's leaves `size` None, so the
    # finding in the `size is None` branch names that path, not the fact that arrived first
    root = write_project(tmp_path / "proj", ORIGINS)
    lines = whole_tree_lines(root, "--select", "GNN001")
    assert len(lines) == 1, lines
    line = lines.pop()
    assert line.startswith("lib/index.py:6:") and "`Unsized`" in line and "b_unsized.py" in line, line
    assert "`Sized`" not in line and "`Maybe`" not in line, line
