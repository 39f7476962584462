from __future__ import annotations

import libcst as cst

from gnnlint.rules._sync import SyncRule
from gnnlint.rules.base import Invalid, Valid



# A scatter helper whose `dim_size is None` branch syncs; compiled callers pass a size
# (VALID), unless another compiled model reaches it without one (INVALID).
_SCATTER_HELPERS = """
import torch
from typing import Optional
def scatter_sum(src, index, out=None, dim_size: Optional[int] = None):
    if out is None:
        if dim_size is not None:
            out = torch.zeros(dim_size)
        else:
            out = torch.zeros(int(index.max()) + 1)
    return out.scatter_add_(0, index, src)
def segment_sum(data, ids, num_segments: int):
    return scatter_sum(data, ids, dim_size=num_segments)
def scatter_mean(src, index, dim_size: Optional[int] = None):
    return scatter_sum(src, index, None, dim_size)
class Net(torch.nn.Module):
    def forward(self, x, index):
        return segment_sum(x, index, x.shape[0])
class Other(torch.nn.Module):
    def forward(self, x, index):
        return scatter_mean(x, index)
model = torch.compile(Net())
"""
# a compiled helper that fills `dim_size` when None (`{fill}`), then sizes its output from it:
# the `else` needing it None never runs; the fill itself runs compiled (VALID / INVALID contrast)
# a constructor picks the submodule in an if/else and compiles one arm's choice
# (`{first}` / `{second}`: the compile statement in the else arm, or after the if)
_ARM_COMPILED = """\
import torch
class Hier(torch.nn.Module):
    def forward(self, x):
        return x * x.sum().item()
class Flat(torch.nn.Module):
    def forward(self, x):
        return x + 1
class Net(torch.nn.Module):
    def __init__(self, hierarchical):
        super().__init__()
        if hierarchical:
            self.gnn = Hier()
        else:
            self.gnn = Flat()
{first}
{second}
    def forward(self, x):
        return self.gnn(x)
"""
_COMPILE_GNN = "self.gnn = torch.compile(self.gnn, dynamic=True)"

_FILLED_SIZE = """\
def {name}(src, index, dim_size=None):
    if dim_size is None:
        dim_size = {fill}
    if dim_size is not None:
        size = dim_size
    else:
        size = int(index.max()) + 1
    return src.new_zeros(size)
class Net(torch.nn.Module):
    def forward(self, x, i):
        return {name}(x, i)
model = torch.compile(Net())
"""

class HostSync(SyncRule):
    """
    ## What it does
    Flags device-to-host synchronisations — `.item()`, `.tolist()`, `.cpu()`,
    `.numpy()` (also `.numpy(force=True)`), `float(t)` / `int(t)` / `bool(t)`, using a tensor as a
    condition (`if loss > best:`, `if mask.any():`), `print(t)` (also of an
    f-string of a tensor), a tensor element as a slice bound
    (`x[ptr[i]:ptr[i + 1]]`: an int conversion; measured in
    `bench/evidence/e27_tensor_slice_bounds.py`, not reported where every compile
    site of the file passes `fullgraph=True`) — inside code that runs under
    `torch.compile`: a compiled function, the `forward` of a compiled module
    and everything it calls.

    ## Why is this bad?
    Each of these is a **graph break**: dynamo stops the graph, runs the op in
    Python, and starts a new graph after it, so the compiled model runs as
    several smaller graphs with Python (and a device sync) in between.

    gnnlint only flags values it can tell are tensors (results of torch calls,
    model outputs, attributes of a PyG batch, what is computed from them, and
    parameters every caller in the file passes a tensor for); when unsure, it
    stays quiet. Branches guarded by `torch.compiler.is_compiling()` (and code
    after `if is_compiling(): return ...`) are not flagged. An `assert` on a
    tensor (`assert x.all()`, `assert (x > 0).all(), "msg"`) is not flagged:
    dynamo rewrites it into `torch._assert_async`, no break (measured on torch
    2.13, `bench/evidence/e17_assert.py`); `assert not x.any()` still breaks
    and is flagged. Nor is an f-string of a tensor that is not printed
    (`msg = f"{(~mask).sum()} atoms"`): dynamo formats it after the graph, no
    break (torch 2.13, `bench/evidence/e28_fstring_tensor.py`). `"%.3f" % t`
    and `k in t` are flagged: dynamo gives up the whole frame and runs it
    eagerly (0 graphs; `fullgraph=True` fails), while `"{:.3f}".format(t)`
    and builtin `min`/`max` of a tensor are traced with no break (torch 2.13,
    `bench/evidence/e29_sync_spellings.py`) and are reported only as GNN013
    when they run once per step. The same syncs
    once per step in a training or evaluation loop that runs compiled code
    are GNN013 (step-host-sync).

    ## Example
    ```python
    class GCN(torch.nn.Module):
        def forward(self, x, edge_index, batch):
            num_graphs = int(batch.max()) + 1  # graph break
            return global_mean_pool(self.conv(x, edge_index), batch, num_graphs)

    model = torch.compile(GCN())
    ```

    ## Use instead
    ```python
    class GCN(torch.nn.Module):
        def forward(self, x, edge_index, batch, num_graphs: int):
            return global_mean_pool(self.conv(x, edge_index), batch, num_graphs)
    ```

    ## Fix safety
    No fix: moving a value out of compiled code changes what the function
    takes or returns, which only its author can decide.

    ## References
    - [torch.compile: graph breaks](https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html)
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    """

    code = "GNN001"
    name = "host-sync"
    summary = "Device-to-host sync (`.item()`, `float(t)`, tensor truthiness…) in a compiled region"
    region = "compiled"
    bare_fstring_syncs = False  # dynamo formats it after the graph: no break (e28)
    traced_syncs = False  # `str.format` and builtin min/max of a tensor: traced, no break (e29)

    VALID = (
        # `str.format` and builtin `max` of a tensor are traced: no break (bench/evidence/e29_sync_spellings.py);
        # `%` of a Python number is no tensor at all
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, n: int):
        note = "{:.3f}".format(x.sum()) + "%d rows" % n
        return max(x, x * 0.5), note
