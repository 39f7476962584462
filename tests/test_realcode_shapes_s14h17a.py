"""Shapes from heldout17 (s14h17a): an opt-in constructor switch read in a short-circuit, a vendored
``DataLoader``'s fresh batch, a mask selecting from a name bound to a keyed batch field.

Each shape is tested in two spellings (another file layout, another name, a method instead of a
function), and with the variant that must keep the finding.
"""
from __future__ import annotations

from tests.project_files import finding_keys

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

# -- 1. `torch._assert(not self.symmetric or torch.equal(x, y))`: a switch no construction turns on --------
OPS = """
import torch
from torch import nn


def _n_paths(l_max, symmetric=False):
    return l_max if symmetric else 2 * l_max


class PlainProduct(nn.Module):
    def __init__(self, l_max, symmetric=False):
        super().__init__()
        self.symmetric = symmetric
        self.n = _n_paths(l_max, symmetric=symmetric)

    def forward(self, x, y):
        torch._assert(not self.symmetric or torch.equal(x, y), "x == y")
        return x * y


class WeightedProduct(nn.Module):
    def __init__(self, l_max, symmetric=False):
        super(WeightedProduct, self).__init__()
        self.symmetric = symmetric
        self.n = _n_paths(l_max, symmetric=symmetric)

    def forward(self, x, y):
        torch._assert(not self.symmetric or torch.equal(x, y), "x == y")
        return x * y
"""
MODEL = """
from torch import nn
from demo.ops import PlainProduct, WeightedProduct


class Net(nn.Module):
    def __init__(self, l_max, symmetric=True):
        super().__init__()
        self.basis = PlainProduct(l_max, symmetric=symmetric)
        self.conv = WEIGHTED

    def forward(self, x):
        return self.conv(self.basis(x, x), x)
"""
TRAIN = """
import torch
from demo.model import Net

model = torch.compile(Net(2, symmetric=True))
"""
PLAIN = "demo/ops.py:17:45: GNN001"
WEIGHTED = "demo/ops.py:28:45: GNN001"


def _products(tmp_path, weighted: str) -> list:
    return finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/ops.py": OPS,
                                   "demo/model.py": MODEL.replace("WEIGHTED", weighted), "demo/train.py": TRAIN})


def test_a_switch_nothing_turns_on_guards_its_check_in_an_or(tmp_path):
    # the same keyword handed to another class (`PlainProduct(..., symmetric=...)`) and to a local helper,
    # and `super(WeightedProduct, self)`, do not turn WeightedProduct's switch on
    assert _products(tmp_path, "WeightedProduct(l_max)") == [PLAIN]


def test_a_construction_passing_the_switch_keeps_the_check(tmp_path):
    assert _products(tmp_path, "WeightedProduct(l_max, symmetric=symmetric)") == [PLAIN, WEIGHTED]
    assert _products(tmp_path / "pos", "WeightedProduct(l_max, True)") == [PLAIN, WEIGHTED]


RADIAL = """
import torch
from torch import nn

REGISTRY = {}


def register(name):
    def wrap(cls):
        REGISTRY[name] = cls
        return cls
    return wrap


DECORATOR
class Radial(nn.Module):
    def __init__(self, n, *, validate: bool = False):
        super(Radial, self).__init__()
        self.validate = validate

    def _check(self, r):
        assert not self.validate or bool((r >= 0).all()), "negative distance"

    def forward(self, r):
        self._check(r)
        return r * 2
"""
NET = """
from torch import nn
from pkg.nn.radial import Radial


class Envelope(nn.Module):
    def __init__(self, validate=False):
        super().__init__()
        self.validate = validate

    def forward(self, r):
        return r


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.radial = RADIAL
        self.env = Envelope(validate=True)

    def forward(self, r):
        AFTER
        return self.env(self.radial(r))
"""
RUN = """
import torch
from pkg.nn.net import Net

net = torch.compile(Net(4))
"""
CHECK = "pkg/nn/radial.py:22:37: GNN001"


def _radial(tmp_path, radial="Radial(n)", decorator="", after="pass") -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": PYPROJECT.replace("demo", "pkg"), "pkg/__init__.py": "", "pkg/nn/__init__.py": "",
        "pkg/nn/radial.py": RADIAL.replace("DECORATOR", decorator),
        "pkg/nn/net.py": NET.replace("RADIAL", radial).replace("AFTER", after), "pkg/run.py": RUN})


