"""heldout15 shapes (s13h15): lists of compiled models, filled and read in other spellings.

- Zzanis/02456-g82-dl-project: ``models[i] = torch.compile(model)`` in a loop over the list
  (an item store, not ``append`` or a literal), the list then handed to a config-built
  trainer; the list was filled with ``hydra.utils.instantiate(cfg.model.init)`` models, so
  the loop name's classes are the configs' (lower-case class names too: ``advanced_GCN``);
- victorwinther/Semi-supervised-learning-for-drug-discovery: the trainers read the list in
  ``__init__`` -- ``self.student = models[0].to(device)``, ``self.model1, self.model2 =
  models``, ``self.models = [m.to(device) for m in models]`` -- and run those attributes in
  training and evaluation loops; ``self.model = model.to(device)`` of a handed model too.

Each shape in two spellings (a function / a method, a Hydra-built / an imported trainer, a
list / a tuple unpacking); each INVALID case has a VALID twin."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"


def _lines(tmp_path, files: dict) -> list:
    root = write_project(tmp_path, {"pyproject.toml": PYPROJECT, **files})
    out = finding_lines(run(["check", ".", "--no-cache", "--output-format", "concise"], root).output)
    return sorted(line.split(" ")[0].rsplit(":", 2)[0] + " " + line.split(" ")[1] for line in out)


TRAINER = """\
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, models, datamodule, device="cuda"):
            READ
            self.device = device
            self.optimizer = torch.optim.Adam(self.models[0].parameters())
            self.loader = datamodule.train_dataloader()
            self.val_loader = datamodule.val_dataloader()

        def _evaluate(self, dataloader):
            losses = []
            with torch.no_grad():
                for x, y in dataloader:
                    preds = [model(x) for model in self.models]
                    losses.append(F.mse_loss(preds[0], y).item())
            return sum(losses)

        def train(self, epochs):
            for epoch in range(epochs):
                for x, y in self.loader:
                    self.optimizer.zero_grad()
                    loss = sum(F.mse_loss(model(x), y) for model in self.models)
                    loss.backward()
                    self.optimizer.step()
                    print(loss.item())
                self._evaluate(self.val_loader)
"""
# the trainer's lines: 18 (evaluation .item()), 28 (training .item())
MODELS = """\
    import torch
    from torch_geometric.nn import GCNConv, global_mean_pool


    class advanced_GCN(torch.nn.Module):
        def __init__(self, hidden=16):
            super().__init__()
            self.conv = GCNConv(hidden, hidden, add_self_loops=False)

        def forward(self, data):
            x = self.conv(data.x, data.edge_index)
            return global_mean_pool(x, data.batch)
"""
HYDRA_RUN = """\
    import hydra
    import torch


    @hydra.main(config_path="../configs", config_name="run", version_base=None)
    def main(cfg):
        models = []
        for i in range(cfg.num_models):
            models.append(hydra.utils.instantiate(cfg.model.init).to("cuda"))
        if cfg.compile_model:
            for i, model in enumerate(models):
                STORE
        trainer = hydra.utils.instantiate(cfg.trainer.init, models=models, datamodule=None)
        trainer.train(10)
"""


def _hydra_project(store: str, read: str = "self.models = models") -> dict:
    return {"demo/__init__.py": "", "demo/trainer.py": TRAINER.replace("READ", read),
            "demo/models.py": MODELS, "demo/run.py": HYDRA_RUN.replace("STORE", store),
            "configs/run.yaml": "defaults:\n  - model: gcn\n  - trainer: ens\ncompile_model: true\nnum_models: 2\n",
            "configs/model/gcn.yaml": "init:\n  _target_: demo.models.advanced_GCN\n  hidden: 16\n",
            "configs/trainer/ens.yaml": "init:\n  _target_: demo.trainer.Trainer\n"}


def test_an_item_store_into_a_list_handed_to_a_hydra_built_trainer(tmp_path):
    found = _lines(tmp_path, _hydra_project("models[i] = torch.compile(model)"))
    assert "demo/trainer.py:28 GNN013" in found, found  # per training step
    assert "demo/trainer.py:18 GNN013" in found, found  # per evaluation batch
    # the list holds the config's models: a lower-case `_target_` class is compiled too
    assert "demo/models.py:12 GNN009" in found, found


def test_a_list_whose_items_are_stored_elsewhere_is_not_compiled(tmp_path):
    # VALID twin: the compiled copies go into another list; the trainer gets the eager ones
    found = _lines(tmp_path, _hydra_project("compiled = [None] * len(models); compiled[i] = torch.compile(model)"))
    assert not any(line.startswith("demo/trainer.py:") for line in found), found


# the trainer reading the items of the list it is handed (another spelling of `self.models = models`)
STUDENT = """\
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, models, datamodule, device="cuda"):
            READ
            self.device = device
            self.optimizer = torch.optim.Adam(self.student.parameters())
            self.loader = datamodule.train_dataloader()
            self.val_loader = datamodule.val_dataloader()

        def _evaluate(self, dataloader):
            losses = []
            with torch.no_grad():
                for x, y in dataloader:
                    x, y = x.to(self.device), y.to(self.device)
                    losses.append(F.mse_loss(self.student(x), y).item())
            return sum(losses)

        def train(self, epochs):
            for epoch in range(epochs):
                for x, y in self.loader:
                    self.optimizer.zero_grad()
                    loss = F.mse_loss(self.student(x), y)
                    loss.backward()
                    self.optimizer.step()
                    print(loss.item())
                self._evaluate(self.val_loader)
