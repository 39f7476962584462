"""A module whose forward runs code the module compiles itself
(semantic/compiling_forwards.py): the loop calling the module -- often a
trainer of another package, so the project has none -- runs the eager part
of that forward once per step around the compiled part, with the project
helpers it calls here or in another file (also through ``self.prep =
partial(helper, ...)``). A `.tolist()` there is a per-step sync driving
compiled code (GNN013); a module that compiles nothing of its own, or whose
whole forward is compiled, is no such step."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

MODEL = """\
    from functools import partial

    import torch
    from torch import nn

    from demo.graph import build_graph
    from demo.registry import registry


    @registry.register_model("backbone")
    class Backbone(nn.Module):
        def __init__(self, use_compile=True):
            super().__init__()
            self.lin = nn.Linear(8, 8)
            self.prep = partial(build_graph, cutoff=5.0)
            self.forward_fn = torch.compile(self.compiled_forward) if use_compile else self.compiled_forward

        def compiled_forward(self, x):
            return self.lin(x)

        def forward(self, data):
            sizes = data.natoms.tolist()
            x = self.prep(data)
            return self.forward_fn(x)


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.compile(nn.Linear(8, 8))

        def forward(self, data):
            if data.mask.any().item():
                data.x = data.x * 2
            return self.body(data.x)


    def build_encoder():
        return Encoder()


    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, data):
            sizes = data.natoms.tolist()
            return self.lin(data.x)


    def build_plain():
        return Plain()


    class Unbuilt(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.compile(nn.Linear(8, 8))

        def forward(self, data):
            sizes = data.natoms.tolist()
            return self.body(data.x)
"""

GRAPH = """\
    def build_graph(data, cutoff):
        counts = data.natoms.tolist()
        return data.x[: sum(counts)]


    def unused(data):
        return data.natoms.tolist()
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "demo/__init__.py": "",
    "demo/model.py": MODEL,
    "demo/graph.py": GRAPH,
    "demo/registry.py": "class Registry:\n    def register_model(self, name):\n        return lambda cls: cls\n\n\nregistry = Registry()\n",
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", PROJECT)


def test_the_eager_part_of_a_self_compiling_forward_is_per_step(project):
    whole = whole_tree_lines(project)
    found = {(line.split(":")[0], int(line.split(":")[1])) for line in whole if "GNN013" in line}
    # Backbone.forward (22, registered), its helper in another file through the partial (2),
    # Encoder.forward (33, built here); not Plain.forward (48, compiles nothing), nor Unbuilt.forward
    # (62, nothing builds it), nor the helper nothing per-step calls (7)
    assert found == {("demo/model.py", 22), ("demo/graph.py", 2), ("demo/model.py", 33)}, whole
    assert all("a loop calls `" in line and "once per step" in line for line in whole if "GNN013" in line), whole


def test_one_file_agrees_with_the_whole_tree(project):
    assert_one_file_agrees(project, "demo/graph.py")


def test_a_module_compiling_nothing_of_its_own_is_no_step(tmp_path):
    files = dict(PROJECT)
    files["demo/model.py"] = MODEL.replace("torch.compile(self.compiled_forward) if use_compile else ", "") \
        .replace("torch.compile(nn.Linear(8, 8))", "nn.Linear(8, 8)")
    whole = whole_tree_lines(write_project(tmp_path / "plain", files))
    assert not any("GNN013" in line for line in whole), whole


def test_a_wholly_compiled_forward_has_no_eager_part(tmp_path):
    files = dict(PROJECT)
    files["demo/model.py"] = MODEL.replace(
        "self.forward_fn = torch.compile(self.compiled_forward) if use_compile else self.compiled_forward",
        "self.forward_fn = self.compiled_forward\n            self.forward = torch.compile(self.forward)")
    whole = whole_tree_lines(write_project(tmp_path / "whole", files))
    assert not any(line.startswith("demo/model.py:22") and "GNN013" in line for line in whole), whole


def test_a_plugin_importing_itself_under_its_hosts_name(tmp_path):
    # EScAIP's imports inside fairchem: `from fairchem.core.models.escaip.utils... import ...` (module_map.py)
    files = dict(PROJECT)
    files["demo/model.py"] = MODEL.replace("from demo.graph import", "from host.models.plugin.graph import") \
        .replace("from demo.registry import", "from host.models.plugin.registry import")
    whole = whole_tree_lines(write_project(tmp_path / "plugin", files))
    assert any(line.startswith("demo/graph.py:2:") and "GNN013" in line for line in whole), whole
