"""A script compiles its model and hands it to functions of another file:
a method of an instance of a project class (``utils.train(model, loader)``,
``utils = Utils(...)``), or a step function reached through the compiled
wrapper itself (``model.train_step(model, optimizer, it)``, a static method of
the model's class). Those functions run the compiled model: their per-batch
syncs are per-step syncs (semantic/handoffs.py, handed_calls.py,
step_handoffs.py: a method read through the compiled wrapper is the model
class's method)."""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

UTILS = """\
    import torch


    class Utils:
        def __init__(self, path):
            self.path = path

        def train(self, model, loader, optimizer):
            model.train()
            total = 0.0
            for data in loader:
                out = model(data)
                loss = out.sum()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                total += loss.item()
            return total

        def save_model_checkpoint(self, model, epoch):
            for name, p in model.state_dict().items():
                print(name, p.sum().item())
"""

MAIN_UTILS = """\
    import torch
    from net import Net
    from utils import Utils


    def main():
        utils = Utils("ckpt")
        model = Net()
        model = torch.compile(model)
        optimizer = torch.optim.Adam(model.parameters())
        for epoch in range(10):
            loss = utils.train(model, loader, optimizer)
            utils.save_model_checkpoint(model, epoch)
            print(loss)
"""

NET = """\
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x)

        @staticmethod
        def train_step(model, optimizer, iterator):
            model.train()
            optimizer.zero_grad()
            x = next(iterator)
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            return {"loss": loss.item()}

        @staticmethod
        def test_step(model, loader):
            model.eval()
            logs = []
            for x in loader:
                out = model(x)
                logs.append(out.mean().item())
            return logs
"""

MAIN_STEP = """\
    import torch
    from net import Net


    def evaluate(model, loader):
        return model.test_step(model, loader)


    def main(args):
        model = Net()
        model = torch.compile(model)
        if args.cuda:
            model = model.cuda()
        optimizer = torch.optim.Adam(model.parameters())
        for step in range(args.max_steps):
            log = model.train_step(model, optimizer, iterator)
            if step % args.valid_steps == 0:
                evaluate(model, valid_loader)
"""


def _lines(tmp_path, files: dict) -> set[str]:
    root = write_project(tmp_path, files)
    return {line.split(": ")[0] + ":" + line.split(": ")[1].split(" ")[0]
            for line in whole_tree_lines(root)}


def test_compiled_model_handed_to_a_method_of_a_project_class_runs_there(tmp_path):
    lines = _lines(tmp_path, {"net.py": NET, "utils.py": UTILS, "main.py": MAIN_UTILS})
    assert "utils.py:17:22:GNN013" in lines  # total += loss.item() in Utils.train's batch loop
    # a method whose name says it saves the model runs nothing
    assert not any(line.startswith("utils.py:21") for line in lines)


def test_step_function_reached_through_the_compiled_wrapper_runs_every_step(tmp_path):
    lines = _lines(tmp_path, {"net.py": NET, "main.py": MAIN_STEP})
    assert "net.py:20:25:GNN013" in lines  # {"loss": loss.item()} in train_step, once per step of main's loop
    assert "net.py:28:25:GNN013" in lines  # test_step's own loop over its loader


def test_a_bare_step_of_another_object_is_not_a_step_function(tmp_path):
    # `scheduler.step(model)`-like calls named just `step` are not step functions handed the model
    main = MAIN_STEP.replace("log = model.train_step(model, optimizer, iterator)", "log = tracker.step(model)")
    lines = _lines(tmp_path, {"net.py": NET, "main.py": main})
    assert not any(line.startswith("net.py:20") for line in lines)


def test_a_method_read_through_the_compiled_wrapper_is_the_model_class_method():
    import textwrap

    import libcst as cst

    from gnnlint.context import FileContext
    from gnnlint.facts import ImportRef

    ctx = FileContext(cst.parse_module(textwrap.dedent("""\
        import torch
        from net import Net

        model = Net()
        model = torch.compile(model)
        model = model.cuda()
        model.train_step(model)
        """)), "main.py")
    call = [c for c in ctx.all_calls() if isinstance(c.func, cst.Attribute) and c.func.attr.value == "train_step"][0]
    assert ctx._imported_method(call) == ImportRef("net", "Net.train_step", 0)