"""


def _student_project(read: str, store: str = "models[i] = torch.compile(model)") -> dict:
    files = _hydra_project(store)
    files["demo/trainer.py"] = STUDENT.replace("READ", read)
    return files


def test_the_items_a_trainer_reads_from_a_handed_list(tmp_path):
    for read in ("self.student = models[0].to(device)",  # an item, through .to(device)
                 "self.student, self.teacher = models",  # unpacked
                 "self.students = [m.to(device) for m in models]; self.student = self.students[0]"):
        found = _lines(tmp_path / str(abs(hash(read))), _student_project(read))
        assert "demo/trainer.py:28 GNN013" in found, (read, found)
        assert "demo/trainer.py:18 GNN013" in found, (read, found)  # evaluation loop over a parameter


def test_items_of_a_list_the_trainer_builds_itself_are_not_compiled(tmp_path):
    # VALID twin: `self.student` is a new model the trainer builds, not an item of the handed list
    found = _lines(tmp_path, _student_project("self.names = [type(m).__name__ for m in models]; "
                                              "self.student = torch.nn.Linear(4, 1).to(device)"))
    assert not any(line.startswith("demo/trainer.py:") for line in found), found


# an imported trainer handed one model, stored through .to(device); a method compiling list items
PLAIN_RUN = """\
    import torch
    from demo.models import advanced_GCN
    from demo.trainer import Trainer


    def main(datamodule):
        model = torch.compile(advanced_GCN())
        trainer = Trainer(MODEL, datamodule=datamodule)
        trainer.train(10)
"""


def test_a_handed_model_stored_through_to_device(tmp_path):
    files = _hydra_project("pass")
    files["demo/run.py"] = PLAIN_RUN.replace("MODEL", "model")
    files["demo/trainer.py"] = STUDENT.replace("def __init__(self, models,", "def __init__(self, model,").replace(
        "READ", "self.student = model.to(device)")
    found = _lines(tmp_path / "a", files)
    assert "demo/trainer.py:28 GNN013" in found, found
    assert "demo/trainer.py:18 GNN013" in found, found
    # VALID twin: the eager model handed over
    files["demo/run.py"] = PLAIN_RUN.replace("MODEL", "advanced_GCN()")
    found = _lines(tmp_path / "b", files)
    assert not any(line.startswith("demo/trainer.py:") for line in found), found


ENSEMBLE = """\
    import torch
    from torch_geometric.nn import global_add_pool


    class GIN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)

        def forward(self, x, batch):
            return global_add_pool(self.lin(x), batch)


    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 1)

        def forward(self, x, batch):
            return global_add_pool(self.lin(x), batch)


    class Ensemble:
        def __init__(self, loader, compile_models=True):
            self.models = [GIN(), MLP()]
            self.loader = loader
            if compile_models:
                self.compile_all()

        def compile_all(self):
            for i in range(len(self.models)):
                STORE

        def fit(self):
            opt = torch.optim.Adam([p for m in self.models for p in m.parameters()])
            for x, batch, y in self.loader:
                loss = sum(torch.nn.functional.mse_loss(m(x, batch), y) for m in self.models)
                loss.backward()
                opt.step()
                print(loss.item())
"""


def test_a_method_compiling_the_items_of_its_own_list(tmp_path):
    for store in ("self.models[i] = torch.compile(self.models[i])",  # an item store
                  "self.models = [torch.compile(m) for m in self.models]; break"):  # a new list
        found = _lines(tmp_path / str(abs(hash(store))), {"demo/__init__.py": "", "demo/ens.py": ENSEMBLE.replace(
            "STORE", store)})
        assert "demo/ens.py:40 GNN013" in found, (store, found)  # the generator over the list runs them
        # `self.models = [GIN(), MLP()]`: both classes are compiled
        assert "demo/ens.py:11 GNN009" in found and "demo/ens.py:20 GNN009" in found, (store, found)


def test_compiled_copies_kept_apart_from_the_list_the_loop_runs(tmp_path):
    # VALID twin: the compiled copies are kept in another attribute the loop never runs
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/ens.py": ENSEMBLE.replace(
        "STORE", "self.fast[i] = torch.compile(self.models[i])")})
    assert "demo/ens.py:40 GNN013" not in found, found


# -- what a project factory returns, called every step (BoevaLab/spatial-augmentations) ----------
AUGMENT = """\
    import torch
    from torch_geometric.transforms import Compose


    def remove_directed(edge_index):
        ids = (edge_index[0] * 1000 + edge_index[1]).tolist()
        return set(ids)


    class DropEdges:
        def __init__(self, p):
            self.p = p

        def __call__(self, data):
            remove_directed(data.edge_index)
            return data


    class Unused:
        def __call__(self, data):
            print(data.edge_index.tolist())
            return data


    def build_augmentation(p, extra=()):
        transforms = list()
        if p > 0:
            transforms.append(DropEdges(p))
        return Compose(transforms)


    def build_one(p):
        return DropEdges(p)