model = torch.compile(Net())
"""),
        # an f-string of a tensor (not printed) is formatted after the graph: no break (evidence e28)
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        mask = x.any(dim=1)
        msg = f"{(~mask).sum()} rows are zero"
        return x * mask[:, None], msg
model = torch.compile(Net())
"""),
        # the last operand of `or` / `and` is returned, not tested; `not` of a Python flag is no sync
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, training: bool):
        finite = x.shape[0] > 0 and torch.isfinite(x).all()
        skip = not training
        return x, finite, skip
model = torch.compile(Net())
"""),
        # dynamo traces `.to("cpu")` in compiled code (evidence e10: 0 graph breaks); it is a per-step sync
        # only in eager code (GNN013), and reading the copy on the host (`.numpy()`) is what breaks the graph
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x.to("cpu") + 1
model = torch.compile(Net())
"""),
        # a value compared with a string is a Python bool whatever the value is (a tensor never equals a str)
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, queries, structure):
        if self.query_name_dict[structure] == "2u-DNF":
            queries = queries[:, :-1]
        return queries
model = torch.compile(Net())
"""),
        # a comprehension filter on part of a dict's tuple key (`for (ntype, name), feat in x.items()`) tests a
        # string, not a tensor
        Valid("""
import torch
@torch.compile
def step(minibatch, model):
    feats = {t: f.float() for (t, name), f in minibatch.node_features.items() if name == "feat"}
    return model(feats)
"""),
        # torch.allclose of CPU tensors (`torch.tensor(list)`): a bool, but no device to wait for
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        if torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])):
            return x
        return -x
model = torch.compile(Net())
"""),
        # a CPU tensor built from Python or numpy data: reading it is no device sync (shared/cases policy)
        Valid("""
import numpy as np
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        table = torch.from_numpy(np.arange(4))
        scale = torch.tensor([1.0, 2.0])
        return x * float(scale.max()) + table.sum().item()
model = torch.compile(Net())
"""),
        # a torch._dynamo.disable method and a transformers-style guard: never traced
        Valid("""
import torch
from transformers.utils import is_torchdynamo_compiling
class Net(torch.nn.Module):
    def forward(self, x):
        self.log(x)
        if is_torchdynamo_compiling():
            return x
        return x * x.sum().item()
    @torch._dynamo.disable
    def log(self, x):
        print(x.norm().item())
model = torch.compile(Net())
"""),
        # a compound guard: the branch never runs under torch.compile
        # a module compiling its own forward under a flag: `if not self.compile:` runs eagerly;
        # and a tensor assert, which dynamo turns into torch._assert_async (no break, no sync)
        Valid("""
import torch
class Net(torch.nn.Module):
    def __init__(self, compile=False):
        super().__init__()
        self.compile = compile
        if self.compile:
            self.forward = torch.compile(options={"triton.cudagraphs": True}, dynamic=True)(self.forward)
    def forward(self, x, z):
        if not self.compile:
            assert z.max().item() < 100
        assert torch.max(x) < 0.99
        return x * 2
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        if self.track and not torch.compiler.is_compiling():
            self.norms.append(x.norm().item())
        return x
model = torch.compile(Net())
"""),
        Valid("""
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
    def forward(self, x):  # never compiled, and a layer loop is not a training loop
        for _ in range(3):
            x = self.lin(x)
            if x.sum() > 0:
                x = -x
        return x
"""),
        Valid("""
import torch
@torch.compile
def f(x, d: dict):
    for k, v in d.items():
        x = x + v
    if not torch.compiler.is_compiling():
        print(x.item())
    return x
"""),
        # after an early return under compile, the rest runs eagerly only
        Valid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():
            return x
        print(x.sum().item())
        return x
