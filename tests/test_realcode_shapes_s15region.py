"""s15region shapes: what a compiled region reaches.

- particleflow: ``self.backbone = self._build_backbone_layers(...)``, a builder method filling a
  ``layers = nn.ModuleList()`` with ``layers.append(self._build_backbone_layer(...))``, a second builder
  returning one of several layer classes (one imported under ``try: ... except ImportError``); the
  compiled forward runs ``for conv in backbone: conv(x, mask)`` (semantic/choices.py
  ``_returned_items``: the items of a container a local builder returns);
- equiformer_v3: ``self.so3_rotation = SO3Rotation(lmax, use_rotation_mask=(not self.direct))`` in the
  compiled model's file; ``SO3Rotation`` (another file, compiling nothing) masks only under
  ``if self.use_rotation_mask:`` -- a switch defaulting to False that another file's construction may turn
  on, so it is no debugging switch presumed off (default_off_flags.py; the engine tells "on",
  fact_joins.join_ctor_switches).
Each shape is tested in two spellings; each INVALID case has a VALID twin."""
from __future__ import annotations

from tests.project_files import finding_lines, run, write_project

PYPROJECT = "[project]\nname = 'demo'\n\n[tool.gnnlint]\n"


def _lines(tmp_path, files: dict) -> list:
    root = write_project(tmp_path, {"pyproject.toml": PYPROJECT, **files})
    out = finding_lines(run(["check", ".", "--no-cache", "--output-format", "concise"], root).output)
    return sorted(line.split(" ")[0].rsplit(":", 2)[0] + " " + line.split(" ")[1] for line in out)


# -- a builder method returns the module list the compiled forward loops over ---------------------
LAYER = """\
    import torch
    from torch import nn


    class LiteLayer(nn.Module):
        def forward(self, x, mask):
            return x[mask]
"""
BUILDER_MODEL = """\
    import torch
    from torch import nn
    try:
        from demo.layer import LiteLayer
    except ImportError:
        LiteLayer = None


    class Net(nn.Module):
        def __init__(self, kind, n):
            super().__init__()
            self.kind = kind
            self.backbone = self._build_layers(n)

        def _build_layers(self, n):
            layers = nn.ModuleList()
            for i in range(n):
                layers.append(self._build_layer(i))
            return layers

        def _build_layer(self, i):
            if self.kind == "linear":
                return nn.Linear(3, 3)
            if self.kind == "lite":
                if LiteLayer is None:
                    raise ImportError("LitePT is missing")
                return LiteLayer()
            raise ValueError(self.kind)

        def _run(self, x, mask, backbone=None):
            backbone = self.backbone if backbone is None else backbone
            for conv in backbone:
                x = conv(x, mask)
            return x

        def forward(self, x, mask):
            return self._run(x, mask)
"""
# another spelling: a module-level builder function returning a list comprehension, wrapped by the caller
BUILDER_FUNC_MODEL = """\
    import torch
    from torch import nn
    from demo.layer import LiteLayer


    def make_blocks(depth):
        return [LiteLayer() for _ in range(depth)]


    class Net(nn.Module):
        def __init__(self, depth):
            super().__init__()
            self.blocks = nn.ModuleList(make_blocks(depth))

        def forward(self, x, mask):
            for block in self.blocks:
                x = block(x, mask)
            return x
"""
# and a Sequential a builder method returns, filled from a local list
BUILDER_SEQ_MODEL = """\
    import torch
    from torch import nn
    from demo.layer import LiteLayer


    class Net(nn.Module):
        def __init__(self, depth):
            super().__init__()
            self.trunk = self.make_trunk(depth)

        def make_trunk(self, depth):
            mods = []
            for _ in range(depth):
                mods.append(LiteLayer())
            return nn.Sequential(*mods)

        def forward(self, x, mask):
            return self.trunk(x, mask)
"""
TRAIN = """\
    import torch
    from demo.model import Net
    model = torch.compile(Net({args}))
"""


def test_builder_method_module_list_reached(tmp_path):
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": BUILDER_MODEL,
             "demo/train.py": TRAIN.format(args='"lite", 3')}
    assert _lines(tmp_path, files) == ["demo/layer.py:7 GNN008"]


