"""Messages are true to the code and to the target versions, and short up front.

Every rule GNN001-GNN020 is covered through the bundled hazard fixtures (each
rule has one); the facts a message states (the loop's role, the call that
copies, what kind of sparse value, the versions) each have a test of their own.
"""
import importlib.util
from pathlib import Path

import pytest

from gnnlint.engine import LintOptions, lint_bytes
from gnnlint.rules import all_codes

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
CODES = frozenset(all_codes())
RULES = sorted(c for c in CODES if "GNN001" <= c <= "GNN020")

_spec = importlib.util.spec_from_file_location("message_lengths", ROOT / "bench" / "message_lengths.py")
message_lengths = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(message_lengths)
first_sentence = message_lengths.first_sentence

# The measured versions (shared/evidence/torch-2.13-pyg-2.8.1): cited only when targeted.
MEASURED_MARKS = ("2.13", "2.8.1")


def _lint_fixtures(codes=CODES, **options):
    opts = LintOptions(codes=codes, **options)
    found = []
    for path in sorted(FIXTURES.glob("*_hazard.py")):
        found += lint_bytes(str(path), path.read_bytes(), opts).findings
    return found


def _lint(src: str, codes, **options):
    return lint_bytes("m.py", src.encode(), LintOptions(codes=frozenset(codes), **options)).findings


# -- versions ------------------------------------------------------------------------
@pytest.mark.parametrize("torch_version,pyg_version", [("2.4.1", "2.4.0"), ("2.1.2", "2.3.1"), ("2.0.1", "2.3.0")])
def test_no_measured_version_claims_for_another_target(torch_version, pyg_version):
    findings = _lint_fixtures(torch_version=torch_version, pyg_version=pyg_version)
    assert findings
    assert [f.message for f in findings if any(m in f.message for m in MEASURED_MARKS)] == []


def test_measured_numbers_only_for_the_measured_pyg():
    # torch 2.13 is the target, so "torch 2.13" may be said; PyG 2.5 is not what was measured
    findings = _lint_fixtures(torch_version="2.13.0", pyg_version="2.5.0")
    assert [f.message for f in findings if "2.8.1" in f.message or "measured" in f.message] == []


def test_measured_versions_are_cited_for_the_measured_target():
    findings = _lint_fixtures(torch_version="2.13.0", pyg_version="2.8.1")
    assert any("torch 2.13" in f.message for f in findings)
    cited = {f.code for f in findings if "torch 2.13 + PyG 2.8.1" in f.message}
    assert {"GNN014", "GNN015", "GNN016", "GNN017"} <= cited


def test_gnn014_suggests_fullgraph_only_where_it_was_measured():
    src = FIXTURES / "layer_graph_break_hazard.py"
    for torch_version, expected in (("2.13.0", True), ("2.4.1", False)):
        found = lint_bytes(str(src), src.read_bytes(), LintOptions(
            codes=frozenset({"GNN014"}), torch_version=torch_version, pyg_version="2.8.1")).findings
        assert found
        assert all(("fullgraph=True" in f.message) == expected for f in found if "GCNConv" in f.message)
        # PyG 2.8.1's source lines are cited only for the measured versions
        assert all(("PyG breaks at `utils/" in f.message) == expected for f in found)


def test_torch_geometric_compile_deprecated_only_from_pyg_2_5():
    src = "import torch\nimport torch_geometric\nmodel = torch_geometric.compile(model)\n"
    assert _lint(src, {"GNN010"}, pyg_version="2.4.0") == []
    new = _lint(src, {"GNN010"}, pyg_version="2.5.0")
    assert [f.line for f in new] == [3]
    assert "since PyG 2.5" in new[0].message


_NOT_DYNAMIC = """
import torch
from torch_geometric.loader import DataLoader
model = torch.compile(net, dynamic=False)
for data in DataLoader(graphs, batch_size=32):
    model(data.x, data.edge_index, data.batch)
"""


def test_recompile_limit_named_as_the_target_torch_names_it():
    old = _lint(_NOT_DYNAMIC, {"GNN007"}, torch_version="2.4.1")
    new = _lint(_NOT_DYNAMIC, {"GNN007"}, torch_version="2.6.0")
    assert "`cache_size_limit`" in old[0].message and "recompile_limit" not in old[0].message
    assert "`recompile_limit`" in new[0].message


