"""heldout14 shapes (Waymo-GNN: a trajectory GCN trained on sequences of graph batches) and their
variants in code nobody has read:

- a loader batch holding a list of graphs per timestep, moved to the device through an alias
  (``seq = batch["graphs"]`` then ``seq[t] = seq[t].to(device)``): reads after the move are device
  reads (semantic/batch_loops.py ``alias_moved``); iterating the list yields graphs
  (``for graph in seq``: semantic/kinds.py);
- a ``torch.utils.data.DataLoader`` whose ``collate_fn`` another project file defines with
  ``Batch.from_data_list`` / ``dgl.batch``: variable-size batches (semantic/graph_collates.py, GNN007);
- a per-step loss handed to the training function as a parameter (``loss_fn = directional_loss``;
  ``train(model, loader, loss_fn)``): the helper's file learns it runs every step
  (semantic/passed_functions.py, GNN013 there);
- a metrics helper given a field of the loader batch (``metrics(pred, batch["valid"].to(dev))``):
  ``valid.sum()`` is a tensor (semantic/kinds.py);
- compile options bound to another module's constants (``from config import compile_mode``,
  ``import config`` then ``config.compile_mode``, ``from .settings import *``): read like local literals
  (semantic/imported_constants.py, gnnlint/module_constants.py, the engine's ``imported_constants`` join).
Each VALID case has an INVALID twin that keeps the finding."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_rows, whole_tree_lines

MODELS = """\
    import torch


    class GCN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 2)

        def forward(self, x, edge_index):
            return self.lin(x)
"""

# -- a list of graphs in a loader batch, moved through an alias ------------------------------------
SEQUENCES = """\
    import torch
    from torch_geometric.loader import DataLoader
    from models import GCN


    def train(dataset, device):
        model = torch.compile(GCN(), dynamic=True)
        opt = torch.optim.Adam(model.parameters())
        loader = DataLoader(dataset, batch_size=8)
        for batch_dict in loader:
            {seq} = batch_dict{field}
            for t in range(len({seq})):
                {seq}[t] = {seq}[t]{move}
            total = 0
            for t, {graph} in enumerate({seq}):
                if {graph}.y.abs().sum() == 0:
                    continue
                out = model({graph}.x, {graph}.edge_index)
                total = total + out.sum()
            total.backward()
            opt.step()
"""


def _sequences(tmp_path, **kw):
    files = {"models.py": MODELS, "train.py": SEQUENCES.format(**kw)}
    return finding_rows(tmp_path, "train.py", "GNN013", files)


def test_alias_of_a_batch_list_moved_by_index_is_on_the_device(tmp_path):
    assert _sequences(tmp_path, seq="graphs", field='["graphs"]', move=".to(device, non_blocking=True)",
                      graph="step_graph") == [16]


def test_timestep_loop_inside_a_training_step_is_training(tmp_path):
    # the message: the inner loop over timesteps is part of the training step, not an evaluation loop
    _sequences(tmp_path, seq="graphs", field='["graphs"]', move=".to(device)", graph="step_graph")
    lines = [line for line in whole_tree_lines(tmp_path) if line.startswith("train.py:16:")]
    assert lines and "of a training loop" in lines[0], lines


def test_alias_moved_with_cuda_through_an_attribute_field(tmp_path):
    # another spelling: an attribute of the batch, `.cuda()`, a loop variable named `frame_batch`
    assert _sequences(tmp_path, seq="frames", field=".frames", move=".cuda()", graph="frame_batch") == [16]


def test_alias_not_moved_reads_the_host_batch(tmp_path):
    # VALID twin: the list is never moved -- the loader's host batch, no device sync
    assert _sequences(tmp_path, seq="graphs", field='["graphs"]', move="", graph="step_graph") == []


# -- a collate_fn of another file batching graphs ----------------------------------------------------
COLLATE_PYG = """\
    from torch_geometric.data import Batch


    def collate_sequences(items):
        return [Batch.from_data_list(list(step)) for step in zip(*items)]


    def stack_rows(items):
        return items
"""
COLLATE_DGL = """\
    import dgl


    def collate_graphs(samples):
        graphs, labels = map(list, zip(*samples))
        return dgl.batch(graphs), labels
"""
LOADER_TRAIN = """\
    import torch
    from torch.utils.data import DataLoader
    {imp}
    from models import GCN


    def run(dataset):
        model = torch.compile(GCN())
        loader = DataLoader(dataset, batch_size=32, collate_fn={collate})
        for batch in loader:
            out = model(batch.x, batch.edge_index)
