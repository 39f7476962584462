"""Shapes of the compile-site rules (GNN005, GNN006, GNN007, GNN012) met in real
code (s11sites): each test is a small project or file that fails without its change."""
from __future__ import annotations

from pathlib import Path

from tests.project_files import finding_lines, run, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"


def _lines(root: Path, select: str) -> set[str]:
    out = run(["check", ".", "--no-cache", "--output-format", "concise", "--select", select], root).output
    return {line.split(" ")[0] + " " + line.split(" ")[1] for line in finding_lines(out)}


# -- GNN007: the compile in a helper whose result a local wrapper returns ---------------------------
FACTORY = """\
    import torch


    def compile_model(model, cfg):
        if not cfg.compile:
            return model
        model = torch.compile(model, mode=cfg.mode)
        return model


    def setup_model(model, cfg):
        model = compile_model(model, cfg)
        return model
"""


def test_wrapper_of_a_compiling_helper_fed_in_another_file(tmp_path: Path):
    """main.py feeds what the imported ``setup_model`` returns NeighborLoader
    batches; ``setup_model`` returns what the local ``compile_model`` compiled:
    GNN007 at the compile call (project273a's ``setup_and_compile_model``)."""
    write_project(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "factory.py": FACTORY,
        "main.py": """\
            from torch_geometric.loader import NeighborLoader
            from factory import setup_model

            model = setup_model(model, cfg)
            loader = NeighborLoader(data, num_neighbors=[10], batch_size=128)
            for batch in loader:
                out = model(batch.x, batch.edge_index)
        """,
    })
    assert _lines(tmp_path, "GNN007") == {"factory.py:7:13: GNN007"}


def test_wrapper_that_does_not_return_the_compiled_model(tmp_path: Path):
    """The wrapper returns the model it was given, not the compiled one: nothing."""
    write_project(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "factory.py": FACTORY.replace("        model = compile_model(model, cfg)\n        return model",
                                      "        compiled = compile_model(model, cfg)\n        return model"),
        "main.py": """\
            from torch_geometric.loader import NeighborLoader
            from factory import setup_model

            model = setup_model(model, cfg)
            loader = NeighborLoader(data, num_neighbors=[10], batch_size=128)
            for batch in loader:
                out = model(batch.x, batch.edge_index)
        """,
    })
    assert _lines(tmp_path, "GNN007") == set()


# -- GNN007: a builder returning a record of the run; the loop annotated with PyG's DataLoader ------
BUILDER = """\
    from dataclasses import dataclass

    import torch
    from torch_geometric.loader import DataLoader


    @dataclass
    class RunData:
        train_loader: DataLoader
        model: torch.nn.Module


    def build_run(spec):
        train_loader = DataLoader(spec.dataset, batch_size=32, shuffle=True)
        model = Net(spec)
        model = torch.compile(model)
        return RunData(train_loader=train_loader, model=model)
"""

TRAIN = """\
    import torch
    from torch_geometric.loader import DataLoader

    from builder import build_run


    def train_batch(model, batch, optim):
        optim.zero_grad()
        loss = model(batch).sum()
        loss.backward()
        optim.step()


    def run_epoch(*, model, optim, train_loader: DataLoader):
        for batch in train_loader:
            batch = batch.to("cuda")
            train_batch(model, batch, optim)


    def run(spec):
        run_data = build_run(spec)
        model = run_data.model
        train_loader = run_data.train_loader
        optim = torch.optim.Adam(model.parameters())
        for epoch in range(10):
            run_epoch(model=model, optim=optim, train_loader=train_loader)
"""


def test_record_returned_by_an_imported_builder_fed_an_annotated_loader(tmp_path: Path):
    """``run_data = build_run(spec)``, ``model = run_data.model``, then a loop over a
    parameter annotated ``DataLoader`` (PyG's) runs it: GNN007 at the builder's compile
    call (kaggle-fast-or-slow's ``RunData``)."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "builder.py": BUILDER, "train.py": TRAIN})
    assert _lines(tmp_path, "GNN007") == {"builder.py:16:13: GNN007"}


def test_record_builder_fed_a_torch_dataloader(tmp_path: Path):
    """The same loop annotated with torch's DataLoader (fixed-size tensors): nothing."""
    write_project(tmp_path, {
        "pyproject.toml": PYPROJECT, "builder.py": BUILDER,
        "train.py": TRAIN.replace("from torch_geometric.loader import DataLoader",
                                  "from torch.utils.data import DataLoader"),
    })
    assert _lines(tmp_path, "GNN007") == set()


