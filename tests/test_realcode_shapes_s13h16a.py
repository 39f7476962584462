"""s13h16a: heldout16 graphland (a DGL full-batch benchmark: 0 of 27 found on main).

- ``self.register_buffer("numerical_features_mask", numerical_features_mask)`` of an ``__init__`` parameter:
  torch takes only a tensor there, so ``x[:, self.numerical_features_mask]`` in the compiled forward is a
  boolean-mask read (GNN008; semantic/model.py ``ClassInfo.registered``, kinds.py).
- ``train_fn = get_train_fn(regime)`` with ``get_train_fn`` imported from the file defining the training
  functions it picks and returns: ``train_fn(model=model, ...)`` hands the compiled model to each of them
  (the ``returns`` fact with ``=name`` entries, callables.py; returned_functions.py ``_told_picks``).
- ``train_fn(model=model, dataset=dataset)`` with ``dataset = Dataset(...)``: the training file imports no
  ``Dataset``, yet calls ``dataset.compute_metrics(preds)`` every step; the calling file tells it the class
  of the other arguments (``arg_classes`` facts, semantic/arg_classes.py), so the metric method's syncs are
  per-step syncs (GNN013) in the dataset's file; also when a class built with both stores it
  (``Trainer(model, data)``, ``self.data.compute_metrics(out)``).
Each shape is tested in two spellings, each INVALID with a VALID twin."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_keys, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

# --- register_buffer -------------------------------------------------------------------------------
BUFFER_MODEL = """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self, dim, numerical_mask, use_plr=False):
            super().__init__()
            self.use_plr = use_plr
            if use_plr:
                self.register_buffer("numerical_mask", REGISTERED)
            self.lin = nn.Linear(dim, dim)

        def forward(self, graph, x):
            if self.use_plr:
                x_num = x[:, self.numerical_mask]
                x = torch.cat([x_num, x[:, ~self.numerical_mask]], dim=1)
            return self.lin(x)


    def get_model(args, mask):
        model = Net(args.dim, mask, use_plr=args.plr)
        if args.compile:
            model.compile(dynamic=False)
        return model
"""


def _keys(tmp_path, files: dict) -> list:
    return finding_keys(write_project(tmp_path, {"pyproject.toml": PYPROJECT, **files}))


def test_a_registered_buffer_of_a_parameter_is_a_tensor_mask(tmp_path):
    keys = _keys(tmp_path, {"model.py": BUFFER_MODEL.replace("REGISTERED", "numerical_mask")})
    assert "model.py:15:21: GNN008" in keys and "model.py:16:35: GNN008" in keys, keys


def test_a_buffer_registered_in_another_method(tmp_path):
    # another spelling: registered in a helper method from its parameter, the compile by torch.compile
    model = BUFFER_MODEL.replace('                self.register_buffer("numerical_mask", REGISTERED)\n',
                                 "                self._keep(numerical_mask)\n") \
        .replace("        def forward(", "        def _keep(self, cols):\n"
                 "            self.register_buffer(\"numerical_mask\", cols)\n\n"
                 "        def forward(") \
        .replace("            model.compile(dynamic=False)", "            model = torch.compile(model)")
    keys = _keys(tmp_path, {"model.py": model})
    assert "model.py:18:21: GNN008" in keys, keys


def test_a_plain_attribute_of_an_unknown_parameter_stays_unknown(tmp_path):
    # VALID: `self.numerical_mask = numerical_mask` may hold a list of column indices
    model = BUFFER_MODEL.replace('self.register_buffer("numerical_mask", REGISTERED)',
                                 "self.numerical_mask = numerical_mask")
    assert not [k for k in _keys(tmp_path, {"model.py": model}) if "GNN008" in k]


def test_a_buffer_registered_as_none_is_no_tensor(tmp_path):
    # VALID: a `None` placeholder buffer tells nothing
    model = BUFFER_MODEL.replace("REGISTERED", "None")
    assert not [k for k in _keys(tmp_path, {"model.py": model}) if "GNN008" in k]


# --- an imported factory returning its file's training functions; the dataset's class told ------------
LOOPS = """\
    import torch


    def train_step_a(model, dataset, optimizer):
        preds = model(dataset.graph, dataset.features)
        loss = dataset.loss_fn(preds[dataset.train_mask], dataset.targets[dataset.train_mask])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


    @torch.no_grad()
    def evaluate_a(model, dataset):
        preds = model(dataset.graph, dataset.features)
        return dataset.compute_metrics(preds)


    def train_a(model, dataset, args):
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
        for step in range(args.max_steps):
            train_step_a(model=model, dataset=dataset, optimizer=optimizer)
            metrics = evaluate_a(model=model, dataset=dataset)
        return metrics


    def train_b(model, dataset, args):
        raise NotImplementedError


    def get_train_fn(regime):
        PICK
"""

PICK_IF = """if regime == "full":
            return train_a
        elif regime == "mini":
            return train_b
        else:
            raise ValueError(regime)"""

DATASET = """\
    import torch


    class Dataset:
        def __init__(self, name, device):
            self.graph = torch.load(name).to(device)
            self.targets = self.graph.ndata["y"]
            self.train_mask = self.graph.ndata["train"]
            self.val_mask = self.graph.ndata["val"]

        def compute_metrics(self, preds):
            preds = preds.argmax(dim=1)
            train = (preds[self.train_mask] == self.targets[self.train_mask]).float().mean().item()
            val = (preds[self.val_mask] == self.targets[self.val_mask]).float().mean().item()
            return {"train": train, "val": val}
