"""A LightningModule whose own code reads the per-graph structure of its batch (heldout9 GCPNet-EMA
``gcpnet_ema_module.py:847``: ``scatter(preds, batch.batch, ...)`` in the steps, ``batch=batch.batch`` in
``forward``) is fed mini-batches of several graphs by whatever trainer fits it, annotated or not
(semantic/batched_graphs.py, asked by lightning_feeds.graph_steps_why):

1. its own submodule compiled in ``setup`` / ``configure_model`` and called by the steps (``self.net``);
   also a submodule of a held model (``self.model.encoder = torch.compile(self.model.encoder)``), run by
   ``self.model.encoder(...)`` or by the holder ``self.model(batch)`` -- not a *method* of a local holder
   class (``self.model.encode``), which runs only called by name;
2. the whole module compiled in another file and handed to ``trainer.fit`` (the ``graph_steps`` fact).

The evidence is mini-batch evidence: ``data.batch`` / ``batch.ptr`` / ``batch.num_graphs`` on what the
method is handed, or a PyG per-graph pool (``global_mean_pool(h, batch)``). A full-batch module on one
graph (Planetoid: ``batch.x``, ``batch.edge_index``, ``batch.train_mask``) stays static; a padded feed
(``T.Pad``) and ``dynamic=True`` are not reported.
"""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

LIT_SETUP = """\
    import torch
    from lightning import LightningModule
    from torch_scatter import scatter


    class Lit(LightningModule):
        def __init__(self, net, compile: bool = True):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            out = self.net(batch.x, batch.edge_index)
            per_graph = scatter(out, READ, dim=0, reduce="mean")
            return (per_graph - batch.y).pow(2).mean()

        def setup(self, stage):
            if self.hparams.compile and stage == "fit":
                self.net = torch.compile(self.net)
"""

LIT_HELD = """\
    import torch
    import pytorch_lightning as pl
    from torch_geometric.nn import global_mean_pool


    class Lit(pl.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self.head = torch.nn.Linear(16, 1)

        def forward(self, data):
            h = CALL
            return self.head(global_mean_pool(h, data.batch))

        def training_step(self, data, batch_idx):
            return self(data).sum()

        def configure_model(self):
            self.model.encoder = torch.compile(self.model.encoder)
"""

LIT_FULL_BATCH = """\
    import torch
    from lightning import LightningModule


    class Lit(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            out = self.net(batch.x, batch.edge_index)
            return torch.nn.functional.cross_entropy(out[batch.train_mask], batch.y[batch.train_mask])

        def setup(self, stage):
            self.net = torch.compile(self.net)
"""

LIT_CLASS = """\
    import torch
    from lightning import LightningModule


    class GraphRegressor(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            return self.net(batch).sum()

        def validation_step(self, batch, batch_idx):
            loss = self.net(batch).sum()
            self.log("val_loss", loss, batch_size=READ)
"""

FIT = """\
    import torch
    from lightning import Trainer
    from pkg.lit import GraphRegressor


    def main(net, dm):
        model = torch.compile(GraphRegressor(net)KWARGS)
        Trainer(max_epochs=3).fit(model, datamodule=dm)
"""


def _lines(root) -> list[str]:
    return sorted(finding_lines(run(["check", "--isolated", "--no-cache", "--select", "GNN007", "."], root).output))


def _one(tmp_path, name: str, text: str) -> list[str]:
    return _lines(write_project(tmp_path / name, {"lit.py": text}))


def test_steps_reading_the_batch_vector_feed_the_submodule_compiled_in_setup(tmp_path):
    for i, read in enumerate(("batch.batch", "batch['ligand'].batch")):
        lines = _one(tmp_path, f"read{i}", LIT_SETUP.replace("READ", read))
        assert [line.split(":")[1] for line in lines] == ["18"], lines
        assert f"reads `{read}` (a batch of several graphs)" in lines[0], lines


def test_a_held_models_submodule_is_fed_through_the_holder_or_by_name(tmp_path):
    for i, call in enumerate(("self.model(data.x, data.edge_index)", "self.model.encoder(data.x, data.edge_index)")):
        lines = _one(tmp_path, f"held{i}", LIT_HELD.replace("CALL", call))
        assert [line.split(":")[1] for line in lines] == ["20"], lines
        assert "`Lit.forward` reads `global_mean_pool(h, data.batch)`" in lines[0], lines


def test_a_method_of_a_local_holder_class_runs_only_called_by_name(tmp_path):
    text = LIT_HELD.replace("CALL", "self.model(data.x, data.edge_index)") + """
    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(16, 16)

        def encoder(self, x, edge_index):
            return self.lin(x)

        def forward(self, x, edge_index):
            return self.lin(x)


    def build():
        return Lit(Holder())
"""
    assert _one(tmp_path, "method", text.replace("self.model = model", "self.model = Holder()")) == []