# -- a compiled model whose wrapper only hands out its other methods: nothing runs compiled ----------
WRAPPED = """\
    import torch
    import wandb
    from torch_sparse import SparseTensor


    class Encoder(torch.nn.Module):
        def forward(self, x, edge_index):
            adj = SparseTensor(row=edge_index[0], col=edge_index[1])
            return adj @ x


    class AutoEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x, edge_index):
            return self.encoder(x, edge_index)

        def encode(self, x, edge_index):
            return self.encoder(x, edge_index)


    class Wrapper:
        def __init__(self):
            self.ae = AutoEncoder()

        def fit(self, data, compiled=False):
            if compiled:
                self.ae = torch.compile(self.ae)
            self.ae.train()
            wandb.watch(self.ae, log="gradients")
            for epoch in range(10):
                z = self.ae.encode(data.x, data.edge_index)
"""


def test_compiled_wrapper_whose_forward_never_runs(tmp_path: Path):
    """``self.ae = torch.compile(self.ae)`` and then only ``self.ae.encode(...)``:
    ``OptimizedModule`` returns the original module's bound method, which runs
    eagerly, so the SparseTensor built in the encoder is no graph break (c01)."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": WRAPPED})
    assert _lines(tmp_path, "GNN005") == set()


def test_compiled_wrapper_called(tmp_path: Path):
    """The same wrapper called (``self.ae(...)``): its forward runs compiled."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT,
                             "model.py": WRAPPED.replace("self.ae.encode(data.x", "self.ae(data.x")})
    assert _lines(tmp_path, "GNN005") == {"model.py:8:15: GNN005"}


def test_compiled_wrapper_tested_for_truth_and_reached_through_another_instance(tmp_path: Path):
    """``if not self.ae:`` / ``self.ae is None`` run no forward, and ``other.ae.encode(...)`` on
    another instance of the same class is the same eager method call: still never run compiled
    (heldout15 Bees_Knees: `if not self.network:`, `new_oracle.network.load(...)`)."""
    src = WRAPPED.replace("            self.ae.train()\n",
                          "            self.ae.train()\n            if not self.ae or self.ae is None:\n"
                          "                return\n            other = Wrapper()\n"
                          "            other.ae.encode(data.x, data.edge_index)\n")
    assert "other.ae.encode" in src and "if not self.ae" in src
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": src})
    assert _lines(tmp_path, "GNN005") == set()
    called = src.replace("self.ae.encode(data.x", "self.ae(data.x")
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": called})
    assert _lines(tmp_path, "GNN005") == {"model.py:8:15: GNN005"}


# -- GNN005: `model(data)` whose compiled forward reads `data.adj_t`; a table of dataset loaders ------
FORWARD_READS = """\
    import torch
    import torch_geometric.transforms as T
    from torch_geometric.datasets import Reddit
    from torch_geometric.nn import GCNConv

    dataset = Reddit(root="/tmp/Reddit", transform=T.ToSparseTensor())
    data = dataset[0]


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GCNConv(dataset.num_features, 16)

        def forward(self, data):
            x, adj_t = data.x, data.adj_t
            return self.conv1(x, adj_t)


    model = torch.compile(Net())
    for epoch in range(10):
        out = model(data)
"""


def test_compiled_forward_reads_adj_t_of_its_argument(tmp_path: Path):
    """``model(data)`` runs the compiled ``forward(self, data)``, which reads
    ``data.adj_t``: the transform making it is reported (iSpLib, PyG examples)."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "gcn.py": FORWARD_READS})
    assert _lines(tmp_path, "GNN005") == {"gcn.py:6:48: GNN005"}


def test_compiled_forward_reads_adj_t_of_a_rebound_name(tmp_path: Path):
    """The forward rebinds ``data`` before reading ``adj_t``: not the caller's object, nothing."""
    source = FORWARD_READS.replace("x, adj_t = data.x, data.adj_t",
                                   "data = self.prepare(data)\n            x, adj_t = data.x, data.adj_t")
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "gcn.py": source})
    assert _lines(tmp_path, "GNN005") == set()


def test_dataset_loader_chosen_from_an_imported_table(tmp_path: Path):
    """``dataset, data = loaders[name]()`` with ``loaders = {"reddit": load_reddit, ...}`` in
    another file: the transforms of the table's functions are reported there."""
    write_project(tmp_path, {
        "pyproject.toml": PYPROJECT,
        "dataset_loader.py": """\
            import torch_geometric.transforms as T
            from torch_geometric.datasets import Reddit, Reddit2


            def load_reddit(path, adj_t=True):
                dataset = Reddit(root=path, transform=T.ToSparseTensor() if adj_t else None)
                return dataset, dataset[0]


            def load_reddit2(path, adj_t=True):
                dataset = Reddit2(root=path, transform=T.ToSparseTensor() if adj_t else None)
                return dataset, dataset[0]


            def load_plain(path):
                dataset = Reddit(root=path, transform=T.ToSparseTensor())
                return dataset, dataset[0]


            loaders = {"reddit": load_reddit, "reddit2": load_reddit2}
        """,
        "train.py": """\
            import sys

            import torch
            from torch_geometric.nn import GCNConv

            from dataset_loader import loaders

            dataset, data = loaders[sys.argv[1]]("/tmp")


            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv1 = GCNConv(dataset.num_features, 16)

                def forward(self, data):
                    return self.conv1(data.x, data.adj_t)


            model = torch.compile(Net())
            for epoch in range(10):
                out = model(data)
        """,
    })
    assert _lines(tmp_path, "GNN005") == {"dataset_loader.py:6:43: GNN005", "dataset_loader.py:11:44: GNN005"}


