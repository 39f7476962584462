"""Code a compiled program builds but never runs compiled, or runs once per
epoch: a submodule built in ``__init__`` that nothing reads, and a
full-graph evaluation an epoch loop calls beside a mini-batch ``train()``
(the labelling policy: "once per epoch outside the batch loop ... not a hazard")."""

import libcst as cst

from gnnlint.context import FileContext
from tests.file_contexts import context_of




def test_a_submodule_nothing_reads_is_not_compiled():
    ctx = context_of("""
        import torch

        class Norm(torch.nn.Module):
            def forward(self, x):
                return x
        class Used(torch.nn.Module):
            def forward(self, x):
                return x
        class ByName(torch.nn.Module):
            def forward(self, x):
                return x
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.out_norm = Norm()  # a leftover: no method reads it
                self.used = Used()
            def forward(self, x):
                return self.used(x)
        class Dynamic(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer0 = ByName()
            def forward(self, x):
                return getattr(self, "layer0")(x)

        model = torch.compile(Net())
        other = torch.compile(Dynamic())
    """)
    assert "Used" in ctx.compiled_classes
    assert "Norm" not in ctx.compiled_classes
    assert "ByName" in ctx.compiled_classes  # reached by name: may run


EPOCHS = """
    import torch
    from torch_geometric.loader import NeighborLoader

    model = torch.compile(Net(), dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = NeighborLoader(data, num_neighbors=[10], batch_size=128)

    def train():
        for batch in loader:
            optimizer.zero_grad()
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()

    @torch.no_grad()
    def test(data):
        pred = model(data)
        return pred.mean().item()

    full_data = data.to("cuda")
    for epoch in range(100):
        train()
        acc = test({ARG})
"""



def test_a_whole_graph_evaluated_once_per_epoch_beside_a_batch_loop_is_not_per_step():
    ctx = context_of(EPOCHS.replace("{ARG}", "full_data"))
    assert [ctx.module.code_for_node(loop).splitlines()[0] for loop in ctx.hot_loops] == ["for batch in loader:"]
    assert not any(f.name == "test" for f in ctx.hot_funcs)


def test_a_batch_bound_in_the_loop_is_still_handed_per_step():
    source = EPOCHS.replace("{ARG}", "batch").replace("        train()\n", "        train()\n        batch = next(it)\n")
    ctx = context_of(source)
    assert any(ctx.module.code_for_node(loop).lstrip().startswith("for epoch") for loop in ctx.hot_loops)
    assert any(f.name == "test" for f in ctx.hot_funcs)


TEMPLATE = """
    import lightning as L
    import torch

    class LitModule(L.LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def training_step(self, batch, batch_idx):
            loss = self.net(batch).mean()
            self.log("loss", loss.item())
            return loss

        def predict_step(self, batch, batch_idx):
            out = self.net(batch)
            return out.cpu()

        def setup(self, stage):
            if self.hparams.compile and {GUARD}:
                self.net = torch.compile(self.net)
"""


def _drives(ctx: FileContext, method: str) -> bool:
    call = next(c for c in ctx.all_calls() if ctx.enclosing_function(c).name == method
                and isinstance(c.func, cst.Attribute) and c.func.attr.value in ("item", "cpu"))
    return ctx.step_drive(call) is not None


def test_predict_step_of_a_module_compiled_in_setup_for_fit_runs_eagerly():
    # the Lightning template: `setup("predict")` skips the compile, so prediction runs the net eagerly
    ctx = context_of(TEMPLATE.replace("{GUARD}", 'stage == "fit"'))
    assert _drives(ctx, "training_step")
    assert not _drives(ctx, "predict_step")


def test_predict_step_of_a_module_compiled_in_setup_for_every_stage_is_per_step():
    ctx = context_of(TEMPLATE.replace("{GUARD}", 'stage in ("fit", "predict")'))
    assert _drives(ctx, "training_step")
    assert _drives(ctx, "predict_step")


