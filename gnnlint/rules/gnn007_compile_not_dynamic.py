from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import _NO_VALUE
from gnnlint.rules._compile_site import add_keyword_edit, compile_report_node
from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid
from gnnlint.versions import matches, recompile_limit_name, torch_label


# a compiled train step that GraphBolt minibatches reach through two helpers (the INVALID example and,
# with `dynamic=True`, its fix)
_GRAPHBOLT_TRAIN = """
import torch
import dgl.graphbolt as gb
from tqdm import tqdm

def create_dataloader(itemset, graph, features):
    datapipe = gb.ItemSampler(itemset, batch_size=1024, shuffle=True)
    datapipe = datapipe.sample_neighbor(graph, [10, 10])
    return gb.DataLoader(datapipe.fetch_feature(features, node_feature_keys=["feat"]))

@torch.compile
def train_step(minibatch, optimizer, model):
    out = model(minibatch.sampled_subgraphs, minibatch.node_features["feat"])
    loss = torch.nn.functional.cross_entropy(out, minibatch.labels)
    loss.backward()
    optimizer.step()
    return loss.detach()

def train_helper(dataloader, model, optimizer):
    dataloader = tqdm(dataloader, "Training")
    for step, minibatch in enumerate(dataloader):
        train_step(minibatch, optimizer, model)

def train(train_dataloader, model, optimizer):
    for epoch in range(10):
        train_helper(train_dataloader, model, optimizer)

def main(graph, features, train_set, valid_set, model, optimizer):
    train_dataloader, valid_dataloader = (
        create_dataloader(itemset, graph, features) for itemset in (train_set, valid_set)
    )
    train(train_dataloader, model, optimizer)
"""