"""


def test_imported_collate_fn_batching_pyg_graphs_feeds_variable_sizes(tmp_path):
    files = {"models.py": MODELS, "helpers/graphs.py": COLLATE_PYG, "helpers/__init__.py": "",
             "train.py": LOADER_TRAIN.format(imp="from helpers.graphs import collate_sequences",
                                             collate="collate_sequences")}
    assert finding_rows(tmp_path, "train.py", "GNN007", files) == [8]
    assert_one_file_agrees(tmp_path, "train.py", nonempty=True)


def test_module_attribute_collate_fn_batching_dgl_graphs(tmp_path):
    files = {"models.py": MODELS, "collate.py": COLLATE_DGL,
             "train.py": LOADER_TRAIN.format(imp="import collate as C", collate="C.collate_graphs")}
    assert finding_rows(tmp_path, "train.py", "GNN007", files) == [8]


def test_imported_collate_fn_that_batches_no_graphs(tmp_path):
    # VALID twin: the same file's other function stacks rows -- no graph batching, no finding
    files = {"models.py": MODELS, "helpers/graphs.py": COLLATE_PYG, "helpers/__init__.py": "",
             "train.py": LOADER_TRAIN.format(imp="from helpers.graphs import stack_rows", collate="stack_rows")}
    assert finding_rows(tmp_path, "train.py", "GNN007", files) == []


# -- a loss handed to the training function ------------------------------------------------------------
LOSSES = """\
    import torch


    def directional_loss(pred, target):
        loss = ((pred - target) ** 2).mean()
        if torch.isnan(loss):
            return pred.sum() * 0
        return loss


    def report(pred, target):
        return ((pred - target) ** 2).mean().item()
"""
PASSED_TRAIN = """\
    import torch
    from torch_geometric.loader import DataLoader
    from losses import directional_loss, report
    from models import GCN


    def epoch(model, loader, opt, {param}):
        for batch in loader:
            out = model(batch.x, batch.edge_index)
            loss = {param}(out, batch.y)
            loss.backward()
            opt.step()


    def main(dataset):
        model = torch.compile(GCN(), dynamic=True)
        opt = torch.optim.Adam(model.parameters())
        loader = DataLoader(dataset, batch_size=32)
        {bind}
        for _ in range(10):
            epoch(model, loader, opt, {arg})
"""


def test_loss_passed_through_a_local_name_runs_every_step(tmp_path):
    files = {"models.py": MODELS, "losses.py": LOSSES,
             "train.py": PASSED_TRAIN.format(param="loss_fn", bind="loss_fn = directional_loss", arg="loss_fn")}
    assert finding_rows(tmp_path, "losses.py", "GNN013", files) == [6]
    assert_one_file_agrees(tmp_path, "losses.py", nonempty=True)


def test_loss_passed_by_keyword_directly(tmp_path):
    files = {"models.py": MODELS, "losses.py": LOSSES,
             "train.py": PASSED_TRAIN.format(param="criterion", bind="pass", arg="criterion=directional_loss")}
    assert finding_rows(tmp_path, "losses.py", "GNN013", files) == [6]


def test_callers_passing_different_functions_say_nothing(tmp_path):
    # VALID twin: one caller passes `report`, another `directional_loss`: the name holds either
    train = PASSED_TRAIN.format(param="loss_fn", bind="pass", arg="loss_fn=directional_loss") + \
        "        epoch(model, loader, opt, loss_fn=report)\n"
    files = {"models.py": MODELS, "losses.py": LOSSES, "train.py": train}
    assert finding_rows(tmp_path, "losses.py", "GNN013", files) == []


# -- a field of the loader batch handed to a metrics helper --------------------------------------------
METRICS = """\
    import torch
    from torch_geometric.loader import DataLoader
    from models import GCN


    def metrics(pred, target, valid=None):
        err = (pred - target).norm(dim=-1)
        if valid is not None:
            count = valid.sum()
            if count > 0:
                return (err * valid).sum() / count
        return err.mean()


    def run(dataset, device):
        model = torch.compile(GCN(), dynamic=True)
        opt = torch.optim.Adam(model.parameters())
        for batch in DataLoader(dataset, batch_size=16):
            pred = model(batch.x, batch.edge_index)
            loss = metrics(pred, batch["y"], {valid})
            loss.backward()
            opt.step()
"""


def test_metrics_helper_given_a_batch_field(tmp_path):
    files = {"models.py": MODELS, "train.py": METRICS.format(valid='batch["valid"].to(device)')}
    assert finding_rows(tmp_path, "train.py", "GNN013", files) == [10]


def test_metrics_helper_given_a_python_list(tmp_path):
    # VALID twin: the caller passes a Python list of flags -- nothing says it is a tensor
    files = {"models.py": MODELS, "train.py": METRICS.format(valid="[True, False]")}
    assert finding_rows(tmp_path, "train.py", "GNN013", files) == []


# -- compile options from another module -------------------------------------------------------------
CONFIG = """\
    import torch

    torch_compile_mode = "{mode}"
    use_torch_compile: bool = True