def test_builder_function_list_reached(tmp_path):
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": BUILDER_FUNC_MODEL,
             "demo/train.py": TRAIN.format(args="3")}
    assert _lines(tmp_path, files) == ["demo/layer.py:7 GNN008"]


def test_builder_sequential_reached(tmp_path):
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": BUILDER_SEQ_MODEL,
             "demo/train.py": TRAIN.format(args="3")}
    assert _lines(tmp_path, files) == ["demo/layer.py:7 GNN008"]


def test_builder_valid_when_nothing_compiles(tmp_path):
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": BUILDER_MODEL,
             "demo/train.py": 'from demo.model import Net\nmodel = Net("lite", 3)\n'}
    assert _lines(tmp_path, files) == []


def test_builder_valid_when_the_list_holds_other_layers(tmp_path):
    model = BUILDER_FUNC_MODEL.replace("return [LiteLayer() for _ in range(depth)]",
                                       "return [nn.Linear(3, 3) for _ in range(depth)]")
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": model,
             "demo/train.py": TRAIN.format(args="3")}
    assert _lines(tmp_path, files) == []


# -- a default-False switch another file's construction turns on ----------------------------------
ROT = """\
    import torch


    class Rotation(torch.nn.Module):
        def __init__(self, lmax, use_mask=False):
            super().__init__()
            self.lmax = lmax
            self.use_mask = use_mask

        def set_wigner(self, rot):
            self.wigner = self._to_wigner(rot)

        def _to_wigner(self, rot):
            x = rot[:, :, 1]
            if self.use_mask:
                keep = x > 0.5
                x = x[~keep]
            return x
"""
ROT_MODEL = """\
    import torch
    from demo.so3 import Rotation


    class Net(torch.nn.Module):
        def __init__(self, direct=True):
            super().__init__()
            self.direct = direct
            self.rot = Rotation(3, {kw})

        def _edges(self, v):
            self.rot.set_wigner(v)
            return v

        def forward(self, v):
            return self._edges(v)
"""
# another spelling: a helper object (no module) whose method the compiled forward calls, the switch positional
CUTOFF = """\
    import torch


    class Cutoff:
        def __init__(self, radius, trim=False):
            self.radius = radius
            self.trim = trim

        def trim_edges(self, dist):
            if self.trim:
                dist = dist[dist < self.radius]
            return dist
"""
CUTOFF_MODEL = """\
    import torch
    from demo.cutoff import Cutoff


    class Net(torch.nn.Module):
        def __init__(self, radius, trim):
            super().__init__()
            self.cutoff = Cutoff(radius, {arg})

        def forward(self, dist):
            return self.cutoff.trim_edges(dist)
"""


def test_switch_turned_on_elsewhere_is_compiled(tmp_path):
    files = {"demo/__init__.py": "", "demo/so3.py": ROT, "demo/model.py": ROT_MODEL.format(
        kw="use_mask=(not self.direct)"), "demo/train.py": TRAIN.format(args="direct=False")}
    assert _lines(tmp_path, files) == ["demo/so3.py:17 GNN008"]


def test_switch_turned_on_positionally_is_compiled(tmp_path):
    files = {"demo/__init__.py": "", "demo/cutoff.py": CUTOFF, "demo/model.py": CUTOFF_MODEL.format(
        arg="trim"), "demo/train.py": TRAIN.format(args="5.0, True")}
    assert _lines(tmp_path, files) == ["demo/cutoff.py:11 GNN008"]


def test_switch_never_turned_on_stays_off(tmp_path):
    files = {"demo/__init__.py": "", "demo/so3.py": ROT, "demo/model.py": ROT_MODEL.format(kw=""),
             "demo/train.py": TRAIN.format(args="direct=False")}
    assert _lines(tmp_path, files) == []
    files = {"demo/__init__.py": "", "demo/cutoff.py": CUTOFF,
             "demo/model.py": CUTOFF_MODEL.format(arg="").replace("radius, )", "radius)"),
             "demo/train.py": TRAIN.format(args="5.0, True")}
    assert _lines(tmp_path / "b", files) == []


