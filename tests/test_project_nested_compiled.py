"""Models that contain compiled code below them (semantic/nested_compiled.py): the outer model is not
compiled, one of its submodules is -- ``@torch.compile`` on a submodule's ``forward``, ``self.attn =
torch.compile(Attn(...))`` in ``__init__``, a submodule class picked by a constructor switch passed
down the layers. A loop running the outer model per step drives compiled code (GNN013); the outer
model's own forward stays eager (no compiled-region findings there); a construction leaving the
switch at its false default builds no compiled code. Shapes: heldout14 towards-principled-gts (the
switch chain), heldout13 DyneTrion (ModuleDict entries, ``module.Class(...)`` across three files)."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, whole_tree_lines, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

# towards-principled-gts: a decorated forward, chosen by a switch handed down two constructors
SWITCHED = {
    "pyproject.toml": PYPROJECT,
    "layers.py": """\
        import torch
        from torch_geometric.utils import to_dense_batch


        class EdgeAttention(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.lin = torch.nn.Linear(dim, dim)

            def forward(self, x):
                return self.lin(x)


        class FastEdgeAttention(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.lin = torch.nn.Linear(dim, dim)

            @torch.compile
            def forward(self, x):
                return self.lin(x)


        class Layer(torch.nn.Module):
            def __init__(self, dim, compiled: bool = False):
                super().__init__()
                if compiled:
                    self.attention = FastEdgeAttention(dim)
                else:
                    self.attention = EdgeAttention(dim)

            def forward(self, x):
                return self.attention(x)


        class EdgeTransformer(torch.nn.Module):
            def __init__(self, dim, num_layers, compiled: bool = False):
                super().__init__()
                self.layers = torch.nn.ModuleList([Layer(dim, compiled=compiled) for _ in range(num_layers)])

            def forward(self, data):
                x, mask = to_dense_batch(data.x, data.batch)
                for layer in self.layers:
                    x = layer(x)
                return x[mask]
    """,
    "zinc.py": """\
        import torch
        from torch_geometric.loader import DataLoader
        from layers import EdgeTransformer


        def main(cfg, dataset):
            model = EdgeTransformer(64, 4, compiled=cfg.compiled).to("cuda")
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            loader = DataLoader(dataset, batch_size=32)

            def train():
                total = 0
                for data in loader:
                    optimizer.zero_grad()
                    loss = model(data).sum()
                    loss.backward()
                    optimizer.step()
                    total += loss.item()
                return total

            for epoch in range(10):
                train()
    """,
    # the same model built without the switch, or with it off: no compiled code runs
    "qm9.py": """\
        import torch
        from torch_geometric.loader import DataLoader
        from layers import EdgeTransformer


        def main(dataset):
            model = EdgeTransformer(64, 4)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            for epoch in range(10):
                for data in DataLoader(dataset, batch_size=32):
                    optimizer.zero_grad()
                    loss = model(data).sum()
                    loss.backward()
                    optimizer.step()
                    print(loss.item())
    """,
    "alchemy.py": """\
        import torch
        from torch_geometric.loader import DataLoader
        from layers import EdgeTransformer


        def main(dataset):
            model = EdgeTransformer(64, 4, False)
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            for epoch in range(10):
                for data in DataLoader(dataset, batch_size=32):
                    optimizer.zero_grad()
                    loss = model(data).sum()
                    loss.backward()
                    optimizer.step()
                    print(loss.item())
    """,
}


def test_switched_submodule_drives_compiled_code_only_where_the_switch_may_be_on(tmp_path):
    root = write_project(tmp_path / "p", SWITCHED)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1])) for line in whole} == {("zinc.py", 18),
                                                                               ("layers.py", 19)}, whole
    line = next(line for line in whole if line.startswith("zinc.py"))
    assert "GNN013" in line and "`EdgeTransformer`, which contains compiled code" in line \
        and "FastEdgeAttention" in line, line
    # the decorator without dynamic=True sees every batch of the loader running the outer model
    line = next(line for line in whole if line.startswith("layers.py"))
    assert "GNN007" in line and "`DataLoader`" in line and "zinc.py, running `EdgeTransformer`" in line, line
    # the outer forward is eager: no GNN009 for its to_dense_batch, no GNN008 for x[mask]
    assert_one_file_agrees(root, "zinc.py", nonempty=True, whole=whole)
    assert_one_file_agrees(root, "qm9.py", whole=whole)


# another spelling: the switch kept on self and tested negated, the compiled submodule made with
# torch.compile(...) where it is stored, blocks in an nn.Sequential, a trainer class in a third file
# running `self.model(batch)` per step, and the model's file importing the block's module
STORED = {
    "pyproject.toml": PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/blocks.py": """\
        import torch


        class Attention(torch.nn.Module):
            def forward(self, x):
                return x.softmax(-1)


        class Block(torch.nn.Module):
            def __init__(self, dim, use_fast=False):
                super().__init__()
                self.use_fast = use_fast
                if not self.use_fast:
                    self.attn = Attention()
                else:
                    self.attn = torch.compile(Attention(), dynamic=True)
                self.proj = torch.nn.Linear(dim, dim)

            def forward(self, x):
                return self.proj(self.attn(x))
    """,
    "pkg/model.py": """\
        import torch
        from pkg import blocks


        class Net(torch.nn.Module):
            def __init__(self, dim, depth, fast):
                super().__init__()
                self.body = torch.nn.Sequential(*[blocks.Block(dim, use_fast=fast) for _ in range(depth)])

            def forward(self, x):
                return self.body(x)
    """,
    "pkg/train.py": """\
        import torch
        from pkg.model import Net


        class Trainer:
            def __init__(self, args):
                self.model = Net(args.dim, args.depth, fast=args.fast)
                self.opt = torch.optim.Adam(self.model.parameters())

            def fit(self, loader):
                for batch in loader:
                    self.opt.zero_grad()
                    loss = self.model(batch).mean()
                    loss.backward()
                    self.opt.step()
                    print("loss", loss.item())
    """,
    # nothing turns the switch on here: the blocks are plain
    "pkg/plain.py": """\
        import torch
        from pkg.blocks import Block


        def run(loader):
            model = Block(16)
            opt = torch.optim.Adam(model.parameters())
            for batch in loader:
                opt.zero_grad()
                loss = model(batch).mean()
                loss.backward()
                opt.step()
                print(loss.item())
    """,
}


def test_stored_compiled_submodule_reaches_a_trainer_through_a_module_import(tmp_path):
    root = write_project(tmp_path / "p", STORED)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1])) for line in whole} == {("pkg/train.py", 16)}, whole
    assert "`Net`, which contains compiled code" in next(iter(whole))
    assert_one_file_agrees(root, "pkg/train.py", nonempty=True, whole=whole, cached=1)
    assert_one_file_agrees(root, "pkg/plain.py", whole=whole)


# DyneTrion: submodules stored into a ModuleDict in a loop, the compiled forward dynamic=True
MODULE_DICT = {
    "pyproject.toml": PYPROJECT,
    "ipa.py": """\
        import torch
        from torch import nn


        class PointAttention(nn.Module):
            @torch.compile(dynamic=True)
            def forward(self, s, z):
                return s + z.mean()


        class Score(nn.Module):
            def __init__(self, num_blocks):
                super().__init__()
                self.trunk = nn.ModuleDict()
                for b in range(num_blocks):
                    self.trunk[f"ipa_{b}"] = PointAttention()
                    self.trunk[f"ln_{b}"] = nn.LayerNorm(8)

            def forward(self, s, z):
                for b in range(len(self.trunk) // 2):
                    s = self.trunk[f"ln_{b}"](self.trunk[f"ipa_{b}"](s, z))
                return s
    """,
    "run.py": """\
        import torch
        import ipa


        def train(loader):
            net = ipa.Score(4).cuda()
            opt = torch.optim.Adam(net.parameters())
            for s, z in loader:
                opt.zero_grad()
                loss = net(s.cuda(), z.cuda()).sum()
                loss.backward()
                opt.step()
                if torch.isnan(loss):
                    raise ValueError("nan")
    """,
}


def test_module_dict_entries_and_module_attribute_constructions(tmp_path):
    root = write_project(tmp_path / "p", MODULE_DICT)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1])) for line in whole} == {("run.py", 13)}, whole
    assert_one_file_agrees(root, "run.py", nonempty=True, whole=whole)


@pytest.mark.parametrize("construction,flagged", [("Score(4, True)", True), ("Score(4, compiled=0)", False),
                                                  ("Score(4, compiled=False)", False), ("Score(4)", False)])
def test_a_constructor_switch_picks_the_compiled_submodules(tmp_path, construction, flagged):
    # `PointAttention() if compiled else nn.Identity()` and `if compiled: self.extra = ...`: only a
    # construction turning the switch on holds compiled code; one leaving it off builds none
    files = {
        "pyproject.toml": PYPROJECT,
        "ipa.py": """\
            import torch
            from torch import nn


            class PointAttention(nn.Module):
                @torch.compile
                def forward(self, s):
                    return s * 2


            class Score(nn.Module):
                def __init__(self, n, compiled=False):
                    super().__init__()
                    self.blocks = nn.ModuleList(PointAttention() if compiled else nn.Identity() for _ in range(n))
                    if compiled:
                        self.extra = PointAttention()

                def forward(self, s):
                    for block in self.blocks:
                        s = block(s)
                    return self.extra(s) if hasattr(self, "extra") else s
        """,
        "run.py": f"""\
            import torch
            from ipa import Score


            def train(loader):
                net = Score(4)
                opt = torch.optim.Adam(net.parameters())
                for s in loader:
                    opt.zero_grad()
                    loss = net(s).sum()
                    loss.backward()
                    opt.step()
                    print(loss.item())
        """.replace("Score(4)", construction),
    }
    root = write_project(tmp_path / "p", files)
    found = whole_tree_lines(root)
    assert any(line.startswith("run.py:13:") for line in found) is flagged, found
    assert all(line.startswith("run.py:13:") for line in found if line.startswith("run.py:")), found


# GNN007 two files away: the layer file compiles a submodule where it stores it (no dynamic=), the
# model file imports the layer class by name, the script runs the model on a PyG loader's batches
THREE_FILES = {
    "pyproject.toml": PYPROJECT,
    "nets/__init__.py": "",
    "nets/layers.py": """\
        import torch


        class Mixer(torch.nn.Module):
            def forward(self, x):
                return x.tanh()


        class GraphBlock(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.mix = torch.compile(Mixer())
                self.lin = torch.nn.Linear(dim, dim)

            def forward(self, x):
                return self.mix(self.lin(x))
    """,
    "nets/model.py": """\
        import torch
        from nets.layers import GraphBlock


        class Model(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.blocks = torch.nn.ModuleList()
                for _ in range(3):
                    self.blocks.append(GraphBlock(dim))

            def forward(self, data):
                x = data.x
                for block in self.blocks:
                    x = block(x)
                return x
    """,
    "main.py": """\
        import torch
        from torch_geometric.loader import DataLoader
        from nets.model import Model


        def evaluate(dataset):
            model = Model(16).cuda()
            total = 0.0
            with torch.no_grad():
                for batch in DataLoader(dataset, batch_size=64):
                    total += model(batch.cuda()).sum()
            return total
    """,
}


def test_a_loader_two_files_away_feeds_a_submodule_compiled_where_it_is_stored(tmp_path):
    root = write_project(tmp_path / "p", THREE_FILES)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1]), line.split()[1]) for line in whole} \
        == {("nets/layers.py", 12, "GNN007")}, whole
    assert "running `Model`" in next(iter(whole)), whole
    assert_one_file_agrees(root, "nets/layers.py", nonempty=True, whole=whole, cached=1)


def test_a_factory_choosing_the_compiled_layer_and_a_config_switch(tmp_path):
    files = {
        "pyproject.toml": PYPROJECT,
        "model.py": """\
            import torch


            class FusedMLP(torch.nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.lin = torch.nn.Linear(dim, dim)

                @torch.compile(mode="max-autotune")
                def forward(self, x):
                    return self.lin(x).relu()


            class MLP(torch.nn.Module):
                def forward(self, x):
                    return x.relu()


            def make_mlp(cfg):
                if cfg.fused:
                    return FusedMLP(cfg.dim)
                return MLP()


            class Encoder(torch.nn.Module):
                def __init__(self, cfg):
                    super().__init__()
                    self.mlp = make_mlp(cfg)

                def forward(self, x):
                    return self.mlp(x)
        """,
        "fit.py": """\
            import torch
            from model import Encoder


            class Runner:
                def __init__(self, cfg):
                    self.net = Encoder(cfg)
                    self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def epoch(self, loader):
                    for x, y in loader:
                        self.opt.zero_grad()
                        loss = (self.net(x) - y).pow(2).mean()
                        loss.backward()
                        self.opt.step()
                        if loss > 10:
                            print("diverged")
        """,
    }
    root = write_project(tmp_path / "p", files)
    whole = whole_tree_lines(root)
    assert {(line.split(":")[0], int(line.split(":")[1])) for line in whole} == {("fit.py", 16)}, whole
    assert "`Encoder`, which contains compiled code" in next(iter(whole))


def test_a_compiled_wrapper_whose_forward_never_runs_feeds_nothing(tmp_path):
    # heldout12 c01: only the wrapper's other methods run (`self.autoencoder.encode`), which run eagerly
    files = {
        "pyproject.toml": PYPROJECT,
        "wrappers.py": """\
            import torch


            class Wrapper:
                def __init__(self, autoencoder):
                    self.autoencoder = autoencoder

                def fit(self, data, loader, compiled=False):
                    if compiled:
                        self.autoencoder = torch.compile(self.autoencoder)
                    optim = torch.optim.Adam(self.autoencoder.parameters())
                    for batch in loader:
                        z = self.autoencoder.encode(batch.x, batch.edge_index)
                        loss = self.autoencoder.recon_loss(z, batch.edge_index)
                        optim.zero_grad()
                        loss.backward()
                        optim.step()
        """,
        "run.py": """\
            from torch_geometric.loader import LinkNeighborLoader
            from torch_geometric.nn import GAE
            from wrappers import Wrapper


            def main(data, encoder, runner):
                w = Wrapper(GAE(encoder))
                loader = LinkNeighborLoader(data, num_neighbors=[10], batch_size=64)
                runner.fit(w, loader)  # the wrapper handed on with the loader (c01: a notebook)
        """,
    }
    root = write_project(tmp_path / "p", files)
    assert not any("GNN007" in line for line in whole_tree_lines(root))