HELPER = """
    import lightning as L
    import torch

    class LitModule(L.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def training_step(self, batch, batch_idx):
            loss = self.model.encoder(batch).mean()
            return loss

        def predict_step(self, batch, batch_idx):
            return self.record_preds(batch)

        def record_preds(self, batch):
            out = self.model.encoder(batch)
            return out.cpu()
{EXTRA}
        def setup(self, stage):
            if self.hparams.compile and stage == "fit":
                self.model.encoder = torch.compile(self.model.encoder)
"""


def test_a_helper_only_predict_step_calls_runs_eagerly_like_predict_step():
    # GCPNet-EMA's shape: predict_step -> self.record_preds(...), compiled in setup for "fit" only
    ctx = context_of(HELPER.replace("{EXTRA}", ""))
    assert not _drives(ctx, "record_preds")


def test_a_helper_a_training_hook_also_calls_stays_per_step():
    extra = """
        def validation_step(self, batch, batch_idx):
            return self.record_preds(batch)
"""
    ctx = context_of(HELPER.replace("{EXTRA}", extra))
    assert _drives(ctx, "record_preds")


MEMBER = """
    import lightning as L
    import torch

    class Wrapper(L.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def test_step(self, batch, batch_idx):
            pred = self.model(batch)
            return pred.cpu()

    trainer_model = Wrapper(Net())
    {COMPILE}
    L.Trainer().test(trainer_model)
"""


def test_a_submodule_compiled_on_an_instance_runs_compiled_in_the_class_methods():
    # `inst.model = torch.compile(inst.model)` in the script: the class's `self.model(...)` runs the compiled module
    ctx = context_of(MEMBER.replace("{COMPILE}", "trainer_model.model = torch.compile(trainer_model.model, dynamic=True)"))
    assert _drives(ctx, "test_step")
    ctx = context_of(MEMBER.replace("{COMPILE}", "other = torch.compile(Net(), dynamic=True)"))
    assert not _drives(ctx, "test_step")


ACCUMULATING = """
    import torch

    model = torch.compile(Net(), dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    def train_epoch(loader, acc_steps):
        for i, batch in enumerate(loader):
            loss = model(batch).sum() / acc_steps
            loss.backward()
            if (i + 1) % acc_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        {FLUSH}

    def print_stats(model):
        print(model.scale.item())

    for epoch in range(100):
        train_epoch(train_loader, 4)
        if epoch == 0:
            print_stats(model)
"""


def test_a_gradient_flush_after_the_batch_loop_does_not_make_the_epoch_loop_a_step_loop():
    # the leftover accumulated gradients stepped after the loop: still one step per batch
    ctx = context_of(ACCUMULATING.replace("{FLUSH}", "if (i + 1) % acc_steps:\n            optimizer.step()"))
    assert [ctx.module.code_for_node(loop).splitlines()[0] for loop in ctx.hot_loops] == \
        ["for i, batch in enumerate(loader):"]
    assert not any(f.name == "print_stats" for f in ctx.hot_funcs)


def test_an_epoch_loop_beside_a_full_batch_step_function_stays_a_step_loop():
    source = ACCUMULATING.replace("{FLUSH}", "pass").replace(
        "        if epoch == 0:\n", "        full_batch_step()\n        if epoch == 0:\n") + """
    def full_batch_step():
        loss = model(data).sum()
        loss.backward()
        optimizer.step()
"""
    ctx = context_of(source)
    assert any(ctx.module.code_for_node(loop).lstrip().startswith("for epoch") for loop in ctx.hot_loops)


def test_micro_batches_then_one_optimizer_step_is_one_step_per_call():
    # `_train_batch`: backward over micro-batches, then the step: the loop calling it is the step loop
    ctx = context_of("""
        import torch

        model = torch.compile(Net())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def train_batch(batches, accumulation_steps):
            total = None
            for i in range(accumulation_steps):
                loss = model(batches[i]).sum()
                loss.backward()
                total = loss if total is None else total + loss
            optimizer.step()
            return total.item()

        for iteration in range(100):
            train_batch(batches, 4)
    """)
    assert any(ctx.module.code_for_node(loop).lstrip().startswith("for iteration") for loop in ctx.hot_loops)