# -- a PyG norm a local factory builds: `self.norm = build_norm(kind, dim)`, `self.norm(f, batch)` ---------
NORM_FUNC_MODEL = """\
    import torch
    import torch.nn as nn
    from torch_geometric.nn import GraphNorm


    def build_norm(norm, channels):
        if norm == "graph":
            return GraphNorm(channels)
        elif norm == "layer":
            return nn.LayerNorm(channels)
        raise ValueError(norm)


    class Block(nn.Module):
        def __init__(self, dim, graph_norm="graph"):
            super().__init__()
            self.norm = build_norm(graph_norm, dim)

        def forward(self, f, batch):
            return self.norm(f, batch)
"""
# another spelling: a method picks the norm, the call is guarded by the kind it stored
NORM_METHOD_MODEL = """\
    import torch
    from torch import nn
    import torch_geometric.nn as gnn


    class Block(nn.Module):
        def __init__(self, dim, kind="pair"):
            super().__init__()
            self.kind = kind
            self.normalize = self._make_norm(dim)

        def _make_norm(self, dim):
            if self.kind == "pair":
                return gnn.PairNorm()
            return nn.BatchNorm1d(dim)

        def forward(self, h, batch):
            if self.kind == "pair":
                return self.normalize(h, batch)
            return self.normalize(h)
"""
NORM_TRAIN = """\
    import torch
    from demo.model import Block
    model = torch.compile(Block(8))
"""


def test_pyg_norm_from_a_factory_function(tmp_path):
    files = {"demo/__init__.py": "", "demo/model.py": NORM_FUNC_MODEL, "demo/train.py": NORM_TRAIN}
    assert _lines(tmp_path, files) == ["demo/model.py:20 GNN009"]


def test_pyg_norm_from_a_factory_method(tmp_path):
    files = {"demo/__init__.py": "", "demo/model.py": NORM_METHOD_MODEL, "demo/train.py": NORM_TRAIN}
    assert _lines(tmp_path, files) == ["demo/model.py:19 GNN009"]


def test_factory_norm_valid_when_torch_norms_only_or_not_compiled(tmp_path):
    model = NORM_FUNC_MODEL.replace("return GraphNorm(channels)", "return nn.BatchNorm1d(channels)") \
        .replace("return self.norm(f, batch)", "return self.norm(f)")
    files = {"demo/__init__.py": "", "demo/model.py": model, "demo/train.py": NORM_TRAIN}
    assert _lines(tmp_path, files) == []
    files = {"demo/__init__.py": "", "demo/model.py": NORM_FUNC_MODEL,
             "demo/train.py": "from demo.model import Block\nmodel = Block(8)\n"}
    assert _lines(tmp_path / "b", files) == []


# -- a factory returning the builder it defines: `build = self._conv_factory(...)`, `build(...)` ----------
CLOSURE_MODEL = """\
    import torch
    from torch import nn
    from demo.layer import LiteLayer


    class Net(nn.Module):
        def __init__(self, depth, kind="lite"):
            super().__init__()
            self.blocks = nn.ModuleList()
            build_block = self._block_factory(kind)
            for _ in range(depth):
                block = build_block()
                self.blocks.append(block)

        def _block_factory(self, kind):
            def build_block():
                if kind == "lite":
                    return LiteLayer()
                return nn.Identity()
            return build_block

        def forward(self, x, mask):
            for block in self.blocks:
                x = block(x, mask)
            return x
"""
# another spelling: a module-level maker, the blocks built in a comprehension
CLOSURE_FUNC_MODEL = """\
    import torch
    from torch import nn
    from demo.layer import LiteLayer


    def make_builder(width):
        def make(i):
            return LiteLayer()
        return make


    class Net(nn.Module):
        def __init__(self, depth):
            super().__init__()
            make = make_builder(16)
            self.layers = nn.ModuleList([make(i) for i in range(depth)])

        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return x
"""


def test_closure_factory_method_reached(tmp_path):
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": CLOSURE_MODEL,
             "demo/train.py": TRAIN.format(args="3")}
    assert _lines(tmp_path, files) == ["demo/layer.py:7 GNN008"]


def test_closure_factory_function_reached(tmp_path):
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": CLOSURE_FUNC_MODEL,
             "demo/train.py": TRAIN.format(args="3")}
    assert _lines(tmp_path, files) == ["demo/layer.py:7 GNN008"]


