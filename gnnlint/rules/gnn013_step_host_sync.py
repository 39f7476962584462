from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from gnnlint.context import MODEL, SCALAR, TENSOR
from gnnlint.rules._sync import SyncRule
from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Valid

# Programs the VALID and INVALID examples share, each a contrast of one change:
# optimizer steps compiled in a list only when a construction passes `compile_kwargs`
_COMBINED_STEPS = """
import torch
class Combined:
    def __init__(self, optimizers, compile_kwargs=None):
        self.optimizers = optimizers
        if compile_kwargs is None:
            self.step_fns = [opt.step for opt in optimizers]
        else:
            self.step_fns = [torch.compile(opt.step, **compile_kwargs) for opt in optimizers]
    def step(self):
        for step_fn in self.step_fns:
            step_fn()
def train(model, loader, opts):
    optimizer = Combined(opts)
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        print(loss.item())
"""
# a Lightning Callback's per-step hook (and, where the example compiles the module, an epoch hook)
_GRAD_STATS_CALLBACK = """
import torch
import lightning
from lightning.pytorch.callbacks import Callback
class Lit(lightning.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model
    def training_step(self, batch, batch_idx):
        return self.model(batch).sum()
class GradStats(Callback):
    def on_after_backward(self, trainer, pl_module):
        for name, p in pl_module.named_parameters():
            pl_module.log(name, p.grad.abs().max().item())
"""

# accumulators a fix cannot move out of the loop (the INVALID example, and its unchanged "fix")
_UNFIXABLE_ACCUMULATORS = """
import torch
def train():
    total = 0.0
    correct = 0
    for batch in loader:
        optimizer.zero_grad()
        out = model(batch.x)
        loss = out.sum()
        loss.backward()
        optimizer.step()
        total += float(loss)
        print(total)
        correct += int(out.sum())
    return correct
"""

# By the loop's cadence (the drive's ``per``): which loop, how often the sync runs there, and what to add
_LOOP = {"batch": "{role} loop", "epoch": "a full-batch {role} loop", "step": "{role} loop"}
_CADENCE = {"batch": "on every batch of", "epoch": "every epoch of", "step": "every step of"}
_CADENCE_NOTE = {"epoch": " (one step per epoch)"}
_GUARD_ADVICE = "Keep the values on the device and read them together, or less often."
_ENTRY_ADVICE = "Keep values on the device, and copy what must leave it in one transfer."
_ARTICLE = {"training": "a training", "evaluation": "an evaluation", "": "a"}
_ADVICE = {
    "batch": "Keep the value on the device and read it once per epoch.",
    "epoch": "Keep the value on the device and read it only when you log it.",
    "step": "Keep the value on the device and read it when the loop ends.",
}


