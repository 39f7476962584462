"""A compiled model handed to a capitalised function of another file
(``train.Train_QM9(compiled_model, loaders, ...)`` with ``import training.train
as train``): the function's loops -- here through a local trainer class that
stores the model -- drive compiled code (issue 10, heldout5's MPNN). A class of
that name would ignore the fact: only functions take it."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "training/__init__.py": "",
    "training/train.py": """\
        import torch


        class Trainer_QM9:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def train(self, data):
                self.optimizer.zero_grad()
                loss = self.model(data).sum()
                loss.backward()
                self.optimizer.step()
                return loss.item()


        def Train_QM9(model, loaders, optimizer, epochs=3):
            train_loader, test_loader = loaders
            trainer = Trainer_QM9(model, optimizer)
            for epoch in range(epochs):
                total = 0
                for data in train_loader:
                    total += trainer.train(data)
    """,
    "experiments/qm9_exp.py": """\
        import torch
        import training.train as train


        def run(model, loaders):
            optimizer = torch.optim.Adam(model.parameters())
            compiled_model = torch.compile(model)
            train.Train_QM9(compiled_model, loaders, optimizer)
    """,
}


def test_a_capitalised_function_handed_the_compiled_model(tmp_path):
    root = write_project(tmp_path, PROJECT)
    lines = whole_tree_lines(root)
    assert [line.split(" ")[0] for line in lines] == ["training/train.py:14:16:"], lines
    assert "GNN013" in next(iter(lines))


def test_not_compiled_nothing(tmp_path):
    files = dict(PROJECT)
    files["experiments/qm9_exp.py"] = PROJECT["experiments/qm9_exp.py"].replace("torch.compile(model)", "model")
    root = write_project(tmp_path, files)
    assert not whole_tree_lines(root)
