from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid
from gnnlint.rules._compile_site import compile_report_node

# a compiled train step called once per GraphBolt minibatch (the INVALID example and, without the mode, its fix)
_GRAPHBOLT_STEP = """
import torch
import dgl.graphbolt as gb
from tqdm import tqdm

@torch.compile(mode="reduce-overhead")
def train_step(minibatch, model):
    return model(minibatch.sampled_subgraphs, minibatch.node_features["feat"]).sum()

def train(dataloader, model):
    for minibatch in tqdm(dataloader):
        train_step(minibatch, model).backward()

train(gb.DataLoader(datapipe), model)
"""


class ReduceOverheadDynamic(Rule):
    """
    ## What it does
    Flags `torch.compile(..., mode="reduce-overhead")` — and the other ways
    to turn on CUDA graphs: `mode="max-autotune"` and
    `options={"triton.cudagraphs": True}` — on a model or function that is fed
    **variable-size batches** by a PyG loader (`NeighborLoader`,
    `LinkNeighborLoader`, `HGTLoader`, `ClusterLoader`, `ShaDowKHopSampler`,
    `GraphSAINT*Sampler`, a PyG `DataLoader` over a list of graphs, DGL's
    GraphBolt `gb.DataLoader`…), found the same way as GNN007 (the compiled
    model or train step called inside
    `for batch in <loader>`, through the functions it is passed to, or from
    the step hooks of a Lightning-style module whose dataloaders yield such
    batches).

    ## Why is this bad?
    A CUDA graph replays a recorded sequence of kernels on fixed memory
    addresses with fixed sizes. Inductor's CUDA-graph trees record **one graph
    per distinct input shape**, even with `dynamic=True`: every new batch size
    is a fresh recording (a warm-up run, a capture, and a private memory pool
    that stays allocated). With sampled subgraphs almost every batch is a new
    shape, so the run spends its time recording graphs and holding memory for
    each of them instead of replaying one; torch warns after
    `cudagraph_dynamic_shape_warn_limit` (8) distinct sizes. This holds for
    every torch 2.x release.

    Without a PyG loader gnnlint cannot see the batch sizes, but a compile
    with `dynamic=True` says its input shapes change: such a site whose
    result runs on every batch of a loop over a loader is flagged too.

    Not flagged: full-batch training on one fixed graph (one shape — the
    case CUDA graphs are for), batches padded to fixed sizes (PyG's
    `T.Pad`/`T.ToDense`, or a `pad…` call on the batch in the loop), a
    compiled optimizer step, and programs where gnnlint cannot trace the
    batches to a PyG loader.

    `options={"triton.cudagraphs": True}` is exactly what
    `mode="reduce-overhead"` sets (inductor's `list_mode_options("reduce-overhead")`
    is `{"triton.cudagraphs": True}`, read on torch 2.13), so it costs the same;
    `mode="max-autotune"` sets it too (`bench/evidence/e21_max_autotune_cudagraphs.py`).

    ## Example
    ```python
    model = torch.compile(model, mode="reduce-overhead", dynamic=True)
    for batch in NeighborLoader(data, num_neighbors=[10, 10], batch_size=1024):
        out = model(batch.x, batch.edge_index)
    ```

    ## Use instead
    ```python
    model = torch.compile(model, dynamic=True)  # default mode: no CUDA graphs
    for batch in NeighborLoader(data, num_neighbors=[10, 10], batch_size=1024):
        out = model(batch.x, batch.edge_index)
    ```
    or pad every batch to one of a few fixed sizes (`T.Pad`) and keep
    `mode="reduce-overhead"`.

    ## Fix safety
    Unsafe: removing `mode=...` changes which kernels run and how fast, not
    what they compute, but whether the default mode or padding to buckets is
    the better answer depends on the workload. Only offered for `mode=`.

    ## References
    - [torch.compile modes](https://pytorch.org/docs/stable/generated/torch.compile.html)
    - [CUDAGraph Trees: one graph per input shape](https://pytorch.org/docs/stable/torch.compiler_cudagraph_trees.html)
    - [PyG `Pad` transform](https://pytorch-geometric.readthedocs.io/en/latest/generated/torch_geometric.transforms.Pad.html)
    """

    code = "GNN006"
    name = "reduce-overhead-dynamic"
    summary = "CUDA graphs (`mode=\"reduce-overhead\"`) on a model fed variable-size PyG batches"
    region = "compiled"
    triggers = (b"reduce-overhead", b"max-autotune", b"cudagraphs")
    fix_applicability = "unsafe"

    VALID = (
        # an ASE calculator that compiles in calculate() itself, again whenever the system changes:
        # CUDA graphs recorded for the structure it is given, by design
        Valid("""
import torch
from ase.calculators.calculator import Calculator
class Calc(Calculator):
    def __init__(self, model, **kwargs):
        Calculator.__init__(self, **kwargs)
        self.model = model
    def calculate(self, atoms=None, properties=None, system_changes=None):
        Calculator.calculate(self, atoms)
        batch = self.batch_of(atoms)
        if "numbers" in system_changes:
            self.compiled_model = torch.compile(self.model, dynamic=False, mode="reduce-overhead")
        self.results = self.compiled_model(batch)
"""),
        # fixed-size point clouds: one shape (two with the last partial batch), not one per batch
        Valid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.datasets import ModelNet
from torch_geometric.loader import DataLoader
dataset = ModelNet("data", transform=T.SamplePoints(1024))
model = torch.compile(Net(), mode="reduce-overhead")
for data in DataLoader(dataset, 32, shuffle=True):
    model(data.pos, data.batch)
"""),
        # full-batch: one shape, CUDA graphs are fine
        Valid("""
import torch
model = torch.compile(model, mode="reduce-overhead")
for epoch in range(100):
    model(data.x, data.edge_index).sum().backward()
"""),
        # default mode on a loader-fed model
        Valid("""
import torch
from torch_geometric.loader import NeighborLoader
model = torch.compile(model, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
        # padded to a fixed size
        Valid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.loader import DataLoader
loader = DataLoader(TUDataset(root, "MUTAG", transform=T.Pad(64, 256)), batch_size=32, drop_last=True)
model = torch.compile(model, mode="reduce-overhead")
for data in loader:
    model(data.x, data.edge_index)
"""),
        Valid("""
import torch
model = torch.compile(model, mode="max-autotune-no-cudagraphs")
"""),
        # `dynamic=True` on a full-batch loop: one graph, one shape
        Valid("""
import torch
model = torch.compile(model, mode="reduce-overhead", dynamic=True)
for epoch in range(100):
    model(data.x, data.edge_index).sum().backward()
    optimizer.step()
"""),
        # a mode gnnlint cannot read (a config object): nothing said
        Valid("""
import torch
from torch_geometric.loader import NeighborLoader
model = torch.compile(model, mode=cfg.compile_mode, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
    )
    INVALID = (
        # no PyG loader, but `dynamic=True` says the shapes change, and the helper's caller runs
        # the compiled module on every batch
        Invalid("""
import torch
def compile_model(model):
    compiled = torch.compile(model.module, dynamic=True, mode="max-autotune")
    model.module = compiled
def train(model, loader, optimizer):
    compile_model(model)
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
""", lines=(4,), expected_fix="""
import torch
def compile_model(model):
    compiled = torch.compile(model.module, dynamic=True)
    model.module = compiled
def train(model, loader, optimizer):
    compile_model(model)
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
"""),
        Invalid("""
import torch
from torch_geometric.loader import NeighborLoader
loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=512)
model = torch.compile(model, mode="reduce-overhead", dynamic=True)
for batch in loader:
    model(batch.x, batch.edge_index)
""", lines=(5,), expected_fix="""
import torch
from torch_geometric.loader import NeighborLoader
loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=512)
model = torch.compile(model, dynamic=True)
for batch in loader:
    model(batch.x, batch.edge_index)
"""),
        Invalid("""
import torch
from torch_geometric.loader import DataLoader

@torch.no_grad()
def predict(model, loader):
    return [model(b.x, b.edge_index, b.batch) for b in loader]

model = torch.compile(model, options={"triton.cudagraphs": True})
predict(model, DataLoader(graphs, batch_size=256))
""", lines=(9,)),
        # the mode is an argparse default: reported, no fix (the option stays)
        Invalid("""
import argparse
import torch
from torch_geometric.loader import NeighborLoader
parser = argparse.ArgumentParser()
parser.add_argument("--compile-mode", default="reduce-overhead")
args = parser.parse_args()
model = torch.compile(model, mode=args.compile_mode, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
""", lines=(8,), expected_fix="""
import argparse
import torch
from torch_geometric.loader import NeighborLoader
parser = argparse.ArgumentParser()
parser.add_argument("--compile-mode", default="reduce-overhead")
args = parser.parse_args()
model = torch.compile(model, mode=args.compile_mode, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
        # the mode comes from a functools.partial alias: reported, no fix
        Invalid("""
from functools import partial
import torch
from torch_geometric.loader import NeighborLoader
fast_compile = partial(torch.compile, mode="reduce-overhead")
model = fast_compile(model, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
""", lines=(6,), expected_fix="""
from functools import partial
import torch
from torch_geometric.loader import NeighborLoader
fast_compile = partial(torch.compile, mode="reduce-overhead")
model = fast_compile(model, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
        # a compiled train step called once per GraphBolt minibatch
        Invalid(_GRAPHBOLT_STEP, lines=(6,),
                expected_fix=_GRAPHBOLT_STEP.replace('@torch.compile(mode="reduce-overhead")', "@torch.compile()")),
        Invalid("""
import torch
from torch_geometric.loader import DataLoader
loader = DataLoader(graphs, batch_size=256)
model = torch.compile(model, dynamic=True, mode="max-autotune")
for data in loader:
    model(data.x, data.edge_index, data.batch)
""", lines=(5,), expected_fix="""
import torch
from torch_geometric.loader import DataLoader
loader = DataLoader(graphs, batch_size=256)
model = torch.compile(model, dynamic=True)
for data in loader:
    model(data.x, data.edge_index, data.batch)
"""),
    )

    def visit_Module(self, node: cst.Module) -> None:
        ctx = self.context
        for site_node, site in ctx.compile_sites:
            if site.target_kind == "optimizer_step":
                continue
            how = ctx.cudagraphs_setting(site_node)
            if how is None:
                continue
            # padded batches, or fixed-size examples (`T.SamplePoints(n)`): one shape, or two with the
            # last partial batch -- two recordings, not one per batch
            feeds = [f for f in ctx.loader_feeds(site_node) if not f.padded and not f.fixed]
            batch_loop = None if feeds else self._dynamic_batch_loop(site_node)
            padded = None if feeds or batch_loop else ctx.padded_call_feed(site_node)
            if not feeds and batch_loop is None and padded is None:
                continue
            source = ctx.compile_option_source(site_node, "mode") if how != "options" else None
            setting = {"reduce-overhead": '`mode="reduce-overhead"`',
                       "max-autotune": '`mode="max-autotune"` (which turns on CUDA graphs)',
                       "options": '`options={"triton.cudagraphs": True}`'}[how] + (f" ({source})" if source else "")
            if feeds:
                message = (f"`{site.target}` is compiled with {setting} but fed variable-size batches: nearly every "
                           f"batch re-records a CUDA graph and keeps its memory pool. CUDA graphs are recorded per "
                           f"distinct input shape, even with `dynamic=True`; the batches come from "
                           f"`{feeds[0].loader}` ({feeds[0].via}). Use the default mode or pad batches to fixed "
                           f"sizes (`T.Pad`).")
            elif padded is not None:  # no loader: a function pads each call's sequences to their longest
                message = (f"`{site.target}` is compiled with {setting} and run by `{padded.func}` on "
                           f"`{padded.pad}`, which pads each call's sequences to the longest of them: CUDA graphs "
                           f"are recorded per distinct input shape, so each new length re-records a graph and "
                           f"keeps its memory pool. Use the default mode or pad to a fixed length "
                           f"(`padding=\"max_length\"`).")
            else:  # no PyG loader, but `dynamic=True` says the shapes of the batches it runs on change
                message = (f"`{site.target}` is compiled with {setting} and `dynamic=True` (its input shapes are "
                           f"expected to change) and runs on every batch of {batch_loop}: CUDA graphs are recorded "
                           f"per distinct input shape, even with `dynamic=True`, so each new batch shape re-records "
                           f"a graph and keeps its memory pool. Use the default mode or pad batches to fixed sizes.")
            self.report(compile_report_node(site_node), message, None if source else self._fix(site_node))

    def _dynamic_batch_loop(self, site_node) -> Optional[str]:
        """A site compiled with ``dynamic=True`` whose result runs on every batch of a
        loop over a loader (not a full-batch loop: one graph, one shape): the loop's role."""
        ctx = self.context
        if ctx.compile_dynamic(site_node) is not True:
            return None
        for ref in ctx.compiled_refs(site_node):
            for call in ctx.ref_calls(ref):
                drive = ctx.step_drive(call)
                if drive is not None and drive.per == "batch" and drive.loop is not None:
                    return {"training": "a training loop", "evaluation": "an evaluation loop"}.get(drive.role, "a loop")
        return None

    def _fix(self, site_node):
        ctx = self.context
        call = ctx.compile_call_node(site_node)
        arg = ctx.compile_kwarg(site_node, "mode")
        if call is None or arg is None or not any(a is arg for a in call.args):  # set in a shared partial
            return None
        args = list(call.args)
        index = next(i for i, a in enumerate(args) if a is arg)
        del args[index]
        if index == len(args) and args:  # removed the last argument
            args[-1] = args[-1].with_changes(comma=arg.comma)
        new_call = call.with_changes(args=args)
        return FixSpec("unsafe", "Use the default mode (no CUDA graphs)",
                       (NodeEdit(call, ctx.module.code_for_node(new_call)),))
