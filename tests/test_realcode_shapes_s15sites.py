"""s15sites: compile sites fed variable-size batches by code out of sight (GNN007).

1. A loader built elsewhere whose batches the loop hands on untouched
   (``for x, y in self.train_dataloader: model(x)``, ``preds = [m(x) for m in
   models]``) counts when the compiled model itself reads them as graph batches
   (``data.batch``, ``global_mean_pool(h, batch.batch)``): graph_models.py, also
   for a class another file or a Hydra config defines.
2. The compiled model handed to a trainer class a Hydra config builds
   (``hydra.utils.instantiate(cfg.trainer, models=[model], datamodule=dm)``),
   whose file feeds it: fact_joins.join_config_fed_args (heldout6/14/15/17's QM9
   template).
Each shape in two spellings, with VALID twins (a full-batch model, dynamic=True).
"""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

MODELS = """\
    import torch
    from torch_geometric.nn import GCNConv, global_add_pool


    class GIN(torch.nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.conv = GCNConv(11, hidden)

        def forward(self, data):
            x, edge_index, batch = data.x, data.edge_index, data.batch
            return global_add_pool(self.conv(x, edge_index), batch)


    class NodeGCN(torch.nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.conv = GCNConv(11, hidden)

        def forward(self, data):
            return self.conv(data.x, data.edge_index)
"""

TRAINER = """\
    import torch


    class Ensemble:
        def __init__(self, models, datamodule, device):
            self.models = models
            self.device = device
            self.train_dataloader = datamodule.train_dataloader()
            self.optimizer = torch.optim.Adam([p for m in self.models for p in m.parameters()])

        def train(self, epochs):
            for epoch in range(epochs):
                for x, targets in self.train_dataloader:
                    x, targets = x.to(self.device), targets.to(self.device)
                    losses = [torch.nn.functional.mse_loss(model(x), targets) for model in self.models]
                    torch.stack(losses).sum().backward()
                    self.optimizer.step()
"""

RUN = """\
    import hydra
    import torch


    @hydra.main(config_path="../configs", config_name="run.yaml", version_base=None)
    def main(cfg):
        dm = hydra.utils.instantiate(cfg.dataset.init)
        model = hydra.utils.instantiate(cfg.model.init)
        if cfg.compile_model:
            model = torch.compile(model)
        models = [model]
        trainer = hydra.utils.instantiate(cfg.trainer.init, models=models, datamodule=dm, device="cuda")
        trainer.train(**cfg.trainer.train)
"""


def _hydra_project(model: str = "GIN", run: str = RUN, trainer: str = TRAINER) -> dict:
    return {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "src/models.py": MODELS,
        "src/trainer.py": trainer,
        "src/run.py": run,
        "configs/run.yaml": "defaults:\n  - model: gin\n  - trainer: ensemble\ncompile_model: false\n",
        "configs/model/gin.yaml": f"init:\n  _target_: models.{model}\n  hidden: 64\n",
        "configs/trainer/ensemble.yaml": "train:\n  epochs: 10\ninit:\n  _target_: trainer.Ensemble\n",
    }


def gnn007(root) -> list[str]:
    return sorted(line for line in whole_tree_lines(root) if " GNN007 " in line)


def test_hydra_trainer_fed_list_of_compiled_models(tmp_path):
    lines = gnn007(write_project(tmp_path, _hydra_project()))
    assert [line.split(" ")[0] for line in lines] == ["src/run.py:10:17:"], lines
    assert "the loop is in trainer.py's `Ensemble`" in lines[0] and "`GIN.forward` reads `data.batch`" in lines[0]


def test_hydra_trainer_fed_one_compiled_model_by_keyword_in_a_method(tmp_path):
    # another spelling: one model by keyword, the loop in a method `fit`, the loader from a data module
    # stored first, a per-graph pool of `batch.batch`
    trainer = """\
        import torch


        class Engine:
            def __init__(self, net, data_module, lr=1e-3):
                self.net = net
                self.dm = data_module
                self.opt = torch.optim.AdamW(self.net.parameters(), lr=lr)

            def fit(self):
                loader = self.dm.train_dataloader()
                for batch, y in loader:
                    loss = (self.net(batch) - y).pow(2).mean()
                    loss.backward()
                    self.opt.step()
    """
    run = """\
        import hydra
        import torch


        @hydra.main(config_path="../configs", config_name="run.yaml", version_base=None)
        def main(cfg):
            dm = hydra.utils.instantiate(cfg.dataset.init)
            net = torch.compile(hydra.utils.instantiate(cfg.model.init))
            engine = hydra.utils.instantiate(cfg.trainer.init, net=net, data_module=dm)
            engine.fit()
    """
    files = _hydra_project(run=run, trainer=trainer)
    files["configs/trainer/ensemble.yaml"] = "init:\n  _target_: trainer.Engine\n"
    files["src/models.py"] = MODELS.replace(
        "x, edge_index, batch = data.x, data.edge_index, data.batch\n            return global_add_pool("
        "self.conv(x, edge_index), batch)",
        "h = self.conv(data.x, data.edge_index)\n            return global_mean_pool(h, data.batch)").replace(
        "global_add_pool", "global_mean_pool")
    lines = gnn007(write_project(tmp_path, files))
    assert [line.split(" ")[0] for line in lines] == ["src/run.py:8:11:"], lines


