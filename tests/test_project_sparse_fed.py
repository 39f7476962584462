"""A compiled model fed ``batch.adj_t`` in one file, the ``T.ToSparseTensor()``
that made it in another (PyG's ``benchmark/training`` and ``benchmark/utils``):
GNN005 reports the transform, where the adjacency is made (the cases policy),
never the feed. The feeding file follows the value back -- the loop variable,
the loader parameter's callers, ``NeighborLoader(data, ...)``, ``data, n =
get_dataset(...)`` -- to the imported function, through a package's
``__init__`` re-export, and that function's file reports the transform built
in it or in a local function it calls."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

UTILS = """\
    import torch_geometric.transforms as T
    from torch_geometric.datasets import Reddit


    def get_dataset_with_transformation(root, use_sparse_tensor=False):
        transform = T.ToSparseTensor(remove_edge_index=False) if use_sparse_tensor else None
        dataset = Reddit(root=root, transform=transform)
        return dataset[0], dataset.num_classes


    def get_dataset(root, use_sparse_tensor=False):
        data, num_classes = get_dataset_with_transformation(root, use_sparse_tensor)
        return data, num_classes


    def get_other(root):
        return Reddit(root=root, transform=T.ToSparseTensor())[0]
"""
TRAIN = """\
    import torch
    from torch_geometric.loader import NeighborLoader

    from bench.utils import get_dataset


    def train(model, loader):
        for batch in loader:
            edge_index = batch.adj_t if "adj_t" in batch else batch.edge_index
            model(batch.x, edge_index)


    def run(args, model):
        data, num_classes = get_dataset(args.root, args.use_sparse_tensor)
        loader = NeighborLoader(data, num_neighbors=[10], batch_size=64)
        if args.compile:
            model = {compile}(model, dynamic=True)
        train(model, loader)
"""


def _project(compile_: str = "torch.compile") -> dict:
    return {
        "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
        "bench/__init__.py": "",
        "bench/utils/__init__.py": "from .utils import get_dataset\n",
        "bench/utils/utils.py": UTILS,
        "bench/train.py": TRAIN.format(compile=compile_),
    }


def test_the_transform_that_made_the_fed_adj_t_is_reported_where_it_is_made(tmp_path):
    root = write_project(tmp_path, _project())
    lines = whole_tree_lines(root, "--select", "GNN005", "--output-format", "concise")
    assert [line.split(" ")[0] for line in sorted(lines)] == ["bench/utils/utils.py:6:17:"], lines
    assert "(`batch.adj_t` is fed to compiled `model`, from train.py)" in next(iter(lines))


def test_nothing_without_the_compile(tmp_path):
    root = write_project(tmp_path, _project(compile_="list"))
    assert not whole_tree_lines(root, "--select", "GNN005")