"""

MAIN = """\
    import torch
    from dataset import Dataset
    from model import get_model
    from train_loops import get_train_fn


    def main(args):
        dataset = Dataset(name=args.dataset, device=args.device)
        train_fn = get_train_fn(args.regime)
        model = get_model(args, dataset)
        results = train_fn(model=model, dataset=dataset, args=args)
        print(results)
"""

MODEL = """\
    import torch
    from torch import nn


    def get_model(args, dataset):
        model = nn.Linear(args.dim, args.out).to(args.device)
        if args.compile:
            model.compile(mode="default")
        return model
"""


def _project(tmp_path, *, pick=PICK_IF, loops=LOOPS, main=MAIN, model=MODEL, dataset=DATASET):
    return write_project(tmp_path, {"pyproject.toml": PYPROJECT, "train_loops.py": loops.replace("PICK", pick),
                                    "main.py": main, "model.py": model, "dataset.py": dataset})


def test_the_metric_method_of_the_handed_dataset_syncs_every_step(tmp_path):
    root = _project(tmp_path)
    keys = finding_keys(root)
    assert "dataset.py:13:17: GNN013" in keys and "dataset.py:14:15: GNN013" in keys, keys
    # the dataset's file alone knows it too (the project's facts)
    assert_one_file_agrees(root, "dataset.py", nonempty=True)


def test_a_conditional_pick_positional_hand_off_and_a_module_import(tmp_path):
    # another spelling: `return a if c else b`, the factory through `import train_loops as tl`, the
    # dataset handed positionally, its metric method called directly in the step loop
    loops = LOOPS.replace("            metrics = evaluate_a(model=model, dataset=dataset)\n",
                          "            metrics = dataset.compute_metrics(model(dataset.graph, dataset.features))\n")
    main = MAIN.replace("from train_loops import get_train_fn", "import train_loops as tl") \
        .replace("get_train_fn(args.regime)", "tl.get_train_fn(args.regime)") \
        .replace("train_fn(model=model, dataset=dataset, args=args)", "train_fn(model, dataset, args)")
    keys = finding_keys(_project(tmp_path, pick='return train_a if regime == "full" else train_b',
                                 loops=loops, main=main))
    assert "dataset.py:13:17: GNN013" in keys, keys


def test_a_factory_returning_something_else_tells_nothing(tmp_path):
    # VALID: one branch returns what a call builds, so the picks are not known
    keys = finding_keys(_project(tmp_path, pick='return train_a if regime == "full" else make_trainer(regime)'))
    assert not [k for k in keys if k.startswith("dataset.py") or k.startswith("train_loops.py")], keys


def test_metrics_read_once_after_the_loop_are_no_per_step_sync(tmp_path):
    # VALID: the handed dataset's metrics computed once, after the training loop
    loops = LOOPS.replace("            metrics = evaluate_a(model=model, dataset=dataset)\n        return metrics\n",
                          "        return evaluate_a(model=model, dataset=dataset)\n")
    keys = finding_keys(_project(tmp_path, loops=loops))
    assert not [k for k in keys if k.startswith("dataset.py")], keys


def test_nothing_compiled_nothing_per_step(tmp_path):
    # VALID: the program never compiles (policy: a per-step sync is a compile hazard only when compiled)
    keys = finding_keys(_project(tmp_path, model=MODEL.replace("        if args.compile:\n"
                                                               "            model.compile(mode=\"default\")\n", "")))
    assert not [k for k in keys if k.startswith("dataset.py")], keys


TRAINER = """\
    import torch


    class Trainer:
        def __init__(self, model, data, args):
            self.model = model
            self.data = data
            self.optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
            self.steps = args.steps

        def fit(self):
            for step in range(self.steps):
                out = self.model(self.data.graph, self.data.features)
                loss = self.data.loss(out)
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
                scores = self.data.compute_metrics(out.detach())
            return scores
"""

TRAINER_MAIN = """\
    import torch
    from dataset import Dataset
    from trainer import Trainer


    def main(args):
        data = Dataset(args.name, args.device)
        model = torch.compile(torch.nn.Linear(4, 2), dynamic=False)
        Trainer(model, data, args).fit()
"""


def test_a_trainer_class_storing_the_handed_dataset(tmp_path):
    # another file: a class built with the compiled model and the dataset, calling the metric every step
    root = write_project(tmp_path, {"pyproject.toml": PYPROJECT, "trainer.py": TRAINER, "main.py": TRAINER_MAIN,
                                    "dataset.py": DATASET})
    keys = finding_keys(root)
    assert "dataset.py:13:17: GNN013" in keys, keys


def test_a_trainer_class_of_an_uncompiled_model_tells_nothing(tmp_path):
    # VALID: the same classes, the model never compiled
    root = write_project(tmp_path, {"pyproject.toml": PYPROJECT, "trainer.py": TRAINER, "dataset.py": DATASET,
                                    "main.py": TRAINER_MAIN.replace("torch.compile(torch.nn.Linear(4, 2), dynamic=False)",
                                                                    "torch.nn.Linear(4, 2)")})
    assert not [k for k in finding_keys(root) if k.startswith("dataset.py")]
