"""Realistic variants for the compile-site rules (GNN002, GNN006, GNN007,
GNN011, GNN012), beyond each rule's VALID/INVALID examples: the shapes that
real PyG training scripts take (globals read by functions defined earlier,
trainer classes, loader factories, PyG 1.x imports, Lightning data modules)."""
from __future__ import annotations

import textwrap

import pytest

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import rule_by_code


def lines(code: str, source: str) -> list[int]:
    rule = rule_by_code(code)
    result = lint_bytes("case.py", textwrap.dedent(source).encode(), LintOptions(codes=frozenset({code})),
                        rules=[rule])
    return sorted(f.line for f in result.findings)


GNN007_CASES = [
    ("module-level compile under a flag, loader global defined after the train function", """
        import torch
        from torch_geometric.loader import NeighborLoader

        def train():
            model.train()
            for batch in train_loader:
                out = model(batch.x, batch.edge_index)
                out.sum().backward()

        train_loader = NeighborLoader(data, num_neighbors=[25, 10], batch_size=1024)
        model = SAGE(data.num_features, 256, 47)
        if args.compile:
            model = torch.compile(model)
        for epoch in range(10):
            train()
        """, [14]),
    ("conditional expression", """
        import torch
        from torch_geometric.loader import ClusterData, ClusterLoader
        loader = ClusterLoader(ClusterData(data, num_parts=1500), batch_size=20, shuffle=True)
        model = torch.compile(model) if args.compile else model
        for batch in loader:
            model(batch.x, batch.edge_index)
        """, [5]),
    ("trainer class holding the compiled model and the loader", """
        import torch
        from torch_geometric.loader import NeighborLoader

        class Trainer:
            def __init__(self, model, loader):
                self.model = torch.compile(model)
                self.loader = loader

            def epoch(self):
                for batch in self.loader:
                    self.model(batch.x, batch.edge_index).sum().backward()

        Trainer(model, NeighborLoader(data, num_neighbors=[10], batch_size=128)).epoch()
        """, [7]),
    ("PyG 1.x import location", """
        import torch
        from torch_geometric.data import DataLoader
        loader = DataLoader(dataset, batch_size=64, shuffle=True)
        model = torch.compile(Net())
        for data in loader:
            model(data.x, data.edge_index, data.batch)
        """, [5]),
    ("enumerate(tqdm(loader)) and a renamed batch", """
        import torch
        from tqdm import tqdm
        from torch_geometric.loader import LinkNeighborLoader
        loader = LinkNeighborLoader(data, num_neighbors=[20, 10], edge_label_index=eli, batch_size=2048)
        model = torch.compile(model)
        for step, sampled in enumerate(tqdm(loader)):
            sampled = sampled.to(device)
            x, edge_index = sampled.x, sampled.edge_index
            model(x, edge_index)
        """, [6]),
    ("loader factory", """
        import torch
        from torch_geometric.loader import NeighborLoader

        def get_loader(config, data):
            if config.name == "sage":
                return NeighborLoader(data, num_neighbors=config.fanouts, batch_size=config.batch_size)
            raise NotImplementedError

        model = torch.compile(model, dynamic=False)
        for batch in get_loader(cfg, data):
            model(batch.x, batch.edge_index)
        """, [10]),
    ("dict of loaders", """
        import torch
        from torch_geometric.loader import NeighborLoader
        loaders = {"train": NeighborLoader(data, num_neighbors=[10], batch_size=64),
                   "val": NeighborLoader(data, num_neighbors=[10], batch_size=64)}
        model = torch.compile(model)
        for split in ["train", "val"]:
            for batch in loaders[split]:
                model(batch.x, batch.edge_index)
        """, [6]),
    ("compiled module passed to a Lightning trainer with a PyG data module", """
        import torch
        from torch_geometric.data import LightningNodeData
        datamodule = LightningNodeData(data, input_train_nodes=data.train_mask, num_neighbors=[10, 10])
        model = torch.compile(LitGNN())
        trainer.fit(model, datamodule)
        """, [5]),
    # -- not flagged ---------------------------------------------------------------
    ("LightningNodeData full-batch", """
        import torch
        from torch_geometric.data import LightningNodeData
        datamodule = LightningNodeData(data, loader="full")
        model = torch.compile(LitGNN())
        trainer.fit(model, datamodule)
        """, []),
    ("dynamic from a variable", """
        import torch
        from torch_geometric.loader import NeighborLoader
        model = torch.compile(model, dynamic=args.dynamic)
        for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
            model(batch.x, batch.edge_index)
        """, []),
    ("full-graph link prediction over an index DataLoader", """
        import torch
        from torch.utils.data import DataLoader
        model = torch.compile(model)
        for perm in DataLoader(range(train_edges.size(0)), batch_size=65536, shuffle=True):
            z = model(data.x, data.adj_t)
            loss = decode(z, train_edges[perm])
        """, []),
    ("model compiled, the loader loop runs the eager copy", """
        import torch
        from torch_geometric.loader import NeighborLoader
        compiled = torch.compile(model)
        full = compiled(data.x, data.edge_index)
        for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
            model(batch.x, batch.edge_index)
        """, []),
    ("layer-wise inference method on the compiled wrapper runs eager", """
        import torch
        from torch_geometric.loader import NeighborLoader
        model = torch.compile(model)
        subgraph_loader = NeighborLoader(data, num_neighbors=[-1], batch_size=4096)
        for epoch in range(10):
            out = model(data.x, data.edge_index)
        model.inference(data.x, subgraph_loader)
        """, []),
    ("a DenseDataLoader yields padded batches", """
        import torch
        from torch_geometric.loader import DenseDataLoader
        model = torch.compile(model)
        for data in DenseDataLoader(dataset, batch_size=20):
            model(data.x, data.adj, data.mask)
        """, []),
    ("discarded compile (GNN010's finding, not this one)", """
        import torch
        import torch_geometric
        from torch_geometric.loader import DataLoader
        torch_geometric.compile(model)
        for batch in DataLoader(graphs, batch_size=32):
            model(batch.x, batch.edge_index, batch.batch)
        """, []),
]