class StepHostSync(SyncRule):
    """
    ## What it does
    Flags device-to-host synchronisations — `.item()`, `.tolist()`, `.cpu()`,
    `.numpy()`, `float(t)` / `int(t)` / `bool(t)`, using a tensor as a
    condition, `print(t)`, f-strings, `%`- and `str.format`-formatting of a
    tensor, `k in t`, and builtin `min`/`max` over tensors — that run once per step
    of a training or evaluation loop **that drives compiled code**: the model
    it runs or the step it takes is compiled (`torch.compile(model)`,
    `model.compile()`, an `@torch.compile` train step, a class compiled in
    another file of the project). The step may be one a framework takes, with
    no loop in the project: ASE calls a calculator's `calculate()` once per
    MD / optimisation step (it drives compiled code when the calculator
    compiles its models), and Lightning calls a `Callback`'s batch hooks
    (`on_train_batch_end`, `on_after_backward`, `on_before_optimizer_step`,
    ...) and a LightningModule's `backward` / `optimizer_step` /
    `optimizer_zero_grad` once per step (they drive compiled code when the project's Lightning
    training does: a compiled LightningModule, or a model class of the project
    that compiles the model it wraps in its forward). The compiled model may
    be reached through the objects that hold it: a helper that stores a
    compiled module on the model it is handed (`model.module =
    torch.compile(...)`) compiles what the caller's `model(batch)` runs; a
    compile assigned to a held object's method (`self.potential.model.forward
    = torch.compile(...)`) compiles what that object's class calls. A
    training function's validation pass (`for batch in val_loader:` calling
    the compiled model) runs once per batch too. Helpers those steps call in
    other files (metric accumulators' `update`, graph building) carry the
    step's per-step syncs, and say which loop or framework step calls them.

    ## Why is this bad?
    Each one blocks the host until the device has finished all queued work —
    a **device sync every step** that removes the overlap of CPU and GPU work
    which a compiled model needs to be fast on small graphs. In full-batch
    training the epoch loop is the step loop: one step per epoch.

    A program that never compiles gets no finding: its per-step syncs are not
    a torch.compile hazard (the policy of the labelled cases). Set
    `assume-compiled = "modules"` to see them while preparing to compile.
    In mini-batch training the hot loop is the batch loop: an epoch loop
    around it is not one. Calls once per epoch outside the batch loop, after
    training, in preprocessing, on Python or numpy numbers, and on CPU
    tensors are not flagged; nor is a bare `t.numpy()`, which raises on a
    device tensor (so `t` is on the CPU; in `t.cpu().numpy()` the `.cpu()`
    is the sync). `t.numpy(force=True)` copies from any device: it is
    flagged. Syncs inside compiled code are GNN001.

    A sync under a step-counter test (`if global_step % 500 == 0:`,
    `if step <= 100 or step % 50 == 0:`) is reported with that condition:
    it costs a sync on those steps, not on every one ("syncs the device on
    the steps where `global_step % 500 == 0` holds, in a training loop").

    ## Example
    ```python
    model = torch.compile(model)
    for batch in loader:
        loss = criterion(model(batch.x, batch.edge_index), batch.y)
        loss.backward()
        optimizer.step()
        total_loss += float(loss)  # sync every batch
    ```

    ## Use instead
    ```python
    model = torch.compile(model)
    total_loss = torch.zeros((), device=device)
    for batch in loader:
        loss = criterion(model(batch.x, batch.edge_index), batch.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach()
    print(float(total_loss))  # once per epoch
    ```

    ## Fix safety
    Unsafe, and offered only for the metric-accumulation pattern where the
    rewrite is mechanical: `acc += float(t)`, `acc += int(t)` or
    `acc += t.item()` (optionally multiplied or divided by a non-tensor, e.g.
    `* data.num_graphs`) in a loop, where `acc` is a plain local name that

    - is initialised to a number literal (`acc = 0`, `acc = 0.0`) before the
      loop, in a block that contains the loop, and bound nowhere else;
    - is not read anywhere in the loop but by its own `+=`, nor before it, nor
      in a nested function, lambda or comprehension;
    - is read after the loop, outside any compiled region or hot loop.

    The fix accumulates on the device — `acc += t.detach()` (`.detach()` is
    left out for counts such as `(pred == y).sum()`, which carry no
    gradient) — and wraps every read after the loop in `float(acc)` (or
    `int(acc)` for a count started at an integer), so the value leaves the
    device once. The initialisation is kept: `0.0 + tensor` is a new tensor,
    so the first `+=` never writes into `t`, and when the loop runs zero times
    `float(acc)` is the literal again.

    Why this is equivalent: nothing but the `+=` touches `acc` until the loop
    ends, and every read after it converts back to the Python number the
    original held. Counts (`int(...)` of a sum of a boolean tensor) are exact
    (int64). Float sums are the same up to float precision: the device adds in
    the tensor's dtype (float32 for a float32 loss) where the original added
    Python floats (a half-precision loss would add in half precision: check
    the dtype of what you accumulate), and an integer literal start read back
    as `float(acc)` is `0.0` where the original kept `0` when the loop did not
    run. A `.cpu()` before the sync (`t.cpu().item()`) is dropped with it. An `int(t)` of a
    value not known to be integral (it truncates every step), or a `.item()` of
    unknown dtype added to an integer start, is not rewritten.

    It is unsafe because the analysis guesses that `t` is a tensor, and
    because an accumulator that now lives on the device is a change a reader
    of the code may not expect (e.g. a checkpoint that pickles it).


    ## References
    - [CUDA semantics: asynchronous execution](https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution)
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    """

    code = "GNN013"
    name = "step-host-sync"
    summary = "Device-to-host sync once per step of a loop that runs compiled code"
    # a hot loop; in a file that never compiles the context says it drives
    # nothing (unless another file's facts or assume-compiled say otherwise)
    region = "compiled_or_hot"
    fix_applicability = "unsafe"
    bare_numpy_syncs = False  # `t.numpy()` works only on a CPU tensor: no device sync

    VALID = (
        # the same spellings of Python numbers read nothing from the device
        Valid("""
import torch
model = torch.compile(model)
for step, (x, y) in enumerate(loader):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    log.append("step {:05d}".format(step) + " of %d" % len(loader) + str(max(step, 1)))
"""),
        # a CPU benchmark script: its device is the CPU and nothing else, so reading a loss waits for nothing
        # `.to("cpu", non_blocking=True)`: an asynchronous copy, the host does not wait for it
        Valid("""
import torch
model = torch.compile(model)
for x, y in loader:
    out = model(x).sum()
    out.backward()
    optimizer.step()
    host.append(out.detach().to("cpu", non_blocking=True))
"""),
        Valid("""
import torch
device = torch.device("cpu")
model = torch.compile(GCN(16, 32, 7).to(device))
data = data.to(device)
for epoch in range(200):
    loss = model(data.x, data.edge_index).sum()
    loss.backward()
    optimizer.step()
    print(loss.item())
"""),
        # `.numpy(force=True)` of a tensor known to be on the CPU copies nothing from the device
        Valid("""
import torch
model = torch.compile(model)
for x, y in loader:
    out = model(x.to("cuda"))
    preds.append(torch.tensor([1, 2]).numpy(force=True))
"""),
        # methods other than forward called on the compiled wrapper run the original module eagerly
        # (bench/evidence/e22_compiled_wrapper_methods.py): this loop runs nothing compiled
        Valid("""
import torch
class AutoEncoder(torch.nn.Module):
    def encode(self, x):
        return x * 2
    def decode(self, z):
        return z / 2
    def forward(self, x):
        return self.decode(self.encode(x))
model = torch.compile(AutoEncoder())
for x in loader:
    z = model.encode(x.to("cuda"))
    print(model.decode(z).sum().item())
"""),
        # ... nor does the optimizer over its parameters: its step trains what only eager methods run
        Valid("""
import torch
agent = torch.compile(Agent())
opt = torch.optim.Adam(agent.parameters())
for obs in loader:
    loss = agent.get_action_and_value(obs.to("cuda"))[1].mean()
    loss.backward()
    opt.step()
    print(loss.item())
"""),
        # the model is called before the helper compiles its submodule: eager
        Valid("""
import torch
def compile_model(model):
    model.module = torch.compile(model.module, dynamic=True)
def train(model, loader):
    for batch in loader:
        loss = model(batch.to("cuda")).sum()
        loss.backward()
        print(loss.item())
    compile_model(model)
"""),
        # a graph straight from the loader (never moved to the device): its `.cpu()` copies nothing
        Valid("""
import torch
model = torch.compile(Net())
for i, (graph, cells) in enumerate(loader):
    pred = model(graph.to("cuda"))
    graphs.append(graph.cpu())
"""),
        # compiled steps kept in a list only when a parameter is set, and the one construction leaves it
        # unset: the loop steps eager optimizers
        Valid(_COMBINED_STEPS),
        # a Lightning Callback in a project that never compiles: Lightning calls the hook every step,
        # but nothing it trains runs compiled
        Valid(_GRAD_STATS_CALLBACK),
        # an ASE calculator that never compiles: ASE calls calculate() every MD step, but nothing runs compiled
        Valid("""
import torch
from ase.calculators.calculator import Calculator
class Calc(Calculator):
    def __init__(self, models, **kwargs):
        Calculator.__init__(self, **kwargs)
        self.models = [m.to("cuda") for m in models]
    def calculate(self, atoms=None, properties=None, system_changes=None):
        Calculator.calculate(self, atoms)
        outs = [model(self.batch_of(atoms))["energy"] for model in self.models]
        self.results = {"energy": torch.stack(outs).mean().cpu().item()}
"""),
        # the calculator compiles its models, but get_hessian() is an on-demand analysis call, not calculate()
        Valid("""
import torch
from ase.calculators.calculator import Calculator
class Calc(Calculator):
    def __init__(self, models, **kwargs):
        Calculator.__init__(self, **kwargs)
        self.models = [torch.compile(m, dynamic=True) for m in models]
    def get_hessian(self, atoms):
        return self.models[0](self.batch_of(atoms))["hessian"].cpu().numpy()
"""),
        # a class named like a calculator that does not derive from ASE's: no framework calls it per step
        Valid("""
import torch
class Calculator:
    pass
class Calc(Calculator):
    def __init__(self, models):
        self.models = [torch.compile(m, dynamic=True) for m in models]
    def calculate(self, atoms):
        for model in self.models:
            print(model(atoms).cpu())
"""),
        # the same trainer, never compiled; and a local class's module .train() mode switch
        Valid("""
import torch
from train_base import BaseTrainer
class Trainer(BaseTrainer):
    def __init__(self, cfg):
        super().__init__()
        self.model = Net(cfg).cuda()
def main(cfg, datapipe):
    trainer = Trainer(cfg)
    for data in datapipe:
        loss = trainer.train(data["x"], data["y"])
        print(loss.detach().cpu())
"""),
        Valid("""
import torch
from base import Wrapper
class Holder(Wrapper):
    def __init__(self, net):
        super().__init__()
        self.model = torch.compile(net)
def main(net, datapipe):
    holder = Holder(net)
    for data in datapipe:
        holder.train()
        print(holder.state_dict(), data["x"].cpu())
"""),
        # the helper compiles a copy to warm it up and returns the original: the loop runs it eagerly
        Valid("""
import torch
def warm(model, example):
    compiled = torch.compile(model)
    compiled(example)
    return model
def main(loader, example):
    model = warm(Net(), example)
    for x in loader:
        print(model(x).sum().item())
"""),
        # CPU tensors (issue 10 item 5): reading them syncs nothing; the `.cpu()` copy is the sync
        Valid("""
import numpy as np
import torch
model = torch.compile(Net())
losses = []
for data in loader:
    loss = model(data.x, data.edge_index).sum()
    loss.backward()
    optimizer.step()
    losses.append(1.0)
    history = torch.tensor(losses)
    print(history.mean().item(), float(torch.as_tensor([0.5, 1.5]).sum()))
    weights = torch.from_numpy(np.ones(3))
    if weights.max() > 1:
        print(weights)
"""),
        # `disable=True` returns the model unchanged: nothing runs compiled
        Valid("""
import torch
model = torch.compile(model, disable=True)
for batch in loader:
    loss = model(batch).sum()
    loss.backward()
    optimizer.step()
    print(loss.item())
"""),
        # a program that never compiles: per-step syncs are not a torch.compile hazard
        Valid("""
import torch
total = 0.0
for batch in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(batch.x), batch.y)
    loss.backward()
    optimizer.step()
    total += float(loss)
"""),
        # a Data object's string attribute in an f-string
        Valid("""
import torch
model = torch.compile(model)
for batch in loader:
    model(batch.x, batch.edge_index).sum().backward()
    optimizer.step()
    key = f"{batch.split}_mask"
"""),
        # mini-batch training: the evaluation run once per epoch is not per step
        Valid("""
import torch
model = torch.compile(model)
def train():
    for batch in train_loader:
        optimizer.zero_grad()
        model(batch.x, batch.edge_index).sum().backward()
        optimizer.step()
@torch.no_grad()
def test():
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    return int((pred[data.test_mask] == data.y[data.test_mask]).sum())
for epoch in range(100):
    train()
    acc = test()
"""),
        Valid("""
import torch
model = torch.compile(model)
for epoch in range(10):
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
print(loss.item())  # once, after training
"""),
        Valid("""
import torch
model = torch.compile(model)
losses = []
for batch in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(batch.x), batch.y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
"""),
        Valid("""
import numpy as np
import torch
model = torch.compile(model)
for row in np.arange(10):
    print(float(row))
"""),
        Valid("""
import torch
model = torch.compile(model)
for epoch in range(10):
    for batch in loader:
        loss = model(batch.x).sum()
        loss.backward()
        optimizer.step()
    print(loss.item())  # once per epoch, outside the batch loop
"""),
        # cells straight from the loader (never moved to the device): `.numpy()`
        # of a device tensor would raise, so it reads a CPU tensor
        Valid("""
import torch
model = torch.compile(Net())
for graph, cells in loader:
    graph = graph.to("cuda")
    pred = model(graph.x, graph.edge_index).detach()
    faces.append(torch.squeeze(cells).numpy())
"""),
        # a trainer object whose model is not compiled: the loop drives nothing compiled
        Valid("""
import torch
class Trainer:
    def __init__(self, model):
        self.model = model.to("cuda")
    def train(self, graph):
        loss = self.model(graph).sum()
        loss.backward()
        return loss
def main(model, loader):
    trainer = Trainer(model)
    for graph in loader:
        loss = trainer.train(graph)
        print(loss.detach().cpu())
"""),
        # the file compiles something, but not what this loop runs
        Valid("""
import torch
encoder = torch.compile(Encoder())
def pretrain():
    for batch in loader:
        loss = decoder(batch.x).sum()
        loss.backward()
        optimizer.step()
        print(loss.item())
"""),
        # a loader collates each batch on the host: reading it before the iteration moves it syncs nothing
        Valid("""
import torch
model = torch.compile(Net())
for batch in loader:
    ids = batch.sid.tolist()
    if skip(batch):
        print(batch.sid.tolist())
        continue
    out = model(batch.to("cuda"))
    out.sum().backward()
"""),
        # the same relaxation loop in a project that never compiles: no finding
        Valid("""
from relax import relax
class Trainer:
    def __init__(self, model):
        self.model = model
    def predict(self, batch):
        return self.model(batch)
    def run_relaxations(self):
        for batch in self.relax_loader:
            relaxed = relax(batch=batch, trainer=self, steps=300)
            print(relaxed.energy.sum().item())
"""),
        # a pass over a loader of its own (`self.validate()` every `eval_every` steps) is not per step
        # of the training loop: only its own loop's body is (INVALID below); what runs once per pass is not
        Valid("""
import torch
class Trainer:
    def __init__(self, model):
        self.model = torch.compile(model)
    def validate(self):
        total = torch.zeros(())
        for batch in self.val_loader:
            total += self.model(batch).sum()
        print(total.item())
    def train(self, loader):
        for step, batch in enumerate(loader):
            self.model(batch).sum().backward()
            self.optimizer.step()
            if step % 100 == 0:
                self.validate()
"""),
    )
    INVALID = (
        # `wandb.log` turns each tensor value of its dict into a Python number: one sync per step; a float
        # or an `.item()` value (flagged where it is read) is not a second one
        Invalid("""
import torch
import wandb
model = torch.compile(model)
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    wandb.log({"loss": loss, "lr": 0.01})
    wandb.log({"lr": scheduler.get_last_lr()[0], "epoch": epoch})
""", lines=(9,)),
        # `str.format`, `%` and builtin `max` of a tensor each read it (bench/evidence/e29_sync_spellings.py)
        Invalid("""
import torch
model = torch.compile(model)
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    log.append("{:.3f}".format(loss))
    log.append("%.3f" % loss)
    best = max(loss, best)
""", lines=(8, 9, 10)),
        # `.numpy(force=True)` copies a device tensor to the host (a bare `.numpy()` would raise on it)
        Invalid("""
import torch
model = torch.compile(model)
for x, y in loader:
    out = model(x.to("cuda"))
    preds.append(out.numpy(force=True))
""", lines=(6,)),
        # ... but once the name was copied to the host (`mask = mask.cpu()`), that copy is the sync, reported once
        Invalid("""
import torch
model = torch.compile(model)
for x, y in loader:
    out = model(x.to("cuda"))
    mask = y.to("cuda")
    if mask is not None:
        mask = mask.cpu()
    if mask is not None:
        counts.append(mask.numpy(force=True))
""", lines=(8,)),
        # `.to("cpu")` (any spelling) is the same device-to-host copy as `.cpu()`: reported, once; reading
        # its result, the rows of a `zip` of such copies, elements of its `.tolist()` is no further sync
        Invalid("""
import torch
model = torch.compile(model)
for x, y in loader:
    logits = model(x)
    logits.sum().backward()
    optimizer.step()
    ids = logits.detach().argmax(-1).to("cpu").long()
    kinds = logits.to(device=torch.device("cpu"))
    labels = [(a.item(), b.item()) for a, b in zip(ids, kinds)]
    for k in torch.unique(ids).tolist():
        counts[k] += (ids == k).sum().item()
""", lines=(8, 9)),
        # an outer loop's counter: `epoch == 0` holds on every batch of the first epoch
        Invalid("""
import torch
model = torch.compile(model)
for epoch in range(10):
    for i, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        if epoch == 0:
            print(loss.item())
""", lines=(10,)),
        # conditional logging inside the hot loop counts, on the first batch of each pass too (the labelling
        # policy: "including ... conditional logging inside it")
        Invalid("""
import torch
model = torch.compile(model)
for epoch in range(10):
    for i, batch in enumerate(loader):
        out = model(batch)
        out.sum().backward()
        optimizer.step()
        if i == 0 and log_images:
            print(out.mean().item())
""", lines=(10,)),
        # a model compiled only under a flag (`compile(m) if flag else m`, `if flag: m = compile(m)`) is still the
        # model: the evaluation function's loop runs it on every batch (the class is imported: no other hint)
        Invalid("""
import torch
from torch_frame.nn import Trompt
model = Trompt(channels=8).to("cuda")
model = torch.compile(model, dynamic=True) if args.compile else model
@torch.no_grad()
def test(loader):
    accum = 0
    for tf in loader:
        pred = model(tf.to("cuda"))
        accum += float((tf.y == pred.argmax(dim=-1)).sum())
    return accum
""", lines=(11,)),
        Invalid("""
import torch
from torch_frame.nn import Trompt
model = Trompt(channels=8).to("cuda")
if args.compile:
    model = torch.compile(model, dynamic=True)
def test(loader):
    preds = []
    for tf in loader:
        preds.append(model(tf.to("cuda")).cpu())
    return preds
""", lines=(10,)),
        # `model.forward(x)` on the compiled wrapper runs the compiled program (`model.encode(x)` would not)
        Invalid("""
import torch
class AutoEncoder(torch.nn.Module):
    def encode(self, x):
        return x * 2
    def forward(self, x):
        return self.encode(x)
model = torch.compile(AutoEncoder())
for x in loader:
    z = model.forward(x.to("cuda"))
    print(z.sum().item())
""", lines=(11,)),
        # the validation pass of each epoch runs the compiled model on every batch: per-step too;
        # the loop over the same loader that runs no model is not
        Invalid("""
import torch
model = torch.compile(model, dynamic=True)
def train(loader, val_loader, optimizer):
    for epoch in range(10):
        for batch in loader:
            model(batch.to("cuda")).sum().backward()
            optimizer.step()
        val_loss = 0.0
        for batch in val_loader:
            val_loss += model(batch.to("cuda")).sum().item()
        for batch in val_loader:
            print(batch.to("cuda").x.sum().item())
""", lines=(11,)),
        # a helper compiles a submodule of the model it is handed (`model.module = compiled`): the caller's
        # loop runs the compiled module through `model(...)` from then on
        Invalid("""
import torch
def compile_model(model, loader):
    compiled_module = torch.compile(model.module, dynamic=True)
    model.module = compiled_module
def train(model, loader):
    compile_model(model, loader)
    for batch in loader:
        loss = model(batch.to("cuda")).sum()
        loss.backward()
        print(loss.item())
""", lines=(11,)),
        # a trainer compiles the model it is given under a flag, then stores it (`self.model = model`); an
        # evaluation model picked by a local helper returning one of its parameters (`default(ema, model)`)
        # may be that compiled model too: both loops run it
        Invalid("""
import torch
def default(v, d):
    return v if v is not None else d
class Trainer:
    def __init__(self, model, loader, use_torch_compile=False, ema_model=None):
        if use_torch_compile:
            model = torch.compile(model)
        self.model = model
        self.ema_model = ema_model
        self.loader = loader
    def __call__(self, steps):
        for step in range(steps):
            loss = self.model(next(self.loader))
            loss.backward()
            print(loss.item())
        eval_model = default(self.ema_model, self.model)
        for batch in self.loader:
            print(eval_model(batch).item())
""", lines=(16, 19)),
        # an evaluation name choosing between an EMA copy and the compiled model may hold the compiled model
        Invalid("""
import torch
def evaluate(model, loader):
    for batch in loader:
        print(model(batch).sum().item())
def run(model, ema, loader):
    model = torch.compile(model)
    eval_model = ema.module if ema is not None else model
    evaluate(eval_model, loader)
""", lines=(5,)),
        # ... also at a script's top level, where the loop runs the chosen name itself
        Invalid("""
import torch
model = torch.compile(model)
eval_model = ema.module if ema is not None else model
for batch in loader:
    print(eval_model(batch).sum().item())
""", lines=(6,)),
        # a tensor copied to the host under `if hasattr(sid, "cpu"):` is the host copy after that `if`
        # (the earlier value reaches past it only when it is no tensor): the copy syncs, reading it does not
        Invalid("""
import torch
model = torch.compile(model)
for batch in loader:
    out = model(batch.to("cuda"))
    sid = out.argmax()
    if hasattr(sid, "cpu"):
        sid = sid.cpu()
    if hasattr(sid, "item"):
        print(sid.item())
    tid = out.argmin()
    if isinstance(tid, torch.Tensor):
        tid = tid.cpu()
    print(int(tid))
""", lines=(8, 13)),
        # a rollout keeps every step's graph: the graph was moved to the device, its `.cpu()` copies it back
        Invalid("""
import torch
model = torch.compile(Net())
for i, (graph, cells) in enumerate(loader):
    graph = graph.to("cuda")
    pred = model(graph)
    graphs.append(graph.cpu())
""", lines=(7,)),
        # ... and when a construction sets it, the loop steps compiled optimizers
        Invalid(_COMBINED_STEPS.replace("Combined(opts)", 'Combined(opts, compile_kwargs={"fullgraph": False})'),
                lines=(19,)),
        # a Callback's batch hooks run once per step of a Lightning training of a compiled
        # LightningModule; its epoch hook does not
        Invalid(_GRAD_STATS_CALLBACK + """\
    def on_train_epoch_end(self, trainer, pl_module):
        print(pl_module.total.item())
lit = torch.compile(Lit(Net()))
""", lines=(14,)),
        # an ASE calculator compiles its committee of models (under a flag); ASE calls calculate() once
        # per MD / optimisation step: the copies to the host there (and in the helper it calls) sync every step
        Invalid("""
import torch
from ase.calculators.calculator import Calculator, all_changes
class Calc(Calculator):
    def __init__(self, models, compile_mode=None, **kwargs):
        Calculator.__init__(self, **kwargs)
        self.models = models
        if compile_mode is not None:
            self.models = [torch.compile(m, mode=compile_mode, dynamic=True) for m in self.models]
    def _node_e0(self, batch):
        return self.models[0].atomic_energies_fn(batch["node_attrs"]).detach().cpu().numpy()
    def calculate(self, atoms=None, properties=None, system_changes=all_changes):
        Calculator.calculate(self, atoms)
        batch = self.batch_of(atoms)
        energies = []
        for i, model in enumerate(self.models):
            out = model(batch)
            if i == 0:
                node_e0 = self._node_e0(batch)
            energies.append(out["energy"].detach())
        energy = torch.mean(torch.stack(energies), dim=0).cpu()
        self.results = {"energy": energy.item(), "node_e0": node_e0}
""", lines=(11, 21)),
        # the training step is a method the trainer inherits from a base class in another file:
        # it runs the compiled self.model (issue 10: the loop drives compiled code)
        Invalid("""
import torch
from train_base import BaseTrainer
class Trainer(BaseTrainer):
    def __init__(self, cfg):
        super().__init__()
        self.model = torch.compile(Net(cfg))
def main(cfg, datapipe):
    trainer = Trainer(cfg)
    for data in datapipe:
        loss = trainer.train(data["x"], data["y"])
        print(loss.detach().cpu())
""", lines=(12,)),
        # a batch handed with the trainer holding the compiled model to another file's function, which
        # runs the model on it (a relaxation); the same batch once moved (in place) to the device syncs
        Invalid("""
import torch
from relax import relax
class Trainer:
    def __init__(self, model):
        self.model = torch.compile(model)
    def predict(self, batch):
        return self.model(batch)
    def run_relaxations(self):
        for batch in self.relax_loader:
            if done(batch):
                print(batch.sid.tolist())
                continue
            relaxed = relax(batch=batch, trainer=self, steps=300)
            print(relaxed.energy.sum().item())
            batch.to("cuda")
            print(batch.sid.tolist())
""", lines=(15, 17)),
        # a metric picked by name (`eval(fn)(...)`, the names in a table of string literals) runs every
        # step with its caller, and so does the wrapper its local decorator returns; `unused` is named by
        # no literal
        Invalid("""
import torch
TABLE = {"energy": ["mae"]}
def per_item(fn):
    def wrapped(pred, target):
        return fn(pred, target).mean().item()
    return wrapped
@per_item
def mae(pred, target):
    return (pred - target).abs()
def unused(pred, target):
    return (pred - target).abs().max().item()
class Evaluator:
    def eval(self, pred, target):
        return {fn: eval(fn)(pred, target) for fn in TABLE["energy"]}
model = torch.compile(Net())
evaluator = Evaluator()
for batch in loader:
    pred = model(batch)
    evaluator.eval(pred, batch.y)
""", lines=(6,)),
        # a parameter every caller passes a host copy for (`.tolist()`) holds no device tensor, whatever its
        # annotation says: `if periodic:` syncs nothing (the `.cpu()` and `.tolist()` copies do)
        Invalid("""
import torch
def wrap(pos, pbc: torch.Tensor):
    for i, periodic in enumerate(pbc):
        if periodic:
            pos = pos % 1.0
    return pos
model = torch.compile(Net())
for batch in loader:
    out = model(batch)
    print(wrap(out.detach().cpu().numpy(), batch.pbc.tolist()))
""", lines=(11, 11)),
        # `-> torch.Tensor` says what `sum(parts)` is; `self._backward(loss)` (a base class's) is a training step
        Invalid("""
import torch
class Trainer(BaseTrainer):
    def __init__(self, model):
        self.model = torch.compile(model)
    def _compute_loss(self, out, batch) -> torch.Tensor:
        parts = [fn(out, batch.y) for fn in self.loss_fns]
        return sum(parts)
    def train(self):
        for batch in self.train_loader:
            loss = self._compute_loss(self.model(batch), batch)
            self.metrics["loss"] = loss.item()
            self._backward(loss)
    def validate(self):
        for batch in self.val_loader:
            out = self.model(batch)
            print(out.sum().item())
""", lines=(12, 17)),
        # compiled by a helper that returns it: the loop runs the compiled model, as with torch.compile(Net())
        Invalid("""
import torch
def maybe_compile(model, enable):
    if enable:
        model = torch.compile(model, dynamic=True)
    return model
def decode(model, x):
    return model(x).sum().item()
def main(loader, enable):
    model = maybe_compile(Net(), enable)
    for x in loader:
        print(decode(model, x))
""", lines=(8,)),
        # the `.cpu()` copy syncs; the copy cast to another dtype stays on the host: its .numpy() does not
        Invalid("""
import torch
model = torch.compile(Net())
for data in loader:
    pred = model(data.x, data.edge_index)
    host = pred.detach().cpu().to(torch.float16)
    print(host.numpy())
""", lines=(6,)),
        # a tensor built with device= lives on the device; after `.cpu()` only the copy syncs
        Invalid("""
import torch
model = torch.compile(Net())
losses = []
for data in loader:
    out = model(data.x, data.edge_index)
    out.sum().backward()
    optimizer.step()
    history = torch.tensor(losses, device="cuda")
    print(history.mean().item())
    host = out.detach().cpu()
    print(host.sum().item())
""", lines=(10, 11)),
        # an evaluator passed into test() and updated per batch; the compiled model is a parameter too
        Invalid("""
import torch
class LinkPredictor(torch.nn.Module):
    def forward(self, a, b):
        return (a * b).sum(-1)
class Hits:
    def __init__(self):
        self.scores = []
    def update(self, out):
        self.scores.append(out.detach().cpu())
def test(model, evaluator, h, loader):
    for perm in loader:
        evaluator.update(model(h[perm], h[perm]))
model = torch.compile(LinkPredictor())
test(model, Hits(), h, DataLoader(range(100), 10))
""", lines=(10,)),
        # an f-string of the loss in the step loop (a progress bar every 10 steps)
        Invalid("""
import torch
model = torch.compile(model)
for step, batch in enumerate(loader):
    loss = model(batch.x, batch.edge_index).sum()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        pbar.set_postfix(loss=f"{loss:.4f}")
""", lines=(9,)),
        # a metric helper's method that every caller hands a tensor
        Invalid("""
import torch
class Mean:
    def __init__(self):
        self.values = []
    def update(self, value):
        self.values.append(float(value))
meter = Mean()
model = torch.compile(model)
for batch in loader:
    model(batch.x, batch.edge_index).sum().backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    meter.update(norm)
""", lines=(7,)),
        # library mode: a user preparing to compile sees the per-step syncs
        Invalid("""
from tqdm import tqdm
def train(model, loader, optimizer):
    for i, batch in enumerate(tqdm(loader)):
        loss = model(batch.x, batch.edge_index).sum()
        loss.backward()
        optimizer.step()
        labels = batch.y.tolist()
""", lines=(8,), options=(("assume_compiled", "modules"),)),
        # a trainer object compiles its model (under a flag); the loop runs it through `trainer.train`
        Invalid("""
import torch
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        return x * 2
class Trainer:
    def __init__(self, cfg):
        self.model = Net()
        if cfg.jit:
            self.model = torch.compile(self.model).to("cuda")
    def train(self, graph):
        loss = self.forward(graph)
        loss.backward()
        return loss
    def forward(self, graph):
        return self.model(graph).sum()
def main(cfg, loader):
    trainer = Trainer(cfg)
    for epoch in range(10):
        epoch_loss = 0
        for graph in loader:
            loss = trainer.train(graph)
            epoch_loss += loss.detach().cpu()
""", lines=(24,)),
        # a compiled train step called per batch
        Invalid("""
import torch
@torch.compile
def train_step(batch):
    loss = model(batch.x).sum()
    loss.backward()
    optimizer.step()
    return loss
for batch in loader:
    loss = train_step(batch)
    print(loss.item())
""", lines=(11,)),
        Invalid("""
import torch
model = torch.compile(model)
total = 0.0
for batch in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(batch.x), batch.y)
    loss.backward()
    optimizer.step()
    total += float(loss)
    if torch.isnan(loss):
        break
""", lines=(10, 11)),
        # full-batch training: one step per epoch
        Invalid("""
import torch
model = torch.compile(model)
def train():
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = torch.nn.functional.cross_entropy(out, data.y)
    loss.backward()
    optimizer.step()
    return loss

for epoch in range(100):
    loss = train()
    print(f"{loss:.4f}")
    print(loss)
""", lines=(14, 15)),
        Invalid("""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x.relu()

model = torch.compile(Net())
for batch in loader:
    pred = model(batch.x).argmax(-1)
    ys = batch.y.cpu().numpy()
""", lines=(10,)),
        Invalid("""
import torch
import torch.nn.functional as F
def train(model, loader, optimizer):
    total_loss = 0.0
    correct = 0
    for data in loader:
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        optimizer.step()
        total_loss += float(loss) * data.num_graphs
        correct += int((out.argmax(dim=-1) == data.y).sum())
    n = len(loader.dataset)
    return total_loss / n, correct / n
model = torch.compile(GIN())
train(model, loader, torch.optim.Adam(model.parameters()))
""", lines=(13, 14), expected_fix="""
import torch
import torch.nn.functional as F
def train(model, loader, optimizer):
    total_loss = 0.0
    correct = 0
    for data in loader:
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach() * data.num_graphs
        correct += (out.argmax(dim=-1) == data.y).sum()
    n = len(loader.dataset)
    return float(total_loss) / n, int(correct) / n
model = torch.compile(GIN())
train(model, loader, torch.optim.Adam(model.parameters()))
"""),
        Invalid("""
import torch
for epoch in range(10):
    total_loss = 0
    for batch in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(batch.x), batch.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    print(f"epoch {epoch}: {total_loss:.4f}")
    history.append(float(total_loss))
""", lines=(10,), options=(("assume_compiled", "modules"),), expected_fix="""
import torch
for epoch in range(10):
    total_loss = 0
    for batch in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(batch.x), batch.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach()
    print(f"epoch {epoch}: {float(total_loss):.4f}")
    history.append(float(total_loss))
"""),
        Invalid("""
import torch
def evaluate(model, loader):
    correct = 0
    loss_sum = 0.0
    with torch.no_grad():
        for batch in loader:
            out = model(batch.x)
            loss_sum += torch.nn.functional.nll_loss(out, batch.y).cpu().item()
            correct += out.argmax(-1).eq(batch.y).sum().item()
    return loss_sum, correct
""", lines=(9, 10), options=(("assume_compiled", "modules"),), expected_fix="""
import torch
def evaluate(model, loader):
    correct = 0
    loss_sum = 0.0
    with torch.no_grad():
        for batch in loader:
            out = model(batch.x)
            loss_sum += torch.nn.functional.nll_loss(out, batch.y).detach()
            correct += out.argmax(-1).eq(batch.y).sum()
    return float(loss_sum), int(correct)
"""),
        # a multi-line statement keeps its indentation
        Invalid("""
import torch
model = torch.compile(Net())
for epoch in range(3):
    total = 0.0
    for batch in loader:
        loss = model(batch)
        loss.backward()
        optimizer.step()
        total += float(
            loss
            * batch.num_graphs
        )
    print(total)
""", lines=(10,), expected_fix="""
import torch
model = torch.compile(Net())
for epoch in range(3):
    total = 0.0
    for batch in loader:
        loss = model(batch)
        loss.backward()
        optimizer.step()
        total += (loss
            * batch.num_graphs).detach()
    print(float(total))
"""),
        # Not mechanical, so no fix: the accumulator is read inside the loop,
        # or never read after it, or `int()` truncates a float every step.
        Invalid(_UNFIXABLE_ACCUMULATORS, lines=(12, 14), options=(("assume_compiled", "modules"),),
                expected_fix=_UNFIXABLE_ACCUMULATORS),
    )

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        why = self.context.synced_param_call(node)
        if why is not None:  # `to_numpy(out)`: a project helper copies the tensor it is handed
            arg = node.args[why[0]].value
            if self.context.kind(arg) not in (SCALAR, MODEL) and not self.context.host_tensor(arg):
                self._flag(node, f"`{self.context.module.code_for_node(node.func)}(...)` ({why[1]})")

    def _flag(self, node: cst.CSTNode, what: str) -> None:
        ctx = self.context
        if ctx.in_error_path(node) or ctx.compiled_region(node) is not None:
            return  # after a failure only; inside compiled code it is GNN001
        drive = ctx.step_drive(node)
        if drive is None or (not drive.where and ctx.pins_cpu()):
            return  # (a loop in a CPU-only script reads CPU tensors: no device to wait for)
        fix = self._accumulation_fix(node) if isinstance(node, cst.Call) else None
        role = drive.role if drive.per == "epoch" else _ARTICLE[drive.role]
        if drive.per == "step" and drive.role == "evaluation" and (isinstance(drive.loop, (cst.For, cst.While))
                                                                       or drive.where and not drive.entry):
            role = "an inference"  # `for t in range(n_steps)` / `while not done`: MD, sampling, a rollout
        loop = " ".join(_LOOP[drive.per].format(role=role).split())  # role "": not known
        where = f"{_CADENCE[drive.per]} {loop}{_CADENCE_NOTE.get(drive.per, '')}"
        advice = _ADVICE[drive.per]
        if drive.where:  # the loop is in another file
            where += f" ({drive.where})"
        entry = drive.entry + (f"; {drive.where}" if drive.where else "")  # the step's file, through a call
        if drive.entry:  # no loop of the project's: a framework calls the step
            where = f"every step ({entry})"
            advice = _ENTRY_ADVICE
        guard = ctx.logging_guard(node, drive.loop)
        if guard is not None:  # conditional logging: a sync on those steps, not on every one
            when = f"on the steps where `{guard}` holds"
            if drive.entry:
                where = f"{when} ({entry})"
            else:
                where = f"{when}, in {loop}"
                where += f" ({drive.where})" if drive.where else ""
            advice = _GUARD_ADVICE
        self.report(node, f"{what} syncs the device {where} that runs {drive.compiled}. {advice}", fix,
                    loop=drive.loop)

    # the unsafe fix: metric accumulation on the device ---------------------------------
    def _accumulation_fix(self, call: cst.Call) -> Optional[FixSpec]:
        """``acc += float(t) [* n]`` in a loop -> ``acc += t.detach() [* n]`` and
        ``float(acc)`` at every read after the loop (see "Fix safety")."""
        try:
            return _AccumulationFix(self.context, call).build()
        except RecursionError:
            return None