"""
# AUGMENT: remove_directed's .tolist() is line 6, Unused's line 21
LOOP_RUN = """\
    import torch
    from demo.augment import build_augmentation


    def train(model, loader, opt):
        model = torch.compile(model)
        transform = build_augmentation(0.2)
        for batch in loader:
            batch = batch.to("cuda")
            view = TRANSFORM
            loss = model(view.x, view.edge_index).sum()
            loss.backward()
            opt.step()
"""
TRAINER_RUN = """\
    import torch
    from demo import augment


    class Trainer:
        def __init__(self, model, loader):
            self.model = torch.compile(model)
            self.loader = loader
            self.augment = augment.build_one(0.2)
            self.opt = torch.optim.Adam(model.parameters())

        def fit(self):
            for batch in self.loader:
                view = self.augment(batch.to("cuda"))
                loss = self.model(view.x, view.edge_index).sum()
                loss.backward()
                self.opt.step()
"""


def test_a_factory_result_called_every_step(tmp_path):
    # a Compose of the factory's transforms, called per batch
    found = _lines(tmp_path / "a", {"demo/__init__.py": "", "demo/augment.py": AUGMENT,
                                    "demo/run.py": LOOP_RUN.replace("TRANSFORM", "transform(batch)")})
    assert "demo/augment.py:6 GNN013" in found, found
    assert "demo/augment.py:21 GNN013" not in found, found  # a transform the factory never builds
    # a module's factory returning one transform, stored on self and called per batch
    found = _lines(tmp_path / "b", {"demo/__init__.py": "", "demo/augment.py": AUGMENT, "demo/trainer.py": TRAINER_RUN})
    assert "demo/augment.py:6 GNN013" in found, found


def test_a_factory_result_called_once_is_no_step(tmp_path):
    # VALID twin: the transform runs once, before the loop (the loop runs the model on the raw batches)
    run_py = LOOP_RUN.replace("            view = TRANSFORM\n", "            view = batch\n").replace(
        "        for batch in loader:\n", "        transform(next(iter(loader)).to('cuda'))\n        for batch in loader:\n")
    found = _lines(tmp_path, {"demo/__init__.py": "", "demo/augment.py": AUGMENT, "demo/run.py": run_py})
    assert not any(line.startswith("demo/augment.py:") for line in found), found


# -- a pooling function or module chosen by config, held in an attribute --------------------
POOLED = """\
    import torch
    from torch_geometric.nn import GlobalAttention, global_max_pool, global_mean_pool


    class Net(torch.nn.Module):
        def __init__(self, pooling="max"):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            if pooling == "max":
                self.pool = global_max_pool
            elif pooling == "mean":
                self.pool = global_mean_pool
            else:
                self.pool = GlobalAttention(gate_nn=torch.nn.Linear(4, 1))

        def forward(self, x, batch):
            return self.pool(self.lin(x), batch)


    model = torch.compile(Net())
"""


def test_a_pooling_function_or_module_held_in_an_attribute(tmp_path):
    found = _lines(tmp_path / "a", {"demo/__init__.py": "", "demo/net.py": POOLED})
    assert "demo/net.py:17 GNN009" in found, found
    # VALID twin: a call under `isinstance(self.pool, GlobalAttention)` runs the module (astro-lab)
    guarded = POOLED.replace("return self.pool(self.lin(x), batch)",
                             "if isinstance(self.pool, GlobalAttention):\n"
                             "                return self.pool(self.lin(x), batch)\n"
                             "            return self.lin(x)")
    found = _lines(tmp_path / "c", {"demo/__init__.py": "", "demo/net.py": guarded})
    assert not any(" GNN009" in line for line in found), found
    # VALID twin: every pooling it may hold is given the size
    fixed = POOLED.replace("self.pool(self.lin(x), batch)", "self.pool(self.lin(x), batch, 8)")
    found = _lines(tmp_path / "b", {"demo/__init__.py": "", "demo/net.py": fixed})
    assert "demo/net.py:17 GNN009" not in found, found