class CompileNotDynamic(Rule):
    """
    ## What it does
    Flags a `torch.compile` call (or `@torch.compile`, `model.compile()`,
    `torch_geometric.compile`) without `dynamic=True` — no `dynamic=` at all,
    or `dynamic=False` — on a model or function that is fed **variable-size
    batches**: it is called inside `for batch in <loader>` where the loader is
    a PyG `NeighborLoader`, `LinkNeighborLoader`, `HGTLoader`,
    `ClusterLoader`, `ShaDowKHopSampler`, `GraphSAINT*Sampler`,
    `RandomNodeLoader` or a PyG `DataLoader` over a list of graphs, DGL's
    GraphBolt `gb.DataLoader` (neighbour-sampled minibatches) or
    `dgl.dataloading` loaders (`DataLoader`, `GraphDataLoader`), PyTorch
    Frame's `DataLoader` of table rows (without `drop_last` the last batch is
    shorter) — directly, through the local functions it is passed to
    (`train(model, loader)`), or from the step hooks of a Lightning-style
    module whose `*_dataloader()` returns such a loader, or from an ASE
    calculator's `calculate()`, which ASE calls with a new structure every MD
    / optimisation step; a compiled LightningModule given to
    `trainer.fit(...)` whose step methods take PyG `Batch`/`Data` (annotated)
    or read the per-graph structure of their batch (`batch.batch`,
    `batch.num_graphs`, `global_mean_pool(x, batch)` in the steps or
    `forward`), wherever its data module comes from, and a method or
    submodule such a module compiles on itself and calls (`self.encode =
    torch.compile(self.encode)` in `setup()`, `self.model.encoder =
    torch.compile(self.model.encoder)` run by `self.model(batch)`); the slices `x[start:end]` of a
    chunked `for start in range(0, n, size)` loop (the last chunk is shorter).
    A compiled train step (`@torch.compile def train_step(batch, ...)`, `step
    = torch.compile(fn)`, `@functools.partial(torch.compile, ...)`) called
    once per batch is a compile site like a compiled model; the loader may be
    built by a helper, passed down through parameters and wrapped in `tqdm`,
    `enumerate` or `zip`. A kernel compiled in a library and run by a function
    of its API on the graph it is handed (`sum_efeat(efeat, nfeat, graph)`)
    sees every caller's graph.

    ## Why is this bad?
    Every mini-batch of a sampled or graph-level loader has a different
    number of nodes and edges. A model compiled for static shapes guards on
    them:

    - **default (`dynamic=None`)** — the first batch of a new size fails the
      guard `tensor 'x' size mismatch at index 0` and recompiles the model;
      automatic dynamic shapes (torch ≥ 2.1) then re-trace the dimensions
      that changed as dynamic. On torch 2.13 that is one extra full compile
      (tens of seconds for a real GNN) at the start of every run — and a
      second one when a later batch trips another specialisation (e.g. a size
      of 0 or 1).
    - **`dynamic=False`** — every distinct batch shape is a new compile,
      until `torch._dynamo.config.recompile_limit` (8) is reached; after that
      the model **silently runs eager** for every new shape.

    Not flagged: full-batch training on one fixed graph (one shape), a
    compiled optimizer step (`torch.compile(opt.step)` — parameter shapes are
    fixed), batches padded to fixed sizes (PyG's `T.Pad`/`T.ToDense`, or a
    `pad…` call on the batch in the loop), `torch._dynamo.mark_dynamic` on
    every varying input of the call, a `dynamic=` gnnlint cannot evaluate, and
    loaders that gnnlint cannot trace to a PyG loader (it does not guess from
    names alone: a loader built in another file — a parameter no caller in
    the file binds, or a name an imported factory returns — counts when it is
    named like a loader and its batches are used as graphs, `batch.edge_index`,
    `batch.batch`, `minibatch.sampled_subgraphs`…, or by the compiled model's own
    `forward`, `data.batch`; also in a config-built trainer: `instantiate(cfg.trainer, models=[model])`).
    `torch.utils.data.DataLoader` (unless its `collate_fn` batches
    graphs: PyG's `Batch.from_data_list`/`Collater`, `dgl.batch`) and PyG's
    `DenseDataLoader` / `TemporalDataLoader` are not variable-size loaders
    here.

    ## Example
    ```python
    model = torch.compile(GraphSAGE(64, 128, num_layers=2))
    for batch in NeighborLoader(data, num_neighbors=[10, 10], batch_size=512):
        out = model(batch.x, batch.edge_index)
    ```

    ## Use instead
    ```python
    model = torch.compile(GraphSAGE(64, 128, num_layers=2), dynamic=True)
    for batch in NeighborLoader(data, num_neighbors=[10, 10], batch_size=512):
        out = model(batch.x, batch.edge_index)
    ```

    ## Fix safety
    Safe: adds `dynamic=True` (or replaces `dynamic=False`/`None` by
    `dynamic=True`). The compiled model computes the same values; it is
    traced once with symbolic sizes instead of once per shape. Not offered
    when the call forwards `**kwargs` (which may already carry `dynamic`).

    ## References
    - [torch.compile `dynamic`](https://pytorch.org/docs/stable/generated/torch.compile.html)
    - [Dynamic shapes, automatic dynamic (torch ≥ 2.1)](https://pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html)
    - [PyG: compiled GNNs — "use dynamic=True for mini-batches"](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    - [pytorch/pytorch#143709: `cache_size_limit` renamed `recompile_limit` (torch 2.7)](https://github.com/pytorch/pytorch/pull/143709)
    """

    code = "GNN007"
    name = "compile-not-dynamic"
    severity = "info"  # one extra compile with the default `dynamic=None` on torch 2.13 (E07)
    summary = "Model fed variable-size PyG batches compiled without `dynamic=True`"
    region = "compiled"
    triggers = (b"compile",)
    fix_applicability = "safe"

    VALID = (
        # an ASE calculator whose compiled models are dynamic: new structures every step compile nothing new
        Valid("""
import torch
from ase.calculators.calculator import Calculator
class Calc(Calculator):
    def __init__(self, models, **kwargs):
        Calculator.__init__(self, **kwargs)
        self.models = [torch.compile(m, dynamic=True) for m in models]
    def calculate(self, atoms=None, properties=None, system_changes=None):
        Calculator.calculate(self, atoms)
        for model in self.models:
            self.results = model(self.batch_of(atoms))
"""),
        # calculate() compiles again itself when the system changes: static shapes per system, by design
        Valid("""
import torch
from ase.calculators.calculator import Calculator
class Calc(Calculator):
    def calculate(self, atoms=None, properties=None, system_changes=None):
        if "numbers" in system_changes:
            self.compiled_model = torch.compile(self.model, dynamic=False)
        self.results = self.compiled_model(self.batch_of(atoms))
"""),
        # fixed-size point clouds (issue 10 item 5) with drop_last=True: every batch has one size
        Valid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.datasets import ModelNet
from torch_geometric.loader import DataLoader
def get_dataset(num_points):
    transform = T.SamplePoints(num_points)
    return ModelNet("data", "10", True, transform=transform), ModelNet("data", "10", False, transform=transform)
train_dataset, test_dataset = get_dataset(1024)
model = torch.compile(Net(), dynamic=False)
for data in DataLoader(train_dataset, 32, shuffle=True, drop_last=True):
    model(data.pos, data.batch)
"""),
        # dynamic=True
        Valid("""
import torch
from torch_geometric.loader import NeighborLoader
model = torch.compile(model, dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
        # full-batch training on one graph
        Valid("""
import torch
model = torch.compile(GCN(16, 7))
for epoch in range(200):
    out = model(data.x, data.edge_index)
    out.sum().backward()
"""),
        # a compiled optimizer step has fixed shapes
        Valid("""
import torch
from torch_geometric.loader import DataLoader
loader = DataLoader(graphs, batch_size=32)
opt_step = torch.compile(optimizer.step)
for batch in loader:
    model(batch.x, batch.edge_index).sum().backward()
    opt_step()
"""),
        # torch.utils.data.DataLoader over fixed-size tensors
        Valid("""
import torch
from torch.utils.data import DataLoader
model = torch.compile(model)
for x, y in DataLoader(dataset, batch_size=32):
    model(x)
"""),
        # batches padded to a fixed size
        Valid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.loader import DataLoader
dataset = TUDataset(root, "MUTAG", transform=T.Pad(max_num_nodes=64, max_num_edges=256))
loader = DataLoader(dataset, batch_size=32, drop_last=True)
model = torch.compile(model)
for data in loader:
    model(data.x, data.edge_index)
"""),
        # every varying input marked dynamic
        Valid("""
import torch
from torch_geometric.loader import NeighborLoader
model = torch.compile(model)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    torch._dynamo.mark_dynamic(batch.x, 0)
    torch._dynamo.mark_dynamic(batch.edge_index, 1)
    model(batch.x, batch.edge_index)
"""),
        # dynamic=True through **kwargs
        Valid("""
import torch
from torch_geometric.loader import DataLoader
COMPILE_KWARGS = {"dynamic": True, "mode": "max-autotune-no-cudagraphs"}
model = torch.compile(GIN(), **COMPILE_KWARGS)
for data in DataLoader(dataset, batch_size=32):
    model(data.x, data.edge_index, data.batch)
"""),
        # dynamic= from an argparse option whose default is True
        Valid("""
import argparse
import torch
from torch_geometric.loader import NeighborLoader
parser = argparse.ArgumentParser()
parser.add_argument("--dynamic", type=int, default=True)
args = parser.parse_args()
model = torch.compile(model, dynamic=args.dynamic)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
        # options gnnlint cannot read (a config object, a dict changed later): nothing said
        Valid("""
import torch
from torch_geometric.loader import DataLoader
compile_kwargs = {"mode": "default"}
if use_dynamic:
    compile_kwargs["dynamic"] = True
model = torch.compile(model, dynamic=cfg.compile.dynamic)
step = torch.compile(train_step, **compile_kwargs)
for data in DataLoader(dataset, batch_size=32):
    model(data.x, data.edge_index, data.batch)
    step(data)
"""),
        # a loader parameter nobody here binds, whose batches are plain tensors:
        # not assumed variable-size (the name alone is not enough)
        Valid("""
import torch

@torch.compile
def train_step(model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)

def train(model, train_loader):
    for x, y in train_loader:
        train_step(model, x, y).backward()
"""),
        # marked by a per-batch helper the loop calls
        Valid("""
import torch
from torch_geometric.loader import NeighborLoader
def mark(batch):
    torch._dynamo.mark_dynamic(batch.x, 0)
    torch._dynamo.mark_dynamic(batch.edge_index, 1)
    return batch
model = torch.compile(model)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    batch = mark(batch)
    model(batch.x, batch.edge_index)
"""),
        # the loop does not feed the batch to the compiled model
        Valid("""
import torch
from torch_geometric.loader import NeighborLoader
model = torch.compile(model)
z = model(data.x, data.edge_index)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    print(batch)
"""),
    )
    INVALID = (
        # an ASE calculator: ASE calls calculate() with each structure of an MD run or an optimisation,
        # and the graphs built from them vary in atom and edge counts
        Invalid("""
import torch
from ase.calculators.calculator import Calculator
class Calc(Calculator):
    def __init__(self, models, compile_mode=None, **kwargs):
        Calculator.__init__(self, **kwargs)
        self.models = models
        if compile_mode is not None:
            self.models = [torch.compile(m, mode=compile_mode) for m in self.models]
    def calculate(self, atoms=None, properties=None, system_changes=None):
        Calculator.calculate(self, atoms)
        batch = self.batch_of(atoms)
        for model in self.models:
            self.results = model(batch)
""", lines=(9,)),
        # fixed-size examples without drop_last: only the last partial batch differs (info,
        # "Pass `drop_last=True` to the loader rather than `dynamic=True`")
        Invalid("""
import torch
import torch_geometric.transforms as T
from torch_geometric.datasets import ModelNet
from torch_geometric.loader import DataLoader
dataset = ModelNet("data", transform=T.Compose([T.NormalizeScale(), T.FixedPoints(512)]))
model = torch.compile(Net())
loader = DataLoader(dataset[:800], 16, shuffle=True)
for data in loader:
    model(data.pos, data.batch)
""", lines=(7,)),
        Invalid("""
import torch
from torch_geometric.loader import NeighborLoader
loader = NeighborLoader(data, num_neighbors=[10, 10], batch_size=512)
model = torch.compile(model)
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
        # dynamic=False, the model passed to a training function
        Invalid("""
import torch
from torch_geometric.loader import DataLoader

def train(model, loader):
    for data in loader:
        data = data.to("cuda")
        model(data.x, data.edge_index, data.batch).sum().backward()

model = torch.compile(model, dynamic=False)
train(model, DataLoader(dataset, batch_size=64, shuffle=True))
""", lines=(10,), expected_fix="""
import torch
from torch_geometric.loader import DataLoader

def train(model, loader):
    for data in loader:
        data = data.to("cuda")
        model(data.x, data.edge_index, data.batch).sum().backward()

model = torch.compile(model, dynamic=True)
train(model, DataLoader(dataset, batch_size=64, shuffle=True))
"""),
        # Lightning-style: compiled in setup(), batches from train_dataloader()
        Invalid("""
import torch
from torch_geometric.loader import LinkNeighborLoader

class LinkPred(LightningModule):
    def setup(self, stage=None):
        self.encoder = torch.compile(self.encoder)

    def train_dataloader(self):
        return LinkNeighborLoader(self.data, num_neighbors=[15, 10], batch_size=1024)

    def training_step(self, batch, batch_idx):
        z = self.encoder(batch.x, batch.edge_index)
        return z.sum()
""", lines=(7,), expected_fix="""
import torch
from torch_geometric.loader import LinkNeighborLoader

class LinkPred(LightningModule):
    def setup(self, stage=None):
        self.encoder = torch.compile(self.encoder, dynamic=True)

    def train_dataloader(self):
        return LinkNeighborLoader(self.data, num_neighbors=[15, 10], batch_size=1024)

    def training_step(self, batch, batch_idx):
        z = self.encoder(batch.x, batch.edge_index)
        return z.sum()
"""),
        # a decorated train step called per batch
        Invalid("""
import torch
from torch_geometric.loader import HGTLoader

@torch.compile
def step(x_dict, edge_index_dict):
    return model(x_dict, edge_index_dict)

for batch in HGTLoader(data, num_samples=[512] * 2, batch_size=128, input_nodes="paper"):
    step(batch.x_dict, batch.edge_index_dict)
""", lines=(5,), expected_fix="""
import torch
from torch_geometric.loader import HGTLoader

@torch.compile(dynamic=True)
def step(x_dict, edge_index_dict):
    return model(x_dict, edge_index_dict)

for batch in HGTLoader(data, num_samples=[512] * 2, batch_size=128, input_nodes="paper"):
    step(batch.x_dict, batch.edge_index_dict)
"""),
        # a compiled train step fed GraphBolt minibatches: the loader is built
        # by a helper, unpacked from a generator, passed down two functions and
        # wrapped in tqdm/enumerate
        Invalid(_GRAPHBOLT_TRAIN, lines=(11,),
                expected_fix=_GRAPHBOLT_TRAIN.replace("@torch.compile\n", "@torch.compile(dynamic=True)\n", 1)),
        # step = torch.compile(fn), called per batch of DGL's GraphDataLoader
        Invalid("""
import torch
from dgl.dataloading import GraphDataLoader

def evaluate_step(model, graphs, labels):
    return (model(graphs, graphs.ndata["feat"]).argmax(-1) == labels).sum()

step = torch.compile(evaluate_step, dynamic=False)
loader = GraphDataLoader(dataset, batch_size=64)
for graphs, labels in loader if verbose else tqdm(loader):
    step(model, graphs, labels)
""", lines=(8,)),
        # functools.partial(torch.compile, ...): as a decorator (fixed there) and
        # as a shared alias (reported at each use, no fix: the alias serves others)
        Invalid("""
import functools
import torch
from torch_geometric.loader import DataLoader
compile_static = functools.partial(torch.compile, dynamic=False)

@functools.partial(torch.compile, dynamic=False)
def train_step(model, data):
    return model(data.x, data.edge_index, data.batch).sum()

net = compile_static(GIN())
for data in DataLoader(dataset, batch_size=32):
    train_step(net, data).backward()
""", lines=(7, 11), expected_fix="""
import functools
import torch
from torch_geometric.loader import DataLoader
compile_static = functools.partial(torch.compile, dynamic=False)

@functools.partial(torch.compile, dynamic=True)
def train_step(model, data):
    return model(data.x, data.edge_index, data.batch).sum()

net = compile_static(GIN())
for data in DataLoader(dataset, batch_size=32):
    train_step(net, data).backward()
"""),
        # a loader built in another file (a parameter no caller here binds, a
        # name an imported factory returns) whose batches are graph batches
        Invalid("""
import torch
from .data import build_loader

@torch.compile
def train_step(model, batch):
    return model(batch.x, batch.edge_index, batch.batch).sum()

def train(model, train_loader):
    for batch in train_loader:
        train_step(model, batch).backward()

def evaluate(model, cfg):
    val_loader = build_loader(cfg, split="val")
    for data in val_loader:
        model(data.x, data.edge_index)

model = torch.compile(GIN())
evaluate(model, cfg)
""", lines=(5, 18)),
        # torch.utils.data.DataLoader batching graphs (PyG's Batch.from_data_list, dgl.batch)
        Invalid("""
import dgl
import torch
from torch.utils.data import DataLoader

def collate(samples):
    graphs, labels = map(list, zip(*samples))
    return dgl.batch(graphs), torch.tensor(labels)

model = torch.compile(model)
for graph, labels in DataLoader(dataset, batch_size=32, collate_fn=collate):
    model(graph, graph.ndata["feat"])
""", lines=(10,)),
        # dynamic= from a store_true flag (False by default): reported, no fix
        # (the flag stays the user's switch)
        Invalid("""
import argparse
import torch
from torch_geometric.loader import NeighborLoader
parser = argparse.ArgumentParser()
parser.add_argument("--dynamic", action="store_true")
args = parser.parse_args()
model = torch.compile(model, dynamic=args.dynamic)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
""", lines=(8,), expected_fix="""
import argparse
import torch
from torch_geometric.loader import NeighborLoader
parser = argparse.ArgumentParser()
parser.add_argument("--dynamic", action="store_true")
args = parser.parse_args()
model = torch.compile(model, dynamic=args.dynamic)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(batch.x, batch.edge_index)
"""),
        # options from a dict literal through **kwargs and a helper's parameter
        Invalid("""
import torch
from torch_geometric.loader import DataLoader
COMPILE_OPTIONS = {"mode": "max-autotune-no-cudagraphs", "dynamic": False}

def build(net, dynamic=None):
    return torch.compile(net, dynamic=dynamic)

model = torch.compile(GIN(), **COMPILE_OPTIONS)
encoder = build(Encoder())
for data in DataLoader(dataset, batch_size=32):
    model(data.x, data.edge_index, data.batch)
    encoder(data.x, data.edge_index)
""", lines=(7, 9)),
        # mark_dynamic on x only: edge_index still varies
        Invalid("""
import torch
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GraphSAGE
model = GraphSAGE(16, 32, num_layers=2)
model.compile()
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    torch._dynamo.mark_dynamic(batch.x, 0)
    model(batch.x, batch.edge_index)
""", lines=(6,), expected_fix="""
import torch
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GraphSAGE
model = GraphSAGE(16, 32, num_layers=2)
model.compile(dynamic=True)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    torch._dynamo.mark_dynamic(batch.x, 0)
    model(batch.x, batch.edge_index)
"""),
        # the training loop's helper marks its batches, not the eval loop's
        Invalid("""
import torch
from torch_geometric.loader import NeighborLoader
def mark(batch):
    torch._dynamo.mark_dynamic(batch.x, 0)
    torch._dynamo.mark_dynamic(batch.edge_index, 1)
    return batch
model = torch.compile(net)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64):
    model(mark(batch).x, batch.edge_index)
infer = torch.compile(net)
for batch in NeighborLoader(data, num_neighbors=[10], batch_size=64, input_nodes=test_idx):
    infer(batch.x, batch.edge_index)
""", lines=(11,)),
        # a compiled step fed the chunks of a range loop: the last chunk is shorter, a second size
        Invalid("""
import torch
import dgl.graphbolt as gb
from tqdm import trange

@torch.compile
def predictions_step(model, h_src, h_dst):
    return model.predictor(h_src * h_dst).squeeze()

def compute_predictions(model, node_emb, seeds):
    for start in trange(0, seeds.shape[0], 4096):
        end = min(start + 4096, seeds.shape[0])
        predictions_step(model, node_emb[seeds[start:end, 0]], node_emb[seeds[start:end, 1]])
""", lines=(6,)),
    )

    def visit_Module(self, node: cst.Module) -> None:
        ctx = self.context
        for site_node, site in ctx.compile_sites:
            if site.target_kind == "optimizer_step":
                continue
            dynamic = ctx.compile_dynamic(site_node)
            if dynamic is True or dynamic is _NO_VALUE:
                continue
            feeds = [f for f in ctx.loader_feeds(site_node) if not f.padded and not (f.marked_any and not f.unmarked)]
            # fixed-size examples (`T.SamplePoints(n)`) with drop_last=True: every batch has one size
            feeds = [f for f in feeds if not (f.fixed and f.drop_last)]
            if not feeds:
                if dynamic is None:  # no loader: a kernel, a sweep, a dynamic sibling, graphs batched per call
                    self._report_without_loader(site_node, site)
                continue
            varying = [f for f in feeds if not f.fixed]
            if varying:
                self._report(site_node, site, dynamic, varying[0])
            else:
                self._report_last_batch(site_node, site, feeds[0])

    def _report_without_loader(self, site_node, site) -> None:
        """No loader feeds it, but a library function runs the compiled kernel on the graph it is handed
        (layer_feeds.py), a loop sizes its inputs anew (swept_shapes.py), the class compiles a sibling
        with ``dynamic=True`` on the same data (dynamic_siblings.py), or a function batches graphs cut
        from its inputs (assembled_batches.py) or pads them to their longest (padded_batches.py)."""
        ctx, head, fix = self.context, f"`{site.target}` is compiled without `dynamic=`", None
        if (layer := ctx.layer_input_feed(site_node)) is not None:
            message = (f"{head} and run by `{layer.layer}` on the graph "
                       f"{', '.join(f'`{name}`' for name in layer.inputs)} it is handed: its callers pass every "
                       f"batch's graph, with new node and edge counts, and the first call with a new size "
                       f"recompiles it.")
        elif (swept := ctx.swept_shape_feed(site_node)) is not None:
            message = (f"{head} and run by `{swept.func}` on tensors its `{swept.param}` sizes, which changes in "
                       f"every iteration of `for {swept.loop} in ...`: the first call with a new size recompiles it.")
        else:
            if (sibling := ctx.dynamic_sibling_feed(site_node)) is not None:
                why = (f"`{sibling.method}` runs it on the same per-call inputs as `{sibling.sibling}`, which "
                       f"this class compiles with `dynamic=True` because their sizes change")
            elif (assembled := ctx.assembled_batch_feed(site_node)) is not None:
                why = (f"`{assembled.func}` runs it on `{assembled.batch}`, a batch of graphs cut from each "
                       f"call's inputs with their own edges, whose node and edge counts change from call to call")
            elif (padded := ctx.padded_call_feed(site_node)) is not None:
                why = f"`{padded.func}` runs it on `{padded.pad}`, padding each call's sequences to their longest"
            else:
                return
            message = f"{head}, but {why}: the first call with a new size recompiles it."
            edit = add_keyword_edit(ctx, site_node, "dynamic", "True")
            fix = FixSpec("safe", "Pass `dynamic=True`", (edit,)) if edit is not None else None
        self.report(compile_report_node(site_node), f"{message} Pass `dynamic=True`.", fix, severity="info")

    def _report_last_batch(self, site_node, site, feed) -> None:
        """Fixed-size examples without ``drop_last``: only the last partial batch differs."""
        self.report(compile_report_node(site_node),
                    f"`{site.target}` is fed batches of fixed-size examples ({feed.fixed}) from `{feed.loader}` "
                    f"({feed.via}): only the last partial batch of an epoch has another size, and it recompiles "
                    f"`{site.target}` once. Pass `drop_last=True` to the loader rather than "
                    f"`dynamic=True`.",
                    severity="info")

    def _report(self, site_node, site, dynamic, feed) -> None:
        ctx = self.context
        what = f"`{site.target}`"
        batches = f"The batches come from `{feed.loader}` ({feed.via})"
        source = ctx.compile_option_source(site_node, "dynamic")  # `--dynamic` defaults to False
        version = ctx.options.torch_version
        if dynamic is False:
            head = f"{what} is compiled with `dynamic=False`{f' ({source})' if source else ''} but fed " \
                   f"variable-size batches: each new batch shape recompiles it, then it silently runs eagerly."
            cost = f"after `{recompile_limit_name(version)}` (8) recompiles the compiled code is skipped"
        elif matches(">=2.1", version):
            head = f"{what} is fed variable-size batches without `dynamic=`: the first batch of a new size recompiles it."
            cost = (f"{torch_label(version)} then switches to automatic dynamic shapes (one such recompile per "
                    f"graph-break fragment, more when another size specialises)")
        else:
            head = f"{what} is fed variable-size batches without `dynamic=`: each new batch shape recompiles it."
            cost = f"torch {version} has no automatic dynamic shapes"
        marks = ""
        if feed.marked_any and feed.unmarked:
            marks = f"; `mark_dynamic` does not cover {', '.join(f'`{u}`' for u in feed.unmarked)}"
        message = f"{head} {batches}; {cost}{marks}. Pass `dynamic=True`."
        fix = None
        arg = ctx.compile_kwarg(site_node, "dynamic")
        edit: Optional[NodeEdit] = None
        if source is not None:
            pass  # set through a name, a config or a flag: no fix (the user's plumbing stays)
        elif arg is not None:
            edit = NodeEdit(arg.value, "True")
        else:
            edit = add_keyword_edit(ctx, site_node, "dynamic", "True")
        if edit is not None:
            fix = FixSpec("safe", "Pass `dynamic=True`", (edit,))
        # dynamic=False ends in silent eager (an error); the default costs one compile (info)
        self.report(compile_report_node(site_node), message, fix, severity="error" if dynamic is False else None)