@pytest.mark.parametrize("name,source,expected", GNN007_CASES, ids=[c[0] for c in GNN007_CASES])
def test_gnn007(name, source, expected):
    assert lines("GNN007", source) == expected


GNN006_CASES = [
    ("reduce-overhead inference over graph batches in a function", """
        import torch
        from torch_geometric.loader import DataLoader

        @torch.no_grad()
        def score(model, loader):
            return torch.cat([model(b.x, b.edge_index, b.batch).cpu() for b in loader])

        model = torch.compile(model, mode="reduce-overhead", dynamic=True)
        score(model, DataLoader(graphs, batch_size=512))
        """, [9]),
    ("explicitly padded batches", """
        import torch
        from torch_geometric.loader import DataLoader
        model = torch.compile(model, mode="reduce-overhead")
        for batch in DataLoader(graphs, batch_size=64, drop_last=True):
            batch = pad_to_bucket(batch, buckets)
            model(batch.x, batch.edge_index, batch.batch)
        """, []),
]


@pytest.mark.parametrize("name,source,expected", GNN006_CASES, ids=[c[0] for c in GNN006_CASES])
def test_gnn006(name, source, expected):
    assert lines("GNN006", source) == expected


GNN002_CASES = [
    ("whole train step compiled, warmup LambdaLR", """
        import torch
        optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / 1000))

        @torch.compile
        def train_step(batch):
            loss = model(batch.x, batch.edge_index).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss

        for batch in loader:
            train_step(batch)
            scheduler.step()
        """, [3]),
    ("ReduceLROnPlateau and a compiled step", """
        import torch
        opt = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=5)
        opt_step = torch.compile(opt.step)
        """, [3]),
    ("lr bound to a tensor", """
        import torch
        lr = torch.tensor(0.01)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        opt_step = torch.compile(opt.step)
        """, []),
    ("compiled model, eager optimizer", """
        import torch
        model = torch.compile(model, dynamic=True)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        for epoch in range(10):
            opt.step()
            sched.step()
        """, []),
    ("scheduler but nothing compiled", """
        import torch
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        """, []),
]


@pytest.mark.parametrize("name,source,expected", GNN002_CASES, ids=[c[0] for c in GNN002_CASES])
def test_gnn002(name, source, expected):
    assert lines("GNN002", source) == expected


def test_gnn002_fix_respects_foreach():
    rule = rule_by_code("GNN002")
    source = textwrap.dedent("""
        import torch
        opt = torch.optim.Adam(model.parameters(), lr=0.01, foreach=True)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        opt_step = torch.compile(opt.step)
        """)
    findings = lint_bytes("case.py", source.encode(), LintOptions(codes=frozenset({"GNN002"})), rules=[rule]).findings
    assert [f.line for f in findings] == [3]
    assert findings[0].fix is None  # Adam rejects a tensor lr with foreach=True, capturable=False


