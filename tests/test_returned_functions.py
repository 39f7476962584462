"""Train / evaluate functions picked at run time (heldout4 recall): a
training script chooses them in a helper with function-level imports
(``if args.regression: from pkg.tools import train_regression as train``)
and gets them back with the model (``model, train = model_setup(args)``);
the compiled model it hands to ``train(model, ...)`` runs in each chosen
function's batch loop (returned_functions.py, asked by handoffs.py).
Also: a compiled model handed to another file's class (``LRFinder(model,
opt)``) is stored by its ``__init__`` (``self.model = model``); the class's
per-batch loops run it."""
from __future__ import annotations

import pytest

from tests.project_files import assert_one_file_agrees, finding_lines, run, write_project

TOOLS = """\
    import torch


    def train_classification(model, opt, loader, dev):
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
            print(loss.item())


    def train_regression(model, opt, loader, dev):
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
            print(loss.item())


    def unused(model, opt, loader, dev):
        for x, y in loader:
            loss = model(x.to(dev)).sum()
            print(loss.item())
"""

HELPER = """\
    import torch


    def model_setup(args):
        model = torch.nn.Linear(3, 4)
        if args.regression:
            from pkg.tools import train_regression as train
        else:
            from pkg.tools import train_classification as train
        return model, train


    def main(args, loader):
        model, train = model_setup(args)
        opt = torch.optim.Adam(model.parameters())
        model = torch.compile(model)
        for epoch in range(3):
            train(model, opt, loader, "cuda")
"""

SAME_FUNCTION = """\
    import torch


    def main(args, loader):
        model = torch.nn.Linear(3, 4)
        opt = torch.optim.Adam(model.parameters())
        model = torch.compile(model)
        if args.regression:
            from pkg.tools import train_regression as train
        else:
            from pkg.tools import train_classification as train
        for epoch in range(3):
            train(model, opt, loader, "cuda")
"""


def _project(tmp_path, train_py: str):
    return write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/tools.py": TOOLS,
        "pkg/train.py": train_py,
    })


CONDITIONAL = """\
    import torch
    from pkg.tools import train_classification, train_regression


    def main(args, loader):
        model = torch.compile(torch.nn.Linear(3, 4))
        opt = torch.optim.Adam(model.parameters())
        train = train_regression if args.regression else train_classification
        for epoch in range(3):
            train(model, opt, loader, "cuda")
"""


@pytest.mark.parametrize("train_py", [HELPER, SAME_FUNCTION, CONDITIONAL],
                         ids=["helper-returns", "same-function", "conditional-expression"])
def test_every_chosen_train_function_runs_the_compiled_model(tmp_path, train_py):
    root = _project(tmp_path, train_py)
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    tools = sorted(line for line in lines if line.startswith("pkg/tools.py"))
    # both chosen functions' per-step .item(); `unused` is never handed the model
    assert [line.split(":")[1] for line in tools] == ["10", "19"], lines
    assert all(" GNN013 " in line and "compiled `model` (passed in train.py)" in line for line in tools), tools
    assert_one_file_agrees(root, "pkg/tools.py", nonempty=True)


def test_a_helper_returning_an_uncompiled_model_hands_nothing(tmp_path):
    # the returned function is called with a model nobody compiles
    root = _project(tmp_path, HELPER.replace("    model = torch.compile(model)\n", ""))
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/tools.py") for line in lines), lines


def test_a_helper_returning_a_computed_value_tells_nothing(tmp_path):
    # element 1 is not a name the helper imports: nothing is followed
    root = _project(tmp_path, HELPER.replace("return model, train", "return model, make(train)"))
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/tools.py") for line in lines), lines


FINDER = """\
    import torch


    class LRFinder:
        def __init__(self, model, optimizer, device=None):
            self.model = model
            self.optimizer = optimizer
            self.device = device
            self.history = []

        def range_test(self, loader):
            for x, y in loader:
                self.optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                loss.backward()
                self.optimizer.step()
                self.history.append(loss.item())


    class Plotter:
        def __init__(self, history):
            self.history = history

        def plot(self, loader):
            for x in loader:
                print(x.item())
"""

FINDER_MAIN = """\
    import torch


    def main(args, loader):
        model = torch.nn.Linear(3, 4)
        opt = torch.optim.Adam(model.parameters())
        model = torch.compile(model)
        if args.lr_finder:
            from pkg.lr_finder import LRFinder, Plotter
            finder = LRFinder(model, opt, device="cuda")
            finder.range_test(loader)
            Plotter(finder.history).plot(loader)
"""


def test_a_compiled_model_handed_to_another_files_class_runs_in_its_loops(tmp_path):
    root = write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/lr_finder.py": FINDER,
        "pkg/main.py": FINDER_MAIN,
    })
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    finder = sorted(line for line in lines if line.startswith("pkg/lr_finder.py"))
    # LRFinder's loop runs the compiled model; Plotter is given no compiled object
    assert [line.split(":")[1] for line in finder] == ["17"], lines
    assert " GNN013 " in finder[0] and "compiled `model` (passed in main.py)" in finder[0], finder
    assert_one_file_agrees(root, "pkg/lr_finder.py", nonempty=True)


def test_a_class_named_through_its_module_gets_the_model_too(tmp_path):
    main = FINDER_MAIN.replace("from pkg.lr_finder import LRFinder, Plotter", "from pkg import lr_finder") \
        .replace("LRFinder(", "lr_finder.LRFinder(").replace("Plotter(", "lr_finder.Plotter(")
    root = write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/lr_finder.py": FINDER,
        "pkg/main.py": main,
    })
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert sorted(line.split(":")[1] for line in lines if line.startswith("pkg/lr_finder.py")) == ["17"], lines


def test_an_uncompiled_model_handed_to_a_class_hands_nothing(tmp_path):
    root = write_project(tmp_path / "proj", {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/lr_finder.py": FINDER,
        "pkg/main.py": FINDER_MAIN.replace("model = torch.compile(model)", "other = torch.compile(model)"),
    })
    lines = finding_lines(run(["check", "--isolated", "--no-cache", "."], root).output)
    assert not any(line.startswith("pkg/lr_finder.py") for line in lines), lines
