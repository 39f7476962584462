"""A module whose method re-binds a submodule to its compiled self
(``self.gnn = torch.compile(self.gnn, mode="reduce-overhead")`` in
``optimize_for_inference()``) and whose forward runs it chunk by chunk:

- the forward's chunk loop runs a compiled call per step, so its per-step
  syncs are GNN013 (semantic/hot_loops.py: a forward running a held compiled
  submodule is an inference loop, not a layer running its submodules);
- the chunk's graph batch is built from a list filled per chunk
  (``for x in xs[start:end]: data_list.append(Data(x=x))``): a shorter last
  chunk, a second size for the compile (semantic/chunks.py, GNN006/GNN007).

heldout12, plastic-pdivgnn ``plgnn/models.py:117,142,178``."""
from __future__ import annotations

from gnnlint.engine import lint_source

SOURCE = """\
import torch
from torch_geometric.data import Batch, Data


class Wrapper(torch.nn.Module):
    def __init__(self, gnn):
        super().__init__()
        self.gnn = gnn

    def optimize_for_inference(self, compile: bool = False):
        if compile:
            self.gnn = torch.compile(self.gnn, mode="reduce-overhead", fullgraph=False)

    @torch.no_grad()
    def forward(self, xs, chunk_size: int = 16):
        n_steps = len(xs)
        predictions = []
        for start in range(0, n_steps, chunk_size):
            end = min(start + chunk_size, n_steps)
            data_list = []
            for x in xs[start:end]:
                data_list.append(Data(x=x))
            batch = Batch.from_data_list(data_list)
            out = self.gnn(batch)
            predictions.append(out.detach().cpu())
        return torch.cat(predictions)
"""


def _codes(source: str) -> list:
    return sorted((f.line, f.code) for f in lint_source(source, "wrapper.py", project_facts=False, use_cache=False))


def test_held_compiled_chunk_loop_in_forward():
    assert _codes(SOURCE) == [(12, "GNN006"), (12, "GNN007"), (25, "GNN013")]


def test_not_compiled_or_not_held_or_unfilled_is_not_reported():
    # no compile: a forward looping over its submodule is a layer, and nothing is compiled
    assert _codes(SOURCE.replace('torch.compile(self.gnn, mode="reduce-overhead", fullgraph=False)', "self.gnn")) == []
    # the compile binds another attribute: the loop runs the eager self.gnn
    assert (25, "GNN013") not in _codes(SOURCE.replace("self.gnn = torch.compile(", "self.fast = torch.compile("))
    # the list is filled with a value that does not come from the slice: one size per chunk
    unfilled = SOURCE.replace("data_list.append(Data(x=x))", "data_list.append(Data(x=xs[0]))")
    assert not {c for _, c in _codes(unfilled)} & {"GNN006", "GNN007"}


TRAINER = """\
import torch


class Trainer:
    def __init__(self, model, loss):
        self.model = model
        self._loss_fn = loss
        self._global_step = 0

    def fit(self, generator, optimizer):
        avg_loss = 0.0
        for batch in generator:
            inputs, labels = batch
            optimizer.zero_grad()
            batch_loss = self._loss_fn(self.model(inputs), labels)
            batch_loss.backward()
            optimizer.step()
            self._global_step += 1
            avg_loss += batch_loss
            if self._global_step % 100 == 0:
                avg_loss = float(avg_loss) / 100
                print(avg_loss)
                avg_loss = 0.0

    def compile(self, mode=None, dynamic=None):
        self.model = torch.compile(self.model, mode=mode, dynamic=dynamic)
"""


def test_accumulated_backpropagated_loss_is_a_tensor():
    # `avg_loss += batch_loss` of a loss it calls `.backward()` on: `float(avg_loss)` syncs (deepchem
    # torch_model.py:455, the logging steps of the training loop of a model `compile()` compiles)
    assert _codes(TRAINER) == [(21, "GNN013")]
    assert _codes(TRAINER.replace("            batch_loss.backward()\n", "")) == []