# ---------------------------------------------------------------------------------
# The accumulation fix. Everything below decides conservatively: any doubt, no fix.

_BOOL_METHODS = {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "isneginf",
                 "isposinf", "logical_and", "logical_or", "logical_not", "logical_xor", "bool",
                 "isin", "greater", "less", "greater_equal", "less_equal", "not_equal", "equal_"}
_COUNT_METHODS = {"sum", "count_nonzero"}
_INT_METHODS = {"long", "int"}
_FLOATISH = re.compile(r"loss|err|mse|mae|rmse", re.IGNORECASE)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
           cst.GeneratorExp)
_TARGET_WRAPPERS = (cst.Tuple, cst.List, cst.StarredElement, cst.Element)
_BINDERS = (cst.AssignTarget, cst.AsName, cst.Del, cst.NameItem, cst.ImportAlias, cst.Param,
            cst.FunctionDef, cst.ClassDef, cst.MatchAs, cst.MatchStar, cst.MatchMapping)
_TARGET_OWNERS = (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)


def _is_bool_tensor_expr(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Comparison):
        return all(not isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                   for c in expr.comparisons)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value in _BOOL_METHODS
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return _is_bool_tensor_expr(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return _is_bool_tensor_expr(expr.left) and _is_bool_tensor_expr(expr.right)
    return False


def _is_count(expr: cst.BaseExpression) -> bool:
    """An integer tensor without gradient: ``(pred == y).sum()``, ``x.long()``."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
        return False
    method = expr.func.attr.value
    if method in _COUNT_METHODS:
        return _is_bool_tensor_expr(expr.func.value) and all(a.keyword is None or a.keyword.value == "dim"
                                                             for a in expr.args)
    return method in _INT_METHODS and not expr.args


def _number_literal(expr: cst.BaseExpression) -> Optional[str]:
    """"int" / "float" for a number literal (``0``, ``0.0``, ``-1``), else None."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return "int"
    if isinstance(expr, cst.Float):
        return "float"
    return None


class _Names(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.found: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found.append(node)


class _AccumulationFix:
    def __init__(self, ctx, call: cst.Call) -> None:
        self.ctx = ctx
        self.call = call

    def _parent(self, node):
        return self.ctx.parent.get(node)

    def _synced(self) -> Optional[tuple[str, cst.BaseExpression]]:
        """("float" | "int" | "item", the tensor expression) of the sync call."""
        call, ctx = self.call, self.ctx
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "item" and not call.args:
            expr = func.value
            return ("item", expr) if ctx.is_tensor(expr) else None
        resolved = ctx.resolve(func)
        if resolved in ("float", "int") and len(call.args) == 1 and call.args[0].keyword is None \
                and call.args[0].star == "":
            return resolved, call.args[0].value
        return None

    def build(self) -> Optional[FixSpec]:
        ctx = self.ctx
        synced = self._synced()
        if synced is None:
            return None
        cast, expr = synced
        if cast == "int" and not _is_count(expr):
            return None  # int() truncates every step: not the same as truncating the sum
        # acc += SYNC | SYNC * k | k * SYNC | SYNC / k
        parent = self._parent(self.call)
        factor = None
        divides = False
        if isinstance(parent, cst.BinaryOperation):
            if isinstance(parent.operator, cst.Multiply):
                factor = parent.right if parent.left is self.call else parent.left
            elif isinstance(parent.operator, cst.Divide) and parent.left is self.call:
                factor, divides = parent.right, True
            else:
                return None
            if ctx.kind(factor) == TENSOR or parent.lpar:
                return None
            if any(isinstance(n, cst.Call) and ctx.resolve(n.func) in ("float", "int")
                   or isinstance(n, cst.Attribute) and n.attr.value == "item"
                   for n in _walk(factor)):
                return None  # another sync in the factor: not this fix's business
            aug = self._parent(parent)
            rhs = parent
        else:
            aug, rhs = parent, self.call
        if not (isinstance(aug, cst.AugAssign) and aug.value is rhs
                and isinstance(aug.operator, cst.AddAssign) and isinstance(aug.target, cst.Name)):
            return None
        acc = aug.target.value
        # the innermost loop, in the same function
        loop = None
        for anc in ctx.ancestors(aug):
            if isinstance(anc, (cst.For, cst.While)):
                loop = anc
                break
            if isinstance(anc, _SCOPES):
                return None
        if loop is None:
            return None
        scope_root = None
        for anc in ctx.ancestors(loop):
            if isinstance(anc, cst.FunctionDef):
                scope_root = anc
                break
            if isinstance(anc, _SCOPES):
                return None  # a loop in a class body or a lambda: leave it
        if scope_root is None:
            scope_root = ctx.module
        init, reads = self._uses(acc, aug, loop, scope_root)
        if init is None or not reads:
            return None
        init_kind = _number_literal(init.value)
        # what the original accumulator holds after the loop
        if init_kind == "float" or divides or cast == "float":
            wrapper = "float"
        elif cast == "int" and factor is None:
            wrapper = "int"
        elif cast == "item" and factor is None and _is_count(expr):
            wrapper = "int"
        elif cast == "item" and self._floatish(expr):
            wrapper = "float"
        else:
            return None  # a .item() of unknown dtype added to an int: int or float?
        edits = [NodeEdit(self.call, self._on_device(expr))]
        for read in reads:
            if ctx.compiled_region(read) is not None or ctx.hot_region(read) is not None:
                return None  # the sync would only move, not go away
            holder = self._parent(self._parent(read))
            if isinstance(holder, cst.Call) and ctx.resolve(holder.func) in ("float", "int") \
                    and len(holder.args) == 1 and holder.args[0].value is read:
                continue  # already `float(acc)`
            edits.append(NodeEdit(read, cst.Call(cst.Name(wrapper), [cst.Arg(cst.Name(acc))])))
        new = ctx.module.code_for_node(self._on_device(expr))
        return FixSpec("unsafe", f"Accumulate on the device (`{acc} += {new}`) and read "
                                 f"`{wrapper}({acc})` after the loop", tuple(edits))

    def _floatish(self, expr: cst.BaseExpression) -> bool:
        for node in _walk(expr):
            if isinstance(node, cst.Name) and _FLOATISH.search(node.value):
                return True
            if isinstance(node, cst.Attribute) and node.attr.value == "mean":
                return True
        return False

    @staticmethod
    def _on_device(expr: cst.BaseExpression) -> cst.BaseExpression:
        # `t.cpu().item()`: the copy to the host is part of the sync; drop it.
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value == "cpu" and not expr.args and not expr.lpar:
            expr = expr.func.value
        if _is_count(expr):
            return expr  # integer tensors carry no gradient
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value == "detach" and not expr.args:
            return expr
        if not isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not expr.lpar:
            expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Call(cst.Attribute(expr, cst.Name("detach")))

    def _uses(self, acc: str, aug: cst.AugAssign, loop: cst.CSTNode, scope_root: cst.CSTNode):
        """The initialising ``Assign`` and the reads after the loop, or (None, [])
        when ``acc`` is used in any other way."""
        ctx = self.ctx
        finder = _Names(acc)
        scope_root.visit(finder)
        loop_order = ctx.order.get(loop)
        if loop_order is None:
            return None, []
        init = None
        reads: list[cst.Name] = []
        seen_aug = False
        for name in finder.found:
            parent = self._parent(name)
            if isinstance(parent, cst.Attribute) and parent.attr is name:
                continue
            if isinstance(parent, cst.Arg) and parent.keyword is name:
                continue
            # a use in a nested scope (closure, comprehension): not mechanical
            for anc in ctx.ancestors(name):
                if anc is scope_root:
                    break
                if isinstance(anc, _SCOPES):
                    return None, []
            if name is aug.target:
                seen_aug = True
                continue
            child, owner = name, parent
            while isinstance(owner, _TARGET_WRAPPERS):
                child, owner = owner, self._parent(owner)
            if isinstance(owner, cst.AssignTarget) and owner.target is name and init is None:
                assign = self._parent(owner)
                if isinstance(assign, cst.Assign) and _number_literal(assign.value) is not None \
                        and self._dominates(assign, loop):
                    init = assign
                    continue
                return None, []
            if isinstance(owner, _BINDERS) or isinstance(owner, cst.Global) or (
                    isinstance(owner, _TARGET_OWNERS) and getattr(owner, "target", None) is child):
                return None, []  # bound again
            # a read: only after the loop
            if any(anc is loop for anc in ctx.ancestors(name)):
                return None, []
            if ctx.order.get(name, -1) < loop_order:
                return None, []
            reads.append(name)
        if not seen_aug:
            return None, []
        return init, reads

    def _dominates(self, assign: cst.Assign, loop: cst.CSTNode) -> bool:
        """The assignment runs before the loop whenever the loop runs: its line
        is in a block that holds the loop, before it."""
        line = self._parent(assign)
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        block = self._parent(line)
        if block is None or self.ctx.order.get(line, 1 << 60) >= self.ctx.order.get(loop, -1):
            return False
        return any(anc is block for anc in self.ctx.ancestors(loop))


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)