GNN012_CASES = [
    ("PyG hetero example: init_params() before compile", """
        import torch
        from torch_geometric.nn import SAGEConv, to_hetero

        class GNN(torch.nn.Module):
            def __init__(self, hidden):
                super().__init__()
                self.conv = SAGEConv((-1, -1), hidden)

            def forward(self, x, edge_index):
                return self.conv(x, edge_index)

        model = to_hetero(GNN(64), data.metadata())

        @torch.no_grad()
        def init_params():
            batch = next(iter(train_loader))
            model(batch.x_dict, batch.edge_index_dict)

        init_params()
        model = torch.compile(model)
        """, []),
    ("factory returning a lazy model", """
        import torch
        from torch_geometric.nn import HGTConv, Linear

        def build(metadata):
            return HGTConv(-1, 64, metadata, heads=2)

        model = build(data.metadata())
        model = torch.compile(model)
        """, [9]),
    ("lazy class, eager init on the original after compiling a copy", """
        import torch
        from torch_geometric.nn import GATConv
        model = GATConv((-1, -1), 64, add_self_loops=False)
        compiled = torch.compile(model)
        with torch.no_grad():
            model(data.x_dict, data.edge_index_dict)
        """, []),
    ("MLP with a lazy first channel", """
        import torch
        from torch_geometric.nn import MLP
        head = torch.compile(MLP([-1, 128, 10]))
        """, [4]),
    ("model built from a parameter: not guessed", """
        import torch
        def run(model):
            return torch.compile(model)
        """, []),
]


@pytest.mark.parametrize("name,source,expected", GNN012_CASES, ids=[c[0] for c in GNN012_CASES])
def test_gnn012(name, source, expected):
    assert lines("GNN012", source) == expected


GNN011_CASES = [
    ("alias of the config module bound by assignment", """
        import torch
        cfg = torch._dynamo.config
        cfg.suppress_errors = True
        """, [4]),
    ("environment variable with a false value", """
        import os
        os.environ["TORCHDYNAMO_SUPPRESS_ERRORS"] = "0"
        """, []),
]


@pytest.mark.parametrize("name,source,expected", GNN011_CASES, ids=[c[0] for c in GNN011_CASES])
def test_gnn011(name, source, expected):
    assert lines("GNN011", source) == expected


def test_gnn007_through_ddp_and_forward_assignment():
    assert lines("GNN007", """
        import torch
        from torch.nn.parallel import DistributedDataParallel
        from torch_geometric.loader import NeighborLoader
        model = DistributedDataParallel(torch.compile(model), device_ids=[rank])
        for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
            model(batch.x, batch.edge_index)
        """) == [5]
    assert lines("GNN007", """
        import torch
        from torch_geometric.loader import NeighborLoader
        model.forward = torch.compile(model.forward)
        for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
            model(batch.x, batch.edge_index)
        """) == [4]


def test_gnn007_local_subclass_of_a_pyg_loader():
    assert lines("GNN007", """
        import torch
        from torch_geometric.loader import NeighborSampler as RawNeighborSampler

        class NeighborSampler(RawNeighborSampler):
            def sample(self, batch):
                return super().sample(batch)

        train_loader = NeighborSampler(data.edge_index, sizes=[10, 10], batch_size=256)
        model = torch.compile(model)
        for batch_size, n_id, adjs in train_loader:
            model(x[n_id], adjs)
        """) == [10]


def test_gnn002_optimizer_passed_to_a_compiled_step():
    assert lines("GNN002", """
        import torch

        @torch.compile
        def update(opt, sched):
            opt.step()
            sched.step()

        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60])
        for epoch in range(90):
            update(optimizer, scheduler)
        """) == [9]


def test_gnn007_step_based_loop_external_step_and_data_module_attribute():
    assert lines("GNN007", """
        import torch
        from torch_geometric.loader import NeighborLoader
        loader_iter = iter(NeighborLoader(data, num_neighbors=[10], batch_size=64))
        model = torch.compile(model)
        for step in range(10000):
            batch = next(loader_iter)
            model(batch.x, batch.edge_index)
        """) == [5]
    assert lines("GNN007", """
        import torch
        from torch_geometric.loader import DataLoader
        from mytraining import train_step
        model = torch.compile(model)
        for batch in DataLoader(graphs, batch_size=32):
            train_step(model, batch, optimizer)
        """) == [5]
    assert lines("GNN007", """
        import torch
        from torch_geometric.loader import NeighborLoader

        class Data:
            def __init__(self, data):
                self.train_loader = NeighborLoader(data, num_neighbors=[10], batch_size=64)

        dm = Data(data)
        model = torch.compile(model)
        for batch in dm.train_loader:
            model(batch.x, batch.edge_index)
        """) == [10]