def test_automatic_dynamic_shapes_only_from_torch_2_1():
    src = _NOT_DYNAMIC.replace(", dynamic=False", "")
    old = _lint(src, {"GNN007"}, torch_version="2.0.1")
    new = _lint(src, {"GNN007"}, torch_version="2.4.1")
    assert "automatic dynamic shapes" in new[0].message and "torch 2.4" in new[0].message
    assert "no automatic dynamic shapes" in old[0].message


# -- shape: the hazard and its cost first ---------------------------------------------
def test_every_rule_has_a_fixture_finding():
    findings = _lint_fixtures() + _lint_fixtures(torch_version="2.4.1", pyg_version="2.4.0")
    assert sorted({f.code for f in findings}) == RULES


def test_first_sentence_states_the_hazard_and_the_suggestion_follows():
    findings = _lint_fixtures() + _lint_fixtures(torch_version="2.4.1", pyg_version="2.4.0")
    for f in findings:
        first = first_sentence(f.message)
        assert len(first) <= 200, (f.code, first)
        assert f.message.endswith("."), (f.code, f.message)
        # the suggestion is not in the first sentence (it follows it)
        assert len(first) < len(f.message), (f.code, f.message)


def test_first_sentence_splitter():
    assert first_sentence("`x.item()` syncs. Keep it on the device.") == "`x.item()` syncs."
    assert first_sentence("call `a. b` here, e.g. now. Then.") == "call `a. b` here, e.g. now."
    assert first_sentence("no end") == "no end"


# -- the loop's role (asked of the context, not read from names) -----------------------
def test_loop_role_is_the_loops_own():
    src = """
import torch
model = torch.compile(Net())
def train_epoch(train_loader):
    for data in train_loader:          # named "train", but only evaluates
        out = model(data.x)
        acc = int((out.argmax(-1) == data.y).sum())
def evaluate(loader):
    for data in loader:                # named "evaluate", but trains
        loss = model(data.x).sum()
        loss.backward()
        optimizer.step()
        total = float(loss)
"""
    found = {f.line: f.message for f in _lint(src, {"GNN013"})}
    assert "an evaluation loop" in found[7] and "training" not in found[7]
    assert "a training loop" in found[13]


def test_a_wrapped_loader_is_a_batch_loop_whatever_its_progress_bar_says():
    # physicsnemo's GLOBE: the per-sample loop's tqdm description names the
    # epoch; it is not a full-batch epoch loop (judged false on real code)
    src = """
import torch
@torch.compile(dynamic=True, disable=not use_compile)
def run_batch(sample):
    return model(sample)
def run_epoch(split, epoch):
    for sample in tqdm(prefetch_map(dataloaders[split], prep), desc=f"{epoch:d} {split}"):
        loss = run_batch(sample)
        loss.backward()
        optimizer.step()
        print(loss.item())
for epoch in range(3):
    loss = run_batch(data)
    loss.backward()
    optimizer.step()
    print(loss.item())
"""
    found = {f.line: f.message for f in _lint(src, {"GNN013"})}
    assert "every batch of a training loop" in found[11] and "epoch" not in first_sentence(found[11])
    assert "one step per epoch" in found[16]


# -- the call that copies ------------------------------------------------------------
def test_the_copy_is_the_cpu_call():
    src = """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        a = x.cpu().numpy()
        b = x.detach().cpu().tolist()
        c = x.numpy()
        return x
model = torch.compile(Net())
"""
    found = {f.line: f.message for f in _lint(src, {"GNN001"})}
    assert found[5].startswith("`.cpu()`") and ".numpy()" not in found[5]
    assert found[6].startswith("`.cpu()`")
    assert found[7].startswith("`.numpy()`")


