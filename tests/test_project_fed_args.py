"""A compiled model handed to another file's training function or class, whose
loops feed it a variable-size loader's batches: GNN007 reports at the compile
site, told by the file with the loop (``fed_args`` facts, semantic/fed_args.py;
heldout5's MPNN: ``train.Train_QM9(compiled_model, (train_loader, ...), ...)``)."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

TRAIN = """\
    import torch


    class Trainer_QM9:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def train(self, data):
            out = self.model(data.x, data.edge_index, data.batch)
            out.sum().backward()
            self.optimizer.step()


    def Train_QM9(model, loaders, optimizer, epochs=3):
        train_loader, test_loader = loaders
        trainer = Trainer_QM9(model, optimizer)
        for epoch in range(epochs):
            for data in train_loader:
                trainer.train(data)


    class Fitter:
        def __init__(self, model):
            self.model = model

        def fit(self, train_loader):
            for batch in train_loader:
                self.model(batch.x, batch.edge_index)
"""

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "training/__init__.py": "",
    "training/train.py": TRAIN,
    "experiments/qm9_exp.py": """\
        import torch
        import training.train as train


        def run(model, loaders):
            optimizer = torch.optim.Adam(model.parameters())
            compiled_model = torch.compile(model)
            train.Train_QM9(compiled_model, loaders, optimizer)
    """,
    "experiments/fit_exp.py": """\
        import torch
        from training.train import Fitter


        def run(model, loader):
            fitter = Fitter(model=torch.compile(model))
            fitter.fit(loader)
    """,
}


def gnn007(root) -> list[str]:
    lines = whole_tree_lines(root)
    return sorted(line for line in lines if "GNN007" in line)


def test_the_loop_of_another_file_feeds_the_compiled_model(tmp_path):
    lines = gnn007(write_project(tmp_path, PROJECT))
    assert [line.split(" ")[0] for line in lines] == ["experiments/qm9_exp.py:7:22:"], lines
    assert "the loop is in train.py's `Train_QM9`, which it is handed to" in lines[0]


def test_the_loop_of_another_file_feeds_the_compiled_model_through_a_class(tmp_path):
    files = dict(PROJECT)
    files["experiments/fit_exp.py"] = """\
        import torch
        from training.train import Fitter


        def run(model, loader):
            compiled = torch.compile(model)
            fitter = Fitter(compiled)
            fitter.fit(loader)
    """
    lines = gnn007(write_project(tmp_path, files))
    assert [line.split(" ")[0] for line in lines] == ["experiments/fit_exp.py:6:16:", "experiments/qm9_exp.py:7:22:"]
    assert "`Fitter`" in lines[0]


def test_no_graph_batches_no_finding(tmp_path):
    # batches never used as graphs (a loader built elsewhere, named like one): nothing known to vary
    files = dict(PROJECT)
    files["training/train.py"] = TRAIN.replace("data.x, data.edge_index, data.batch", "data")
    root = write_project(tmp_path, files)
    assert [line.split(" ")[0] for line in gnn007(root)] == []