def test_a_keyword_only_switch_in_an_assert_of_a_helper_method(tmp_path):
    # another class's `self.validate = validate` and `Envelope(validate=True)` leave Radial's switch off
    assert _radial(tmp_path) == []


def test_the_switch_turned_on_keeps_the_check(tmp_path):
    assert _radial(tmp_path, radial="Radial(n, validate=True)") == [CHECK]
    assert _radial(tmp_path / "set", after="self.radial.validate = True") == [CHECK]


def test_a_registered_class_is_on_wherever_the_switch_is_named(tmp_path):
    # a registry may build it by another name: any file naming the keyword may turn it on
    assert _radial(tmp_path, decorator='@register("radial")') == [CHECK]


# -- 2. a vendored `DataLoader` collates on the host: reads before the move sync nothing ---------------------
LOADER = """
import torch.utils.data


class DataLoader(torch.utils.data.DataLoader):
    def __init__(self, dataset, batch_size=1, shuffle=False, **kwargs):
        super().__init__(dataset, batch_size, shuffle, collate_fn=self.collate, **kwargs)

    @staticmethod
    def collate(items):
        return items
"""
TRAINER = """
import torch
from proj.utils.loader import DataLoader


class Trainer:
    def __init__(self, model, device):
        self.model = torch.compile(model)
        self.device = device
        self.optimizer = torch.optim.Adam(model.parameters())

    def _train_step(self, batch):
        loss = self.model(batch).sum()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()

    def fit(self, dataset, epochs):
        train_dl = DataLoader(dataset, batch_size=32, shuffle=True, pin_memory=True)
        for epoch in range(epochs):
            n_atoms = 0
            for batch in train_dl:
                n_atoms += batch.n_atoms.sum().item()
                self._train_step(batch.to(self.device))
"""
EVALUATE = """
import torch
from proj.utils import loader as L


def train(model, dataset, device):
    model = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dl = L.DataLoader(dataset, batch_size=64LOADER_ARGS)
    total = 0
    for i, graph in enumerate(dl):
        MOVE
        total += graph.num_nodes.max().item()
        loss = model(graph.to(device)).sum()
        loss.backward()
        opt.step()
    return total
"""


def _loaders(tmp_path, loader_args="", move="pass") -> list:
    return finding_keys(tmp_path, {
        "pyproject.toml": PYPROJECT.replace("demo", "proj"), "proj/__init__.py": "", "proj/utils/__init__.py": "",
        "proj/utils/loader.py": LOADER, "proj/trainer.py": TRAINER,
        "proj/evaluate.py": EVALUATE.replace("LOADER_ARGS", loader_args).replace("MOVE", move)})


def test_a_vendored_loader_batch_is_read_on_the_host_before_it_moves(tmp_path):
    # a method (`self._train_step(batch.to(...))`) and a function (`model(graph.to(device))`), the class
    # imported by name and through its module
    assert _loaders(tmp_path) == []


def test_a_moved_batch_or_a_loader_given_a_device_keeps_the_sync(tmp_path):
    assert _loaders(tmp_path, move="graph = graph.to(device)") == ["proj/evaluate.py:13:18: GNN013"]
    assert _loaders(tmp_path / "dev", loader_args=", device=device") == ["proj/evaluate.py:13:18: GNN013"]


# -- 3. GNN008: a mask selecting from a name bound to a keyed field of the batch ------------------------------
REPRESENTATION = """
import torch
from torch import nn


class Representation(nn.Module):
    def __init__(self, r_cutoff: float = 5.0):
        super().__init__()
        self.r_cutoff = r_cutoff

    def forward(self, graph):
        edge_index, vectors, lengths = (graph["edge_index"], graph["vectors"], graph["lengths"])
        idx_i, idx_j = edge_index[0, :], edge_index[1, :]
        cutoff_mask = lengths.squeeze() <= self.r_cutoff
        lengths = lengths[cutoff_mask]
        idx_i = idx_i[cutoff_mask]
        return lengths, idx_i, idx_j, vectors
"""
PAIR = """
import torch
from torch import nn


class Repulsion(nn.Module):
    def energy(self, data, cutoff):
        dist = data["dist"].squeeze(-1)
        keep = dist < cutoff
        return (1.0 / dist[keep]).sum()

    def forward(self, data):
        return self.energy(data, 3.0)


class Selector(nn.Module):
    def forward(self, data, mask):
        return data[mask]
"""
COMPILE = """
import torch
from demo.representation import Representation
from demo.pair import Repulsion, Selector

rep = torch.compile(Representation())
pair = torch.compile(Repulsion())
sel = torch.compile(Selector())
"""