# -- sparse values: what they are ------------------------------------------------------
def test_a_dict_of_sparse_tensors_is_not_a_sparse_tensor():
    src = """
import torch
import torch_geometric.transforms as T
dataset = OGB_MAG(root, transform=T.Compose([T.ToUndirected(), T.ToSparseTensor()]))
def train(model, loader):
    for batch in loader:
        out = model(batch.x_dict, batch.adj_t_dict)
model = torch.compile(HGT(16, 32, 7), dynamic=True)
train(model, NeighborLoader(dataset[0], num_neighbors=[10]))
"""
    [f] = _lint(src, {"GNN005"})
    assert f.line == 4
    assert "`adj_t_dict`, a dict of sparse adjacencies," in f.message
    assert "Sparse adjacency `batch.adj_t_dict`" not in f.message


def test_torch_sparse_ops_versus_sparse_layouts():
    src = """
import torch
from torch_sparse import SparseTensor
from torch_geometric.utils import to_torch_csr_tensor
model = torch.compile(GCN())
adj = SparseTensor(row=row, col=col)
model(x, adj)
csr = to_torch_csr_tensor(edge_index)
model(x, csr)
"""
    found = {f.line: f.message for f in _lint(src, {"GNN005"})}
    assert "torch_sparse's custom ops" in found[6] and "sparse layout" not in found[6]
    assert "sparse layout" in found[8] and "torch_sparse" not in found[8]


def test_to_sparse_tensor_with_a_layout_makes_a_torch_sparse_tensor():
    src = """
import torch
import torch_geometric.transforms as T
dataset = Planetoid("/tmp", "Cora", transform=T.ToSparseTensor(layout=torch.sparse_csr))
model = torch.compile(GCN())
data = dataset[0]
model(data.x, data.adj_t)
"""
    [f] = _lint(src, {"GNN005"})
    assert "sparse layout" in f.message and "custom ops" not in f.message
    assert f.message.startswith("`T.ToSparseTensor(layout=")  # named as in the code


# -- names as in the code; the suggestion agrees with the fix ----------------------------
def test_discarded_compile_suggestion_is_the_fixs_assignment():
    src = "import torch\nmodel = Net()\ntorch.compile(model, dynamic=True)\n"
    [f] = _lint(src, {"GNN010"})
    assignment = "model = torch.compile(model, dynamic=True)"
    assert f"`{assignment}`" in f.message and f.fix is not None and assignment in f.fix.message


def test_host_call_named_as_imported():
    src = """
import torch
from time import perf_counter
class Net(torch.nn.Module):
    def forward(self, x):
        t = perf_counter()
        return x
model = torch.compile(Net())
"""
    [f] = _lint(src, {"GNN020"})
    assert f.message.startswith("`perf_counter()`")
    assert "torch.rand" not in f.message  # a timer is not a random draw


def test_dynamo_config_named_as_spelled():
    src = "import torch._dynamo.config as dcfg\ndcfg.cache_size_limit = 64\n"
    [f] = _lint(src, {"GNN011"})
    assert "`dcfg.cache_size_limit`" in f.message


_PLAIN_COUNTER = """
import torch

class Normalizer:
    def __init__(self):
        self.num_rec = 0

    def record(self, x):
        self.num_rec += 1
        return x / self.num_rec

class Counted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.norm = Normalizer()

    def forward(self, x):
        self.calls += 1
        return self.norm.record(x)

model = torch.compile(Counted())
"""


def test_gnn015_offers_module_remedies_only_to_modules():
    """A plain object's int counter recompiles like a module's (e30), but neither a registered buffer
    nor allow_unspec_int_on_nn_module applies to it."""
    found = {f.line: f.message for f in _lint(_PLAIN_COUNTER, {"GNN015"})}
    assert sorted(found) == [9, 19], found
    assert "allow_unspec_int_on_nn_module" not in found[9] and "0-d tensor" in found[9]
    assert "`Normalizer` objects" in found[9]
    assert "allow_unspec_int_on_nn_module" in found[19]


def test_gnn010_compiled_again_says_delete_not_assign():
    src = ("import torch\ndef run(model, loader):\n    torch.compile(model)\n"
           "    infer = torch.compile(model, mode='reduce-overhead')\n    return infer\n")
    (found,) = _lint(src, {"GNN010"})
    assert found.line == 3 and found.fix is None
    assert "compiled again below" in found.message and "Assign it" not in found.message