model = torch.compile(Net())
"""),
        # per-step syncs around a compiled model are GNN013, not a graph break
        Valid("""
import torch
model = torch.compile(model)
for batch in loader:
    loss = model(batch.x).sum()
    loss.backward()
    optimizer.step()
    print(loss.item())
"""),
        # only the inner model is compiled: the Lightning step methods run
        # eagerly (their per-step syncs are GNN013)
        Valid("""
import torch
import lightning.pytorch as pl
class Lit(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def configure_model(self):
        self.net = torch.compile(self.net)
    def training_step(self, batch, batch_idx):
        loss = self.net(batch).mean()
        self.log("loss", loss.item())
        return loss
"""),
        # the `dim_size is None` branch of a helper never runs compiled: every
        # compiled call passes a size (a parameter annotated `int`)
        Valid(_SCATTER_HELPERS),
        # a later `else` of `if dim_size is not None:` after `if dim_size is None: dim_size = ...`:
        # the name was filled, that branch never runs (the fill itself does: INVALID below)
        Valid("""
import torch
def scatter(src, index, dim_size=None):
    if dim_size is not None:
        size = dim_size
    else:
        size = int(index.max()) + 1
    return src.new_zeros(size)
""" + _FILLED_SIZE.format(name="scatter_filled", fill="index.shape[0] + 1")),
        # only the else arm's `Flat` is compiled: `self.gnn` holds `Flat` at the compile call
        Valid(_ARM_COMPILED.format(first="            " + _COMPILE_GNN, second="")),
    )
    INVALID = (
        # `"%.3f" % t` and `k in t` make dynamo give up the frame (bench/evidence/e29_sync_spellings.py)
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        total = x.sum()
        note = "sum %.3f" % total
        if 3 in x.argmax(dim=1):
            return x, note
        return -x, note
model = torch.compile(Net())
""", lines=(6, 7)),
        # printing an f-string of a tensor still breaks the graph (print), unlike building one (VALID)
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        print(f"sum {x.sum()}")
        return x + 1
model = torch.compile(Net())
""", lines=(5,)),
        # `not` / a non-last `or` operand reads a tensor's truth value outside an `if` too (the gradient
        # check of Lightning's issue 4956, run on a compiled forward's outputs here)
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        out = x * 2
        ok = not (torch.isnan(out).any() or torch.isinf(out).any())
        bad = torch.isnan(out).any() or torch.isinf(out).any()
        return out, ok, bad
model = torch.compile(Net())
""", lines=(6, 7)),
        # torch.allclose / torch.equal / Tensor.allclose of device tensors return a Python bool:
        # a data-dependent operator, a graph break (bench/evidence/e24_bool_comparisons.py)
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, y):
        if torch.allclose(x, torch.zeros_like(x)):
            return y
        same = torch.equal(x, y) or x.allclose(y)
        return x if same else y
model = torch.compile(Net())
""", lines=(5, 7, 7)),
        # a comprehension's filter tests each element's truth: an element of a tensor is a 0-d tensor,
        # and so is each element of the list it builds
        Invalid("""
import torch
class Align(torch.nn.Module):
    def forward(self, x, ids):
        kept = [i for i in torch.unique(ids) if i != -1]
        for k in kept:
            print(int(k))
        return x, kept
align = torch.compile(Align())
""", lines=(5, 7)),
        # a trainer compiles the model it is given; nothing here constructs the trainer, but its parameter
        # is declared a `Net` (`Optional[Net]` too): Net's forward runs compiled
        Invalid("""
