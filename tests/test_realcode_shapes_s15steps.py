"""s15steps: per-step syncs in eager code a step loop driving compiled code calls (GNN013).

1. **The step's argument values reach the helpers the stepped code calls** (semantic/step_args.py): a helper only
   its own file calls (``scatter_sum(src, index, dim_size=dim_size)`` from a stepped ``segment_sum``) runs with
   what those calls pass, so ``if dim_size is None: dim_size = index.max().item() + 1`` never runs when every
   per-step call gives a size (also through ``dim_size = out.size(0)`` re-bound before the call); a method
   stepped by another file (``self.scorer.score(out, y, reduce=False)``) reads what its calls pass.
2. (the ``nn.Module`` loss object's ``forward`` called every step is not told yet: instance_calls.call_methods
   says why; a VALID test pins it.)
3. **A container built with one class's instances** (``trackers = {k: Tracker(w) for ...}`` iterated as
   ``trackers.values()``, a list literal ``[Tracker(1.0), Tracker(w)]``): its loop name is that class
   (typed_items.py), so ``tracker.append_batch(out, batch)`` every step is told to the class's file.
4. **A method of an abstract base runs the local subclasses' overrides** (callback_hooks.py): ``self.loss_fn
   .compute_batch_loss(...)`` with ``self.loss_fn`` a ``LossFunction`` by its annotation (an attribute set from an
   annotated ``__init__`` parameter, or the parameter itself) runs ``MaskedLoss.compute_batch_loss`` (ictp's
   ``TotalLossTracker``).

Each shape in two spellings (a dict comprehension / a list literal; an attribute / a parameter; a function / a
method), each INVALID with VALID twins (never compiled; a base method with a body; two classes in a list; a
branch the per-step calls never take)."""
from __future__ import annotations

from tests.project_files import assert_one_file_agrees, finding_keys, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"

MODEL = """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, x):
            return self.lin(x)
"""