def test_a_full_batch_module_on_one_graph_is_not_fed_variable_sizes(tmp_path):
    assert _one(tmp_path, "full", LIT_FULL_BATCH) == []


def test_a_padded_feed_or_dynamic_true_is_not_reported(tmp_path):
    padded = LIT_SETUP.replace("READ", "batch.batch").replace(
        "    from torch_scatter import scatter\n",
        "    from torch_scatter import scatter\n    import torch_geometric.transforms as T\n\n    PAD = T.Pad(max_num_nodes=64)\n")
    assert _one(tmp_path, "padded", padded) == []
    dynamic = LIT_SETUP.replace("READ", "batch.batch").replace("torch.compile(self.net)",
                                                               "torch.compile(self.net, dynamic=True)")
    assert _one(tmp_path, "dynamic", dynamic) == []


def test_a_module_fitted_compiled_in_another_file_is_told_by_its_file(tmp_path):
    for i, read in enumerate(("batch.num_graphs", "batch.ptr.numel() - 1")):
        root = write_project(tmp_path / f"fit{i}", {"pkg/__init__.py": "",
                                                     "pkg/lit.py": LIT_CLASS.replace("READ", read),
                                                     "pkg/train.py": FIT.replace("KWARGS", "")})
        lines = _lines(root)
        assert [line.split(":")[:2] for line in lines] == [["pkg/train.py", "7"]], lines
        assert "`GraphRegressor.validation_step` reads" in lines[0], lines
    root = write_project(tmp_path / "fitdyn", {"pkg/__init__.py": "",
                                               "pkg/lit.py": LIT_CLASS.replace("READ", "batch.num_graphs"),
                                               "pkg/train.py": FIT.replace("KWARGS", ", dynamic=True")})
    assert _lines(root) == []
    root = write_project(tmp_path / "fitcfg", {"pkg/__init__.py": "",
                                               "pkg/lit.py": LIT_CLASS.replace("READ", "self.hparams.batch"),
                                               "pkg/train.py": FIT.replace("KWARGS", "")})
    assert _lines(root) == []


# 3. heldout15 miRPVS ``src/train.py:84`` (the lightning-hydra-template): the module comes from
# ``hydra.utils.instantiate(cfg.model)``, is compiled under ``if cfg.get("compile")`` and fitted; its
# ``training_step(batch: Any)`` hands the batch to ``self.model_step(batch: Data)``. The file naming the
# config group is told what the steps of the classes its configs name take (fact_joins.join_config_graph_steps).
LIT_STEP_HELPER = """\
    from typing import Any

    import torch
    from lightning import LightningModule
    from torch_geometric.data import Data


    class SmallLit(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def model_step(self, batch: ANNOTATION):
            return self.net(BODY).sum()

        def training_step(self, batch: Any, batch_idx: int):
            return self.model_step(batch)
"""

HYDRA_TRAIN = """\
    import hydra
    import torch
    from lightning import LightningModule, Trainer


    def train(cfg):
        datamodule = hydra.utils.instantiate(cfg.data)
        model: LightningModule = hydra.utils.instantiate(cfg.model)
        trainer: Trainer = hydra.utils.instantiate(cfg.trainer)
        if cfg.get("compile"):
            model = torch.compile(model)
        trainer.fit(model=model, datamodule=datamodule)
"""


def _hydra(tmp_path, name, annotation, body, target="src.models.lit.SmallLit") -> list[str]:
    root = write_project(tmp_path / name, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "configs/model/small.yaml": f"_target_: {target}\nnet: null\n",
        "src/__init__.py": "", "src/models/__init__.py": "",
        "src/models/lit.py": LIT_STEP_HELPER.replace("ANNOTATION", annotation).replace("BODY", body),
        "src/train.py": HYDRA_TRAIN})
    return _lines(root)


def test_a_config_built_module_whose_step_helper_takes_graph_batches_is_fed_variable_sizes(tmp_path):
    lines = _hydra(tmp_path, "annotated", "Data", "batch.x, batch.edge_index")
    assert [line.split(":")[:2] for line in lines] == [["src/train.py", "11"]], lines
    assert "`SmallLit.model_step` takes `Data` (PyG graph batches) when `" in lines[0], lines
    lines = _hydra(tmp_path, "read", "Any", "batch.x, batch.edge_index, batch.batch")
    assert [line.split(":")[:2] for line in lines] == [["src/train.py", "11"]], lines
    assert "`SmallLit.model_step` reads `batch.batch`" in lines[0], lines


def test_a_config_built_module_on_dense_or_single_graph_batches_is_not(tmp_path):
    assert _hydra(tmp_path, "dense", "Any", "batch['x']") == []
    assert _hydra(tmp_path, "full", "Any", "batch.x, batch.edge_index") == []
    # the config names a class of another project file: its steps are not these
    assert _hydra(tmp_path, "other", "Data", "batch.x, batch.edge_index", target="src.models.other.SmallLit") == []