# -- GNN007: a submodule compiled next to a sibling the class compiles with dynamic=True -------------
SIBLINGS = """\
    import torch


    class Extractor(torch.nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.type_embedder = torch.nn.Embedding(4, 8)
            self.type_embedder = torch.compile(self.type_embedder)
            self.features = torch.nn.Linear(16, hidden - 8)
            self.features = torch.compile(self.features, dynamic=True)
            self.head = torch.nn.Linear(hidden, 1)
            self.head = torch.compile(self.head)

        def forward(self, obs):
            graph, num_nodes = obs
            out = torch.empty(graph.x.size(0), 64)
            out[:num_nodes, :8] = self.type_embedder(torch.LongTensor([2] * num_nodes))
            out[:num_nodes, 8:] = self.features(graph.x[:num_nodes])
            return out

        def score(self, pooled):
            return self.head(pooled)
"""


def test_submodule_compiled_next_to_a_dynamic_sibling(tmp_path: Path):
    """``forward`` runs ``self.type_embedder`` (no ``dynamic=``) and ``self.features``
    (``dynamic=True``) on the same per-call data: the first is reported (wheatley);
    ``self.head``, run only by another method, is not."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": SIBLINGS})
    assert _lines(tmp_path, "GNN007") == {"model.py:8:30: GNN007"}


def test_submodule_fed_the_dynamic_siblings_output(tmp_path: Path):
    """``self.type_embedder(self.features(x))``: it takes what the sibling returns, which may have
    one size whatever the sibling's inputs: nothing."""
    source = SIBLINGS.replace("self.type_embedder(torch.LongTensor([2] * num_nodes))",
                              "self.type_embedder(self.features(graph.x[:num_nodes]).argmax(-1))")
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": source})
    assert _lines(tmp_path, "GNN007") == set()


def test_submodules_without_a_dynamic_sibling(tmp_path: Path):
    """No sibling says the sizes change: nothing."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT,
                             "model.py": SIBLINGS.replace("self.features, dynamic=True", "self.features")})
    assert _lines(tmp_path, "GNN007") == set()


# -- GNN007: a compiled GNN run on a Batch the forward assembles from its input ----------------------
ASSEMBLED = """\
    import torch
    import torch_geometric
    from torch_geometric.data import Batch, Data


    def to_pyg_batch(node_features, edge_index, node_mask):
        data_list = [Data(x=node_features[i][node_mask[i]], edge_index=edge_index[i])
                     for i in range(node_features.shape[0])]
        return Batch.from_data_list(data_list)


    class Net(torch.nn.Module):
        def __init__(self, gnn, edge_index):
            super().__init__()
            self.register_buffer("edge_index", edge_index)
            self.gnn = torch.compile(gnn)

        def forward(self, batch):
            node_features, node_mask = self.construct(batch)
            edge_index = [batch[i].edge_index for i in range(len(batch))]
            graphs = to_pyg_batch(node_features, edge_index, node_mask)
            return self.gnn(x=graphs.x, edge_index=graphs.edge_index)
"""


def test_compiled_gnn_on_graphs_cut_from_the_input(tmp_path: Path):
    """``forward`` batches one graph per sample with that sample's own edges
    (``Batch.from_data_list`` in a local helper): GNN007 (neural-graphs' dynamic_gnn)."""
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": ASSEMBLED})
    assert _lines(tmp_path, "GNN007") == {"model.py:16:20: GNN007"}


def test_compiled_gnn_on_copies_of_one_fixed_graph(tmp_path: Path):
    """Every graph shares the fixed ``self.edge_index``: one size per graph, nothing
    (neural-graphs' gnn.py, labelled static)."""
    source = ASSEMBLED.replace("edge_index=edge_index[i])", "edge_index=edge_index)").replace(
        "graphs = to_pyg_batch(node_features, edge_index, node_mask)",
        "graphs = to_pyg_batch(node_features, self.edge_index, node_mask)")
    write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": source})
    assert _lines(tmp_path, "GNN007") == set()