"""
OPTIONS_TRAIN = """\
    import torch
    from torch_geometric.loader import NeighborLoader
    {imp}
    from models import GCN


    def main(data):
        model = GCN()
        if hasattr(torch, "compile"):
            model = torch.compile(model, mode={mode}, dynamic=True)
        loader = NeighborLoader(data, num_neighbors=[10], batch_size=64)
        for batch in loader:
            out = model(batch.x, batch.edge_index)
"""


def _options(tmp_path, mode="reduce-overhead", imp="from config import torch_compile_mode",
             expr="torch_compile_mode", config_name="config.py", extra=None):
    files = {"models.py": MODELS, config_name: CONFIG.format(mode=mode),
             "train.py": OPTIONS_TRAIN.format(imp=imp, mode=expr), **(extra or {})}
    return finding_rows(tmp_path, "train.py", "GNN006", files)


def test_mode_imported_by_name_from_a_config_module(tmp_path):
    assert _options(tmp_path) == [10]
    assert_one_file_agrees(tmp_path, "train.py", nonempty=True, stdin=True)


def test_mode_read_as_a_module_attribute(tmp_path):
    assert _options(tmp_path, imp="import config", expr="config.torch_compile_mode") == [10]


def test_mode_from_a_star_import_of_a_package_module(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/models.py": MODELS, "pkg/settings.py": CONFIG.format(mode="reduce-overhead"),
             "pkg/train.py": OPTIONS_TRAIN.format(imp="from .settings import *", mode="torch_compile_mode")
             .replace("from models import GCN", "from .models import GCN")}
    assert finding_rows(tmp_path, "pkg/train.py", "GNN006", files) == [10]


def test_mode_imported_as_default_says_nothing(tmp_path):
    # VALID twin: the config says "default"
    assert _options(tmp_path, mode="default") == []


def test_mode_overridden_in_the_importing_file_is_unknown(tmp_path):
    # VALID twin: the script sets the module's value from its command line before compiling
    train = OPTIONS_TRAIN.format(imp="import config", mode="config.torch_compile_mode").replace(
        "    model = GCN()\n", "    model = GCN()\n    config.torch_compile_mode = data.mode\n")
    files = {"models.py": MODELS, "config.py": CONFIG.format(mode="reduce-overhead"), "train.py": train}
    assert finding_rows(tmp_path, "train.py", "GNN006", files) == []


def test_mode_rebound_at_run_time_in_the_config_is_unknown(tmp_path):
    # VALID twin: a function of the config module re-binds it (`global`), so no one literal holds
    config = CONFIG.format(mode="reduce-overhead") + \
        "\n\ndef set_mode(mode):\n    global torch_compile_mode\n    torch_compile_mode = mode\n"
    files = {"models.py": MODELS, "config.py": config,
             "train.py": OPTIONS_TRAIN.format(imp="from config import torch_compile_mode", mode="torch_compile_mode")}
    assert finding_rows(tmp_path, "train.py", "GNN006", files) == []


# -- a set-up helper giving the (compiled) model back ---------------------------------------------------
PARALLEL = """\
    import torch
    import torch.nn as nn


    def setup_model_parallel(model, device):
        if torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
            return model.to(device), True
        return {back}, False
"""
SETUP_TRAIN = """\
    import torch
    from torch_geometric.loader import DataLoader
    from parallel import setup_model_parallel
    from models import GCN


    def evaluate(dataset, device):
        net = torch.compile(GCN(), dynamic=True)
        {bind}
        for batch in DataLoader(dataset, batch_size=32):
            out = net(batch.x, batch.edge_index)
            if out.sum() > 0:
                print("positive")
"""


def _setup(tmp_path, bind, back="model.to(device)"):
    files = {"models.py": MODELS, "parallel.py": PARALLEL.format(back=back), "train.py": SETUP_TRAIN.format(bind=bind)}
    return finding_rows(tmp_path, "train.py", "GNN013", files)


def test_helper_returning_the_wrapped_model_in_a_tuple(tmp_path):
    assert _setup(tmp_path, "net, is_parallel = setup_model_parallel(net, device)") == [12]
    assert_one_file_agrees(tmp_path, "train.py", nonempty=True)


def test_helper_result_indexed(tmp_path):
    assert _setup(tmp_path, "net = setup_model_parallel(net, device)[0]") == [12]


def test_local_helper_returning_the_moved_model(tmp_path):
    # the helper in the same file, moving (not wrapping) the model and returning it first in a pair
    train = SETUP_TRAIN.format(bind="net, where = to_device(net, device)").replace(
        "from parallel import setup_model_parallel\n",
        "\n\n    def to_device(module, device):\n        return module.to(device), str(device)\n")
    files = {"models.py": MODELS, "train.py": train}
    assert finding_rows(tmp_path, "train.py", "GNN013", files) == [15]


def test_helper_returning_something_else(tmp_path):
    # VALID twin: the helper's second return gives a new module, not the one it was handed
    assert _setup(tmp_path, "net, is_parallel = setup_model_parallel(net, device)", back="nn.Identity()") == []