def test_a_mask_selects_from_a_name_bound_to_a_batch_field(tmp_path):
    keys = finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "",
                                   "demo/representation.py": REPRESENTATION, "demo/pair.py": PAIR,
                                   "demo/compile.py": COMPILE})
    # a tuple-unpacked field and a slice of one (forward); `.squeeze()` of a field (a method); a batch
    # parameter indexed by a mask stays unreported
    assert keys == ["demo/pair.py:10:23: GNN008", "demo/representation.py:15:19: GNN008",
                    "demo/representation.py:16:17: GNN008"]


# -- 4. modules a builder appends to a list it hands the compiled class, run by a loop in its forward --------
TERMS = """
import torch
from torch import nn


class Repulsion(nn.Module):
    def forward(self, dist, out):
        keep = dist < 2.0
        return out + (1.0 / dist[keep]).sum()


class Dispersion(nn.Module):
    def forward(self, dist, out):
        return out - dist.pow(-6).sum()
"""
NETWORK = """
import torch
from torch import nn
from demo.terms import Repulsion, Dispersion


class Network(nn.Module):
    def __init__(self, encoder, terms):
        super().__init__()
        self.encoder = encoder
        self.terms = STORED

    def forward(self, dist):
        out = self.encoder(dist).sum()
        for term in self.terms:
            out = term(dist, out)
        return out


def build(config):
    terms = EMPTY
    if config["repulsion"]:
        terms.append(Repulsion())
    terms.append(Dispersion())
    return Network(nn.Linear(1, 1), CALL)
"""
RUNNER = """
import torch
from demo.network import build

model = torch.compile(build({"repulsion": True}))
"""


def _terms(tmp_path, stored="terms", empty="nn.ModuleList([])", call="terms=terms") -> list:
    return finding_keys(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/terms.py": TERMS,
                                   "demo/network.py": NETWORK.replace("STORED", stored).replace("EMPTY", empty)
                                   .replace("CALL", call), "demo/runner.py": RUNNER})


def test_modules_appended_to_a_handed_module_list_run_compiled(tmp_path):
    assert _terms(tmp_path) == ["demo/terms.py:9:29: GNN008"]
    # a plain list handed by position and wrapped in the class (`self.terms = nn.ModuleList(terms)`)
    assert _terms(tmp_path / "plain", stored="nn.ModuleList(terms)", empty="[]", call="terms") \
        == ["demo/terms.py:9:29: GNN008"]


def test_a_list_the_builder_never_fills_runs_nothing(tmp_path):
    assert _terms(tmp_path, call="nn.ModuleList()") == []


# -- 5. a Hydra config naming the class keeps its switches maybe-on, also in a checkout with no root marker ----
HYDRA_MODELS = """
import torch
from torch_geometric.nn import GCNConv, LayerNorm


class DeepGCN(torch.nn.Module):
    def __init__(self, hidden=64, use_layer_norm=False):
        super(DeepGCN, self).__init__()
        self.conv = GCNConv(hidden, hidden)
        self.bn = torch.nn.BatchNorm1d(hidden)
        self.use_layer_norm = use_layer_norm
        if use_layer_norm:
            self.ln = LayerNorm(hidden)

    def forward(self, x, edge_index, batch):
        x = self.conv(x, edge_index)
        return self.bn(x) if not self.use_layer_norm else self.ln(x, batch)
"""
HYDRA_TRAIN = """
import hydra
import torch


@hydra.main(config_path="../configs", config_name="train")
def main(cfg):
    model = torch.compile(hydra.utils.instantiate(cfg.model.init))
"""
HYDRA_CONFIG = """
init:
  _target_: models.DeepGCN
  hidden: 64
  use_layer_norm: false
"""


def test_a_config_built_class_keeps_its_switch_without_a_root_marker(tmp_path):
    root = tmp_path / "checkout"  # no pyproject.toml, no .git: the configs sit next to src/
    keys = finding_keys(root, {"src/models.py": HYDRA_MODELS, "src/train.py": HYDRA_TRAIN,
                               "configs/model/gcn.yaml": HYDRA_CONFIG,
                               "configs/train.yaml": "defaults:\n  - model: gcn\n"})
    assert "src/models.py:17:59: GNN009" in keys