def test_valid_hydra_trainer_full_batch_model(tmp_path):
    # the model reads no per-graph structure (one graph, node level): nothing says the batches vary
    assert gnn007(write_project(tmp_path, _hydra_project(model="NodeGCN"))) == []


def test_valid_hydra_trainer_dynamic(tmp_path):
    run = RUN.replace("torch.compile(model)", "torch.compile(model, dynamic=True)")
    assert gnn007(write_project(tmp_path, _hydra_project(run=run))) == []


EVAL = """\
    import torch
    from src.data import build_datamodule
    from src.models import GIN


    def evaluate(cfg, paths):
        dm = build_datamodule(cfg)
        test_loader = dm.test_dataloader()
        models = []
        for path in paths:
            model = torch.compile(GIN(64))
            model.load_state_dict(torch.load(path))
            models.append(model)
        for x, targets in test_loader:
            preds = torch.stack([model(x) for model in models]).mean(0)
            print(torch.nn.functional.mse_loss(preds, targets))
"""


def _eval_project(evaluate: str = EVAL) -> dict:
    return {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "src/__init__.py": "",
        "src/models.py": MODELS,
        "src/data.py": "def build_datamodule(cfg):\n    return cfg.dm\n",
        "evaluate.py": evaluate,
    }


def test_local_loop_over_a_datamodule_loader_of_an_imported_graph_model(tmp_path):
    lines = gnn007(write_project(tmp_path, _eval_project()))
    assert [line.split(" ")[0] for line in lines] == ["evaluate.py:11:17:"], lines
    assert "batches of a loader built elsewhere" in lines[0] and "`GIN.forward` reads" in lines[0]


def test_local_loop_over_a_loader_parameter_of_a_local_graph_model(tmp_path):
    # another spelling: the model class in the same file, the loader a parameter no caller here binds,
    # the batch handed straight to the compiled model
    evaluate = """\
        import torch
        from torch_geometric.nn import global_max_pool


        class Readout(torch.nn.Module):
            def forward(self, graph):
                return global_max_pool(graph.x, graph.batch)


        def score(val_loader):
            net = torch.compile(Readout())
            for graph, label in val_loader:
                net(graph)
    """
    lines = gnn007(write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "score.py": evaluate}))
    assert [line.split(" ")[0] for line in lines] == ["score.py:11:11:"], lines


def test_valid_local_loop_full_batch_model(tmp_path):
    assert gnn007(write_project(tmp_path, _eval_project(EVAL.replace("GIN", "NodeGCN")))) == []


def test_valid_local_loop_not_a_loader(tmp_path):
    # samples another file returns, neither named like a loader nor a data module's loader: nothing to guess from
    evaluate = EVAL.replace("test_loader", "samples").replace("dm.test_dataloader()", "dm.samples()")
    assert gnn007(write_project(tmp_path, _eval_project(evaluate))) == []


LIT_SPLIT = """\
    import torch
    from lightning import LightningModule


    class Lit(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            return self.net(batch.x, batch.edge_index).sum()

        def validation_step(self, batch, batch_idx):
            for graph in SPLIT:
                self.log("norm", self.net(graph.x, graph.edge_index).norm())

        def setup(self, stage):
            if stage == "fit":
                self.net = torch.compile(self.net)
"""


def _lit_lines(tmp_path, split: str) -> list[str]:
    root = write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n",
                                    "lit.py": LIT_SPLIT.replace("SPLIT", split)})
    return gnn007(root)


def test_batch_split_into_graphs_pyg(tmp_path):
    # heldout15 spatial-augmentations: `graphs = batch.to_data_list()` in a step: a batch of several graphs
    lines = _lit_lines(tmp_path, "batch.to_data_list()")
    assert [line.split(" ")[0] for line in lines] == ["lit.py:19:24:"], lines
    assert "batch.to_data_list" in lines[0]


def test_batch_split_into_graphs_by_index(tmp_path):
    # another spelling: one graph at a time, `batch.get_example(i)` over `range(batch.num_graphs)`... by
    # the example getter alone
    lines = _lit_lines(tmp_path, "(batch.get_example(i) for i in range(8))")
    assert [line.split(" ")[0] for line in lines] == ["lit.py:19:24:"], lines


def test_valid_batch_not_split(tmp_path):
    # a full-batch module (one graph) reads no per-graph structure: static
    assert _lit_lines(tmp_path, "[batch]") == []


def test_imported_trainer_class_fed_imported_graph_model(tmp_path):
    # the same hand-off without Hydra: the trainer class and the model class imported by name
    run = """\
        import torch
        from models import GIN
        from trainer import Ensemble


        def main(dm):
            model = torch.compile(GIN(64))
            Ensemble([model], dm, "cuda").train(3)
    """
    files = _hydra_project(run=run)
    lines = gnn007(write_project(tmp_path, files))
    assert [line.split(" ")[0] for line in lines] == ["src/run.py:7:13:"], lines


def test_valid_imported_trainer_class_fed_full_batch_model(tmp_path):
    run = """\
        import torch
        from models import NodeGCN
        from trainer import Ensemble


        def main(dm):
            model = torch.compile(NodeGCN(64))
            Ensemble([model], dm, "cuda").train(3)
    """
    assert gnn007(write_project(tmp_path, _hydra_project(run=run))) == []