def test_gnn007_single_graph_wrapped_in_a_loader_is_fixed_size():
    assert lines("GNN007", """
        import torch
        from torch_geometric.loader import DataLoader
        model = torch.compile(model)
        for data in DataLoader([graph], batch_size=1):
            model(data.x, data.edge_index)
        """) == []


def _options(source: str, name: str) -> list:
    """compile_option(site, name) of every compile site of ``source``, in order."""
    import libcst as cst

    from gnnlint.context import _NO_VALUE, FileContext

    ctx = FileContext(cst.parse_module(textwrap.dedent(source)), "case.py")
    out = []
    for site_node, _site in ctx.compile_sites:
        value = ctx.compile_option(site_node, name)
        out.append("?" if value is _NO_VALUE else value)
    return out


@pytest.mark.parametrize("name,source,expected", [
    ("argparse default, store_true, store_false, set_defaults, parse_known_args", """
        import argparse, torch
        p = argparse.ArgumentParser()
        p.add_argument("--dynamic-shapes", dest="dyn", default=None)
        p.add_argument("--static", action="store_true")
        p.add_argument("--no-dynamic", dest="dynamic", action="store_false")
        p.add_argument("--mode", default="reduce-overhead")
        p.set_defaults(static=True)
        args, _rest = p.parse_known_args()
        a = torch.compile(m, dynamic=args.dyn)
        b = torch.compile(m, dynamic=args.static)
        c = torch.compile(m, dynamic=args.dynamic)
        d = torch.compile(m, dynamic=args.unknown)
        """, [None, True, True, "?"]),
    ("the program assigns the option after parsing: unknown", """
        import argparse, torch
        p = argparse.ArgumentParser()
        p.add_argument("--dynamic", action="store_true")
        args = p.parse_args()
        if big_graph:
            args.dynamic = True
        model = torch.compile(m, dynamic=args.dynamic)
        """, ["?"]),
    ("args handed to a function by its only caller", """
        import argparse, torch
        def build(net, args):
            return torch.compile(net, dynamic=args.dynamic)
        p = argparse.ArgumentParser()
        p.add_argument("--dynamic", type=bool, default=False)
        build(m, p.parse_args())
        """, [False]),
    ("a name assigned on both branches: the same value, or not", """
        import torch
        if x:
            D, E = False, False
        else:
            D, E = False, True
        a = torch.compile(m, dynamic=D)
        b = torch.compile(m, dynamic=E)
        """, [False, "?"]),
    ("a parameter: its default and every local caller", """
        import torch
        def build(net, dynamic=False):
            return torch.compile(net, dynamic=dynamic)
        def build2(net, dynamic=False):
            return torch.compile(net, dynamic=dynamic)
        def build3(net, dynamic=False):
            return torch.compile(net, dynamic=dynamic)
        build(a)
        build(b, dynamic=False)
        build2(a, dynamic=True)
        build2(b)
        """, [False, "?", "?"]),
    ("dict literals: subscripts, .get, **, dict(), merged, changed later", """
        import torch
        CFG = {"dynamic": False}
        KW = dict(mode="max-autotune", **CFG)
        LATE = {"mode": "default"}
        LATE.update(other)
        a = torch.compile(m, dynamic=CFG["dynamic"])
        b = torch.compile(m, dynamic=CFG.get("dynamic", True))
        c = torch.compile(m, dynamic=CFG.get("missing", True))
        d = torch.compile(m, **KW)
        e = torch.compile(m, **LATE)
        f = torch.compile(m, **{**CFG, "mode": "default"})
        """, [False, False, True, False, "?", False]),
    ("**kwargs of a helper: what its local callers pass", """
        import torch
        def build(net, **kwargs):
            return torch.compile(net, **kwargs)
        def build_public(net, **kwargs):
            return torch.compile(net, **kwargs)
        build(a, dynamic=False)
        build(b, dynamic=False, mode="default")
        """, [False, "?"]),
])
def test_compile_options_through_names(name, source, expected):
    assert _options(source, "dynamic") == expected
