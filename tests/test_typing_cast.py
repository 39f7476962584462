"""``typing.cast(T, torch.compile(model))`` is the compiled model at run time:
the names it is assigned to hold the compiled model, here and in the files
they are handed to (heldout9 opf: ``model = typing.cast(OPFModel,
torch.compile(model.cuda()))`` then ``OPFDual(model, ...)`` in another file)."""
from __future__ import annotations

import pytest

from tests.project_files import write_project, whole_tree_lines

MODULES = """\
    import torch
    import lightning as L


    class Dual(L.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def training_step(self, batch, batch_idx):
            out = self.model(batch)
            if torch.isnan(out).any():
                raise ValueError("nan")
            return out.sum()
"""

MAIN = """\
    import typing
    import torch
    import lightning as L
    from pkg.modules import Dual


    def main(loader, registry, name, flag):
        model = registry.get_class(name)()
        if flag:
            model = {COMPILED}
        L.Trainer().fit(Dual(model), loader)
"""


@pytest.mark.parametrize("compiled,found", [
    ("typing.cast(torch.nn.Module, torch.compile(model.cuda()))", True),
    ("torch.compile(model.cuda())", True),
    ("typing.cast(torch.nn.Module, model.cuda())", False),
])
def test_a_cast_compiled_model_handed_to_another_file_drives_its_steps(tmp_path, compiled, found):
    root = write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/modules.py": MODULES,
        "main.py": MAIN.replace("{COMPILED}", compiled),
    })
    lines = whole_tree_lines(root)
    assert any(line.startswith("pkg/modules.py:12:") and "GNN013" in line for line in lines) is found, lines