def test_closure_factory_valid_when_it_builds_other_layers(tmp_path):
    model = CLOSURE_FUNC_MODEL.replace("return LiteLayer()", "return nn.Linear(3, 3)")
    files = {"demo/__init__.py": "", "demo/layer.py": LAYER, "demo/model.py": model,
             "demo/train.py": TRAIN.format(args="3")}
    assert _lines(tmp_path, files) == []


# -- graph i's row of a batch of masks: `x[i][node_mask[i]]` -----------------------------------------------
ROWS_FUNC = """\
    import torch
    import torch_geometric
    from torch import nn


    def to_pyg_batch(node_features, edge_index, node_mask):
        data_list = [
            torch_geometric.data.Data(x=node_features[i][node_mask[i]], edge_index=edge_index[i])
            for i in range(node_features.shape[0])
        ]
        return torch_geometric.data.Batch.from_data_list(data_list)


    class Net(nn.Module):
        def forward(self, node_features, edge_index, node_mask):
            return to_pyg_batch(node_features, edge_index, node_mask)
"""
# another spelling: a method looping over the graphs of a padded batch
ROWS_METHOD = """\
    import torch
    from torch import nn


    class Net(nn.Module):
        def _unpad(self, h, pad_mask):
            out = []
            for b in range(h.size(0)):
                out.append(h[b][pad_mask[b]])
            return torch.cat(out)

        def forward(self, h, pad_mask):
            return self._unpad(h, pad_mask)
"""


def test_mask_row_in_a_comprehension(tmp_path):
    files = {"demo/__init__.py": "", "demo/model.py": ROWS_FUNC, "demo/train.py": TRAIN.format(args="")}
    assert _lines(tmp_path, files) == ["demo/model.py:8 GNN008"]


def test_mask_row_in_a_loop(tmp_path):
    files = {"demo/__init__.py": "", "demo/model.py": ROWS_METHOD, "demo/train.py": TRAIN.format(args="")}
    assert _lines(tmp_path, files) == ["demo/model.py:9 GNN008"]


def test_mask_row_valid_for_positions_and_assignment(tmp_path):
    model = ROWS_METHOD.replace("out.append(h[b][pad_mask[b]])", "out.append(h[b][node_index[b]])") \
        .replace("def _unpad(self, h, pad_mask)", "def _unpad(self, h, node_index)")
    files = {"demo/__init__.py": "", "demo/model.py": model, "demo/train.py": TRAIN.format(args="")}
    assert _lines(tmp_path, files) == []
    model = ROWS_METHOD.replace("out.append(h[b][pad_mask[b]])", "h[b][pad_mask[b]] = 0.0\n            out.append(h[b])")
    files = {"demo/__init__.py": "", "demo/model.py": model, "demo/train.py": TRAIN.format(args="")}
    assert _lines(tmp_path / "b", files) == []


# -- a debugging switch stays off under compile even when a construction may pass it ----------------------
DEBUG_LOSS = """\
    import warnings
    import torch


    class Loss:
        def __init__(self, scale, debug=False):
            self.scale = scale
            self.debug = debug

        def loss(self, pred, mask):
            if self.debug:
                picked = pred[~mask]
                if torch.any(torch.isnan(picked)):
                    raise ValueError("NaN in preds")
            if self.debug:
                warnings.warn(f"mean {pred.mean().item()}")
            return (pred * self.scale).sum()
"""
DEBUG_MODEL = """\
    import torch
    from demo.loss import Loss


    class Net(torch.nn.Module):
        def __init__(self, debug=False):
            super().__init__()
            self.crit = Loss(2.0, debug=debug)

        def forward(self, pred, mask):
            return self.crit.loss(pred, mask)
"""


def test_debug_check_branch_stays_off_when_the_switch_may_be_passed(tmp_path):
    files = {"demo/__init__.py": "", "demo/loss.py": DEBUG_LOSS, "demo/model.py": DEBUG_MODEL,
             "demo/train.py": TRAIN.format(args="")}
    assert _lines(tmp_path, files) == []
    computing = DEBUG_LOSS.replace('raise ValueError("NaN in preds")', "pred = picked")
    files["demo/loss.py"] = computing
    assert _lines(tmp_path / "b", files) == ["demo/loss.py:12 GNN008", "demo/loss.py:13 GNN001"]
