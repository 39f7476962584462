"""Compiled reach through a typed parameter and an imported base (heldout9 torchgfn, s10gfn):

- a compiled closure calling ``gflownet.loss(...)`` on a parameter annotated ``gflownet: Base`` (an imported
  project class) runs ``loss`` of ``Base`` and of each project class the compiling program builds -- not of
  every subclass in the project (semantic/annotated_calls.py);
- ``self.get_scores(...)`` in such a method, inherited from an imported base, runs the base's method (its
  file is told);
- ``class B(A[T])``: a generic base is still the base;
- a check behind ``self.debug`` -- an ``__init__`` switch defaulting to False -- in a class compiled only
  from another file is off there (semantic/default_off_flags.py).
"""
from __future__ import annotations

from tests.project_files import whole_tree_lines, write_project

BASE = """\
    from typing import Generic, TypeVar

    import torch
    import torch.nn as nn

    from gfn.utils.probs import trajectory_pfs

    T = TypeVar("T")


    class GFlowNet(nn.Module, Generic[T]):
        def __init__(self, pf, debug: bool = False):
            super().__init__()
            self.pf = pf
            self.debug = debug

        def loss(self, env, trajectories):
            raise NotImplementedError


    class TrajectoryGFlowNet(GFlowNet[T]):
        def get_scores(self, trajectories):
            log_pf = trajectory_pfs(self.pf, trajectories)
            return log_pf.sum(0)
"""

PROBS = """\
    import torch


    def trajectory_pfs(pf, trajectories):
        step_mask = trajectories.is_dummy
        if not torch.any(step_mask):
            return torch.zeros(1)
        return pf(trajectories.states)
"""

TB = """\
    import torch

    from gfn.gflownet.base import TrajectoryGFlowNet


    class TBGFlowNet(TrajectoryGFlowNet):
        def __init__(self, pf, debug: bool = False):
            super().__init__(pf, debug=debug)

        def loss(self, env, trajectories):
            scores = self.get_scores(trajectories)
            loss = (scores ** 2).mean()
            if self.debug and torch.isnan(loss).any():
                raise ValueError("loss is nan")
            return loss


    class DBGFlowNet(TrajectoryGFlowNet):
        def loss(self, env, trajectories):
            if torch.isinf(trajectories.log_rewards).any():
                raise ValueError("inf")
            return trajectories.log_rewards.mean()
"""

TRAIN = """\
    import torch

    from gfn.gflownet import GFlowNet, TBGFlowNet


    def prepare_loss_fn(gflownet: GFlowNet):
        def loss_wrapper(env, batch):
            return gflownet.loss(env, batch)

        return torch.compile(loss_wrapper)


    def main(pf, sampler):
        gflownet = TBGFlowNet(pf)
        loss_fn = prepare_loss_fn(gflownet)
        for _ in range(100):
            loss = loss_fn(None, sampler.sample())
            loss.backward()
"""


def _project(tmp_path, **changed):
    files = {
        "gfn/__init__.py": "",
        "gfn/utils/__init__.py": "",
        "gfn/utils/probs.py": PROBS,
        "gfn/gflownet/__init__.py": "from .base import GFlowNet, TrajectoryGFlowNet\n"
                                    "from .trajectory_balance import DBGFlowNet, TBGFlowNet\n",
        "gfn/gflownet/base.py": BASE,
        "gfn/gflownet/trajectory_balance.py": TB,
        "train.py": TRAIN,
    }
    files.update(changed)
    write_project(tmp_path, files)
    return sorted((line.split(":")[0].split("/")[-1], int(line.split(":")[1]), line.split(" ")[1])
                  for line in whole_tree_lines(tmp_path))


def test_typed_parameter_method_runs_the_built_class_and_its_inherited_base(tmp_path):
    # gflownet.loss -> TBGFlowNet.loss -> self.get_scores (the imported base's) -> trajectory_pfs
    assert _project(tmp_path) == [("probs.py", 6, "GNN001")]


def test_valid_subclass_the_program_does_not_build(tmp_path):
    # DBGFlowNet.loss would break the graph, but no compiling program builds a DBGFlowNet
    assert not any(name == "trajectory_balance.py" for name, _, _ in _project(tmp_path))


def test_built_subclass_override_is_compiled(tmp_path):
    train = TRAIN.replace("TBGFlowNet", "DBGFlowNet")
    assert ("trajectory_balance.py", 20, "GNN001") in _project(tmp_path, **{"train.py": train})


def test_invalid_switch_defaulting_on_is_compiled(tmp_path):
    # LOOK-ALIKE: a switch that is on by default guards a check the compiled loss runs
    tb = TB.replace("debug: bool = False", "debug: bool = True")
    assert ("trajectory_balance.py", 13, "GNN001") in _project(tmp_path, **{"gfn/gflownet/trajectory_balance.py": tb})


def test_valid_untyped_parameter_reaches_nothing(tmp_path):
    # without the annotation nothing says what `gflownet` is: no guess
    train = TRAIN.replace("gflownet: GFlowNet", "gflownet")
    assert _project(tmp_path, **{"train.py": train}) == []


def _gnn008_lines(source: str) -> list:
    import textwrap

    from gnnlint.config import Settings
    from gnnlint.engine import lint_source
    return sorted(f.line for f in lint_source(textwrap.dedent(source), "case.py", Settings()) if f.code == "GNN008")


MASKS = """\
    import torch


    def _valid_masks(trajectories):
        state_mask = ~trajectories.states.is_sink_state
        action_mask = ~trajectories.actions.is_dummy
        return state_mask, action_mask


    @torch.compile
    def pfs(pf, trajectories):
        state_mask, action_mask = _valid_masks(trajectories)
        valid_states = trajectories.states[state_mask]
        step_mask = ~trajectories.states.is_initial
        first = trajectories.states[step_mask]
        return pf(valid_states, trajectories.actions[action_mask]), first
"""


def test_masks_by_bit_inversion_and_from_a_local_helper():
    # `m = ~flags` named a mask; `a, b = helper(...)` whose every return gives masks at those positions
    assert _gnn008_lines(MASKS) == [13, 15, 16]


def test_valid_helper_returning_counts_and_inverted_non_masks():
    # VALID look-alikes: the helper returns sizes, and `~` of a value not named a mask is no mask
    source = MASKS.replace("return state_mask, action_mask", "return state_mask.sum(), action_mask.sum()") \
        .replace("step_mask = ~", "step_bits = ~").replace("[step_mask]", "[step_bits]")
    assert _gnn008_lines(source) == []
