"""A loop over a data module's loader (``for batch in dm.train_dataloader():``, the
Lightning DataModule protocol, the class defined in another file) feeds the compiled
model variable-size graph batches when the loop uses them as graph batches
(``batch.batch``, ``batch.edge_index``); a loop that does not is not read as one
(heldout10 Deeplearning-project-public's PaiNN). GNN007, issue 10."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

TRAIN = """\
    import torch
    from src.data import QM9DataModule
    from src.models import PaiNN


    def main(args):
        dm = QM9DataModule(batch_size=32)
        dm.setup()
        painn = torch.compile(PaiNN())
        optimizer = torch.optim.AdamW(painn.parameters())
        for epoch in range(10):
            for batch in dm.train_dataloader():
                out = painn(atoms=batch.z, atom_positions=batch.pos, graph_indexes=batch.batch)
                out.sum().backward()
                optimizer.step()
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "src/__init__.py": "",
    "src/data.py": """\
        from torch_geometric.loader import DataLoader


        class QM9DataModule:
            def __init__(self, batch_size):
                self.batch_size = batch_size

            def setup(self):
                self.data_train = []

            def train_dataloader(self):
                return DataLoader(self.data_train, batch_size=self.batch_size, shuffle=True)
    """,
    "src/models.py": """\
        from torch import nn


        class PaiNN(nn.Module):
            def forward(self, atoms, atom_positions, graph_indexes):
                return atom_positions.sum()
    """,
    "train.py": TRAIN,
}


def test_datamodule_loader_with_graph_batches(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = whole_tree_lines(root)
    assert any(line.startswith("train.py:9:") and " GNN007 " in line for line in lines), lines


def test_datamodule_loader_of_tensors_is_not_a_graph_feed(tmp_path):
    project = dict(PROJECT, **{"train.py": TRAIN.replace(
        "out = painn(atoms=batch.z, atom_positions=batch.pos, graph_indexes=batch.batch)",
        "x, y = batch\n                out = painn(x, y, None)")})
    root = write_project(tmp_path, project)
    lines = whole_tree_lines(root)
    assert not any(" GNN007 " in line for line in lines), lines
