"""PyTorch Frame's ``DataLoader`` batches rows of a ``TensorFrame``: every
example has one size, so only the last partial batch of an epoch differs
(fixed_size.py, feeds.py; GNN007 suggests ``drop_last=True``). The loader may
reach the loop as a parameter of the training function."""
from __future__ import annotations

from gnnlint.engine import lint_source

TRAIN = """\
import torch
from torch.nn.parallel import DistributedDataParallel
from torch_frame.data import DataLoader


def train(model, epoch, loader, optimizer):
    for tf in tqdm(loader, desc=f"Epoch {epoch}"):
        loss = model(tf.to(0)).sum()
        loss.backward()
        optimizer.step()


def run(rank, args, dataset):
    train_loader = DataLoader(dataset.tensor_frame, batch_size=args.batch_size, shuffle=True)
    model = Trompt(channels=args.channels).to(rank)
    model = DistributedDataParallel(model, device_ids=[rank])
    model = torch.compile(model) if args.compile else model
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        train(model, epoch, train_loader, optimizer)
"""


def _gnn007(source: str) -> list:
    return [f for f in lint_source(source, "rows.py", project_facts=False, use_cache=False) if f.code == "GNN007"]


def test_row_batches_have_a_shorter_last_batch():
    found = _gnn007(TRAIN)
    assert [f.line for f in found] == [17], found
    assert "rows of a `TensorFrame`" in found[0].message and "drop_last=True" in found[0].message


def test_drop_last_or_dynamic_true_is_not_reported():
    assert not _gnn007(TRAIN.replace("shuffle=True)", "shuffle=True, drop_last=True)"))
    assert not _gnn007(TRAIN.replace("torch.compile(model)", "torch.compile(model, dynamic=True)"))


def test_other_loaders_passed_as_parameters_keep_their_reading():
    pyg = TRAIN.replace("from torch_frame.data import DataLoader", "from torch_geometric.loader import DataLoader")
    found = _gnn007(pyg)
    assert [f.line for f in found] == [17] and "variable-size batches" in found[0].message, found