import torch
from typing import Optional
class Net(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x
class Trainer:
    def __init__(self, model: Optional[Net], use_compile: bool = False):
        if use_compile:
            model = torch.compile(model)
        self.model = model
""", lines=(6,)),
        # compiled after the if: either arm's class runs compiled
        Invalid(_ARM_COMPILED.format(first="", second="        " + _COMPILE_GNN), lines=(4,)),
        # ... but it does when a compiled caller may pass None
        Invalid(_SCATTER_HELPERS + "other = torch.compile(Other())\n", lines=(9,)),
        # the fill itself runs compiled when a caller leaves the size None
        Invalid("\nimport torch\n" + _FILLED_SIZE.format(name="scatter", fill="index.max().item() + 1"), lines=(5,)),
        # a compiled LightningModule: the Trainer compiles its step methods too
        Invalid("""
import torch
import lightning.pytorch as pl
class Lit(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def forward(self, batch):
        return self.net(batch)
    def training_step(self, batch, batch_idx):
        loss = self(batch).mean()
        self.log("loss", loss.item())
        return loss
module = torch.compile(Lit(torch.nn.Linear(2, 2)))
pl.Trainer().fit(module)
""", lines=(12,)),
        # a MessagePassing layer inside a ModuleList of the compiled model
        Invalid("""
import torch
from torch_geometric.nn import MessagePassing
class Conv(MessagePassing):
    def message(self, x_j):
        if torch.isnan(x_j).any():
            x_j = torch.nan_to_num(x_j)
        return x_j
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList(Conv() for _ in range(3))
    def forward(self, x, edge_index):
        for conv in self.convs:
            x = conv(x, edge_index)
        return x
model = torch.compile(Net())
""", lines=(6,)),
        Invalid("""
import torch
class GCN(torch.nn.Module):
    def forward(self, x, edge_index):
        n = int(edge_index.max()) + 1
        return x * x.sum().item()

model = torch.compile(GCN())
""", lines=(5, 6)),
        Invalid("""
import torch
@torch.compile
def train_step(model, batch, optimizer):
    loss = model(batch.x).sum()
    print(f"loss {loss:.4f}")
    loss.backward()
    optimizer.step()
    return loss
""", lines=(6,)),
        # a module that compiles its own forward: it and the blocks it appends to a ModuleList run compiled
        Invalid("""
import torch
class Block(torch.nn.Module):
    def forward(self, x):
        return x * x.sum().item()
class Net(torch.nn.Module):
    def __init__(self, compile=False):
        super().__init__()
        self.blocks = torch.nn.ModuleList()
        for _ in range(3):
            block = Block()
            self.blocks.append(block)
        if compile:
            self.forward = torch.compile(fullgraph=True)(self.forward)
    def forward(self, x):
        for i in range(3):
            x = self.blocks[i](x)
        return x / x.norm().item()
""", lines=(5, 18)),
        # `not` takes the tensor's truth value in Python: dynamo cannot rewrite this assert
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        assert not torch.isnan(x).any(), "NaN in the input"
        return x * 2
model = torch.compile(Net())
""", lines=(5,)),
        # a submodule compiled on its own: its forward runs compiled, the parent's and a sibling's do not
        Invalid("""
import torch
class Enc(torch.nn.Module):
    def forward(self, x):
        return x * x.sum().item()
class Head(torch.nn.Module):
    def forward(self, x):
        return x / x.norm().item()
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Enc()
        self.head = Head()
    def forward(self, x):
        return self.head(self.encoder(x)).sum().item()
model = Net()
model.encoder = torch.compile(model.encoder)
""", lines=(5,)),
        Invalid("""
import torch
class Conv(torch.nn.Module):
    def forward(self, x):
        return x * x.sum().item()
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([Conv() for _ in range(3)])
        for i, conv in enumerate(self.convs):
            self.convs[i] = torch.compile(conv)
    def forward(self, x):
        for conv in self.convs:
            x = conv(x)
        return x.norm().item()
""", lines=(5,)),
        # library mode: every module's forward is compiled
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x / x.norm().item()
""", lines=(5,), options=(("assume_compiled", "modules"),)),
        # `.numpy(force=True)` copies a device tensor to the host from inside the compiled forward
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        scores = torch.softmax(x, dim=1)
        self.seen.append(scores.numpy(force=True))
        return scores
model = torch.compile(Net())
""", lines=(6,)),
    )

    def visit_Assert(self, node: cst.Assert) -> None:
        """Dynamo rewrites ``assert <tensor>`` (``assert x.max() < 1``, with no
        message or a constant one) into ``torch._assert_async``: no graph
        break, no host sync (measured, torch 2.13). Not through ``not`` /
        ``and`` / ``or``, which take the tensor's truth value in Python (a
        break: ``assert not torch.isnan(x).any()``); a sync inside the test
        (``assert x.max().item() < n``) is still one."""
        rewritten = (node.msg is None or isinstance(node.msg, cst.SimpleString)) \
            and not isinstance(node.test, (cst.UnaryOperation, cst.BooleanOperation))
        if not rewritten:
            self._check_condition(node.test)

    def _flag(self, node: cst.CSTNode, what: str) -> None:
        if self.context.in_error_path(node):
            return  # runs only after something failed
        compiled = self.context.compiled_region(node)
        if compiled is not None:
            self.report(node, f"{what} breaks the graph in the {compiled}. Keep the value on the device "
                              f"or move it out of the compiled code.")