def _keys(tmp_path, files: dict) -> list:
    return finding_keys(write_project(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": MODEL, **files}))


# -- 1. the per-step argument values through the stepped code's local callees --------------------------------

SEGMENTS = """\
    import torch


    def scatter_sum(src, index, dim_size=None):
        if dim_size is None:
            dim_size = index.max().item() + 1
        out = torch.zeros(dim_size, src.size(1), device=src.device)
        return out.index_add_(0, index, src)


    def segment_sum(data, segment_ids, num_segments):
        return scatter_sum(data, segment_ids, dim_size=num_segments)
"""

REPULSION = """\
    import torch
    import segments


    class PairRepulsion:
        def __call__(self, energy, pair_index, n_nodes):
            return segments.segment_sum(energy, pair_index, n_nodes)
"""

REPULSION_TRAIN = """\
    import torch
    from model import Net
    from repulsion import PairRepulsion


    def train(loader):
        model = torch.compile(Net())
        opt = torch.optim.Adam(model.parameters())
        repulsion = PairRepulsion()
        for x, pair_index, n in loader:
            out = model(x)
            loss = repulsion(out, pair_index, n.size(0)).sum()
            loss.backward()
            opt.step()
"""


def test_a_size_every_per_step_call_gives_reaches_the_local_scatter(tmp_path):
    # VALID: the stepped object hands `segment_sum` a size, which passes it on to `scatter_sum`
    keys = _keys(tmp_path, {"segments.py": SEGMENTS, "repulsion.py": REPULSION, "train.py": REPULSION_TRAIN})
    assert not [k for k in keys if k.startswith("segments.py")], keys


def test_a_size_rebound_before_the_local_call_is_never_none(tmp_path):
    # VALID: `dim_size = out.size(0)` over the parameter, then handed on (orb's scatter_mean)
    segments = SEGMENTS.replace("""\
    def segment_sum(data, segment_ids, num_segments):
        return scatter_sum(data, segment_ids, dim_size=num_segments)
""", """\
    def segment_sum(data, segment_ids, num_segments, dim_size=None):
        out = scatter_sum(data, segment_ids, dim_size=num_segments)
        dim_size = out.size(0)
        return scatter_sum(out, segment_ids, dim_size=dim_size)
""")
    keys = _keys(tmp_path, {"segments.py": segments, "repulsion.py": REPULSION, "train.py": REPULSION_TRAIN})
    assert not [k for k in keys if k.startswith("segments.py")], keys


def test_a_per_step_call_leaving_the_size_out_syncs_in_the_local_scatter(tmp_path):
    # INVALID twin: the stepped helper calls the scatter without a size
    segments = SEGMENTS.replace("scatter_sum(data, segment_ids, dim_size=num_segments)",
                                "scatter_sum(data, segment_ids)")
    keys = _keys(tmp_path, {"segments.py": segments, "repulsion.py": REPULSION, "train.py": REPULSION_TRAIN})
    assert "segments.py:6:20: GNN013" in keys, keys


def test_a_method_stepped_by_another_file_reads_what_its_calls_pass(tmp_path):
    # a method instead of a function: `self.scorer.score(out, y, reduce=False)` every step
    scorer = """\
        import torch


        class Scorer:
            def score(self, pred, target, reduce=True):
                err = (pred - target).abs()
                if reduce:
                    return err.mean().item()
                return err
    """
    trainer = """\
        import torch
        from model import Net
        from scorer import Scorer


        class Runner:
            def __init__(self):
                self.net = torch.compile(Net())
                self.scorer = Scorer()
                self.opt = torch.optim.Adam(self.net.parameters())

            def fit(self, loader):
                for x, y in loader:
                    out = self.net(x)
                    err = self.scorer.score(out, y, reduce=False)
                    err.mean().backward()
                    self.opt.step()
    """
    keys = _keys(tmp_path, {"scorer.py": scorer, "trainer.py": trainer})
    assert not [k for k in keys if k.startswith("scorer.py")], keys
    # INVALID twin: the default (`reduce=True`) every step
    (tmp_path / "trainer.py").write_text((tmp_path / "trainer.py").read_text().replace(
        "self.scorer.score(out, y, reduce=False)", "torch.tensor(self.scorer.score(out, y))"))
    keys = finding_keys(tmp_path)
    assert "scorer.py:8:20: GNN013" in keys, keys


# -- 2. not yet: an nn.Module loss object's forward ---------------------------------------------------------------

def test_a_loss_modules_forward_is_not_told_yet(tmp_path):
    # VALID for now (instance_calls.call_methods): its branches may test batch keys nothing produces
    losses = """\
        import torch
        from torch import nn


        class MultiTaskLoss(nn.Module):
            def forward(self, batch, outputs):
                loss = (outputs - batch["y"]).square().mean()
                if "pairs" in batch:
                    print(loss.item())
                return loss
    """
    train = """\
        import torch
        from losses import MultiTaskLoss
        from model import Net


        def train(loader):
            model = torch.compile(Net())
            opt = torch.optim.Adam(model.parameters())
            criterion = MultiTaskLoss()
            for batch in loader:
                loss = criterion(batch, model(batch["x"]))
                loss.backward()
                opt.step()
    """
    keys = _keys(tmp_path, {"losses.py": losses, "train.py": train})
    assert not [k for k in keys if k.startswith("losses.py")], keys


# -- 3. a container built with one class's instances, iterated every step -------------------------------------

TRACKERS = """\
    import torch


    class Tracker:
        def __init__(self, weight):
            self.weight = weight
            self.losses = []

        def append_batch(self, out, batch):
            self.losses.append((out - batch.y).abs().mean().item() * self.weight)
"""
TRACKER_LINE = "trackers.py:10:28: GNN013"


def _tracker_train(build: str, loop: str) -> str:
    return f"""\
        import torch
        from model import Net
        from trackers import Tracker


        def evaluate(loader, weights):
            model = torch.compile(Net())
            {build}
            for batch in loader:
                out = model(batch.x)
                {loop}
                    tracker.append_batch(out, batch)
    """


def test_the_values_of_a_dict_comprehension_of_trackers_run_their_method_every_step(tmp_path):
    train = _tracker_train("trackers = {name: Tracker(w) for name, w in weights.items()}",
                           "for tracker in trackers.values():")
    keys = _keys(tmp_path, {"trackers.py": TRACKERS, "train.py": train})
    assert TRACKER_LINE in keys, keys


def test_the_items_of_a_list_of_trackers_run_their_method_every_step(tmp_path):
    # a list literal, iterated directly
    train = _tracker_train("trackers = [Tracker(1.0), Tracker(weights[0])]", "for tracker in trackers:")
    keys = _keys(tmp_path, {"trackers.py": TRACKERS, "train.py": train})
    assert TRACKER_LINE in keys, keys


def test_a_list_of_two_classes_says_no_class(tmp_path):
    # VALID: the items are of two classes (only one is a Tracker): nothing is told
    trackers = TRACKERS + """\


        class Other:
            def append_batch(self, out, batch):
                pass
    """
    train = _tracker_train("trackers = [Tracker(1.0), Other()]", "for tracker in trackers:").replace(
        "from trackers import Tracker", "from trackers import Other, Tracker")
    keys = _keys(tmp_path, {"trackers.py": trackers, "train.py": train})
    assert TRACKER_LINE not in keys, keys


def test_trackers_of_a_program_that_never_compiles(tmp_path):
    # VALID
    train = _tracker_train("trackers = {name: Tracker(w) for name, w in weights.items()}",
                           "for tracker in trackers.values():").replace("torch.compile(Net())", "Net()")
    keys = _keys(tmp_path, {"trackers.py": TRACKERS, "train.py": train})
    assert TRACKER_LINE not in keys, keys


# -- 4. a method of an abstract base runs the local subclasses' overrides ------------------------------------

LOSS_FUNCTIONS = """\
    import torch


    class LossFunction:
        def compute_batch_loss(self, results, batch):
            raise NotImplementedError()


    class MaskedLoss(LossFunction):
        def compute_batch_loss(self, results, batch):
            mask = ~torch.isnan(batch.y)
            if mask.sum().item() == 0:
                return results.sum() * 0.0
            return (results[mask] - batch.y[mask]).abs().mean()


    class Accumulator:
        def __init__(self, loss_fn: LossFunction):
            self.loss_fn = loss_fn
            self.values = []

        def append_batch(self, results, batch):
            self.values.append(self.loss_fn.compute_batch_loss(results, batch))
"""
OVERRIDE_LINE = "loss_functions.py:12:12: GNN013"

ACCUMULATE = """\
    import torch
    from model import Net
    from loss_functions import Accumulator


    def validate(loader, loss_fn):
        model = torch.compile(Net())
        acc = Accumulator(loss_fn)
        for batch in loader:
            acc.append_batch(model(batch.x), batch)
"""


def test_an_abstract_method_called_on_an_annotated_attribute_runs_the_overrides(tmp_path):
    keys = _keys(tmp_path, {"loss_functions.py": LOSS_FUNCTIONS, "validate.py": ACCUMULATE})
    assert OVERRIDE_LINE in keys, keys
    assert_one_file_agrees(tmp_path, "loss_functions.py", nonempty=True)


def test_an_abstract_method_called_on_a_parameter_runs_the_overrides(tmp_path):
    # a function instead of a method, the base named by the parameter's annotation
    losses = LOSS_FUNCTIONS.replace("""\
    class Accumulator:
        def __init__(self, loss_fn: LossFunction):
            self.loss_fn = loss_fn
            self.values = []

        def append_batch(self, results, batch):
            self.values.append(self.loss_fn.compute_batch_loss(results, batch))
""", """\
    def batch_loss(loss_fn: LossFunction, results, batch):
        return loss_fn.compute_batch_loss(results, batch)
""")
    validate = """\
        import torch
        from model import Net
        from loss_functions import batch_loss


        def validate(loader, loss_fn, opt):
            model = torch.compile(Net())
            for batch in loader:
                loss = batch_loss(loss_fn, model(batch.x), batch)
                loss.backward()
                opt.step()
    """
    keys = _keys(tmp_path, {"loss_functions.py": losses, "validate.py": validate})
    assert OVERRIDE_LINE in keys, keys


def test_a_method_with_a_body_does_not_run_the_overrides(tmp_path):
    # VALID: the base's method is no abstract one (an override may not be what runs): nothing is presumed
    losses = LOSS_FUNCTIONS.replace("            raise NotImplementedError()", "            return results.sum()")
    keys = _keys(tmp_path, {"loss_functions.py": losses, "validate.py": ACCUMULATE})
    assert OVERRIDE_LINE not in keys, keys


def test_the_overrides_of_a_program_that_never_compiles(tmp_path):
    # VALID
    keys = _keys(tmp_path, {"loss_functions.py": LOSS_FUNCTIONS,
                            "validate.py": ACCUMULATE.replace("torch.compile(Net())", "Net()")})
    assert OVERRIDE_LINE not in keys, keys
