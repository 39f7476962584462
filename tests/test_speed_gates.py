"""The exact cheap gates of s10speed answer what the ungated questions answer.

- ``names.calls_compile_api``: a compile-API call anywhere in the file, also
  one whose result is dropped or disabled, and one resolved through an import
  written after the call (the collector's own ``compile_calls`` miss those).
- ``batch_loops._may_hold_compiled``: a file it turns away holds no compiled
  model (``model_holder`` answers None for every class).
- ``narrowing._checked_names``: a name no ``isinstance``/``torch.is_tensor``
  call tests is never narrowed; a tested one still is.
- the node-type tests by ``type(x) is C`` assume libcst's node classes are
  leaves (no subclasses): checked here, so a libcst that adds one fails a test,
  not a finding.
"""
from __future__ import annotations

import os

import libcst as cst

from gnnlint.semantic import batch_loops
from gnnlint.semantic.kinds import _SCALAR_NODES
from gnnlint.semantic.bindings import _BLOCK_TYPES, _SCOPE_TYPES
from gnnlint.semantic.names import _ASSIGNING
from gnnlint.semantic.hot_loops import _BARRIERS
from tests.file_contexts import context_of


def _ungated_holds(ctx) -> bool:
    return any(batch_loops.model_holder(ctx, cls) is not None for cls in list(ctx.class_info.values()))


def test_libcst_node_classes_used_by_type_are_leaves():
    used = set(_SCALAR_NODES) | set(_ASSIGNING) | set(_BLOCK_TYPES) | set(_SCOPE_TYPES) | set(_BARRIERS) | {
        cst.Call, cst.Name, cst.Attribute, cst.FunctionDef, cst.ClassDef}
    assert [c.__name__ for c in used if c.__subclasses__()] == []


def test_calls_compile_api_sees_disabled_dropped_and_late_aliased_calls():
    assert context_of("""
        import torch
        class T:
            def __init__(self, m):
                self.model = torch.compile(m, disable=True)
    """).calls_compile_api()
    assert context_of("""
        import torch
        def f(m):
            torch.compile(m)
    """).calls_compile_api()
    late = context_of("""
        def f(m):
            return tc(m)
        from torch import compile as tc
    """)
    assert late.calls_compile_api() and not late.compile_calls  # the collector resolved `tc` before its import
    assert context_of("""
        import torch
        @torch.compile(mode="max-autotune")
        def f(x):
            return x
    """).calls_compile_api()
    assert not context_of("""
        import re
        pattern = re.compile("x")
        def f(model):
            return model.compile
    """).calls_compile_api()


def test_holder_gate_agrees_with_the_ungated_answer():
    held = """
        import torch
        class Trainer:
            def __init__(self, net):
                self.model = torch.compile(net, disable=True)
            def step(self, batch):
                return self.model(batch)
    """
    ctx = context_of(held)
    assert batch_loops._may_hold_compiled(ctx) and _ungated_holds(ctx)
    plain = """
        class Trainer:
            def __init__(self, net):
                self.model = net
            def step(self, batch):
                return self.model(batch)
    """
    ctx = context_of(plain)
    assert not batch_loops._may_hold_compiled(ctx) and not _ungated_holds(ctx)
    assert not batch_loops._holds_compiled_model(ctx)


def test_narrowing_gate_keeps_narrowed_names():
    ctx = context_of("""
        import torch
        def f(repeats, other):
            if isinstance(repeats, torch.Tensor):
                return repeats.sum()
            return other
    """)
    use = next(n for n in ctx.preorder if isinstance(n, cst.Name) and n.value == "repeats"
               and isinstance(ctx.parent.get(n), cst.Attribute))
    assert ctx.tensor_narrowing("repeats", use) is True
    assert ctx.tensor_narrowing("other", use) is None
    assert "other" not in ctx._checked_names()


def test_a_value_fact_does_not_parse_a_file_without_regions_or_rule_tokens(tmp_path):
    """``returned_tensors``: every file importing ``scatter_count`` is told it returns a tensor. The
    compiled model's file uses that (GNN004); a library file that imports it and compiles nothing, runs
    no loop and holds no rule's tokens cannot use it, and is not parsed for it (PyG: 58 such files)."""
    from tests.project_files import finding_lines, run, write_project

    utils = """\
        import torch as th


        def scatter_count(index: th.Tensor, dim_size: int) -> th.Tensor:
            out = th.zeros(dim_size, dtype=th.long, device=index.device)
            return out.scatter_add_(0, index, th.ones_like(index))
    """
    model = """\
        import torch
        from demo.utils import scatter_count


        class Net(torch.nn.Module):
            def forward(self, x, index, n: int):
                return torch.repeat_interleave(x, scatter_count(index, n), dim=0)


        model = torch.compile(Net(), dynamic=True)
    """
    library = """\
        from demo.utils import scatter_count


        def degree(index, n):
            return scatter_count(index, n)
    """
    root = write_project(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "demo/__init__.py": "",
                                    "demo/utils.py": utils, "demo/model.py": model, "demo/library.py": library})
    out = run(["check", ".", "--no-cache", "--verbose", "--output-format", "concise"], root).output
    assert {line.split(":")[0] + ":" + line.split(":")[1] for line in finding_lines(out)
            if "GNN004" in line} == {"demo/model.py:7"}, out
    checked = [line for line in out.splitlines() if "files checked" in line]
    # utils.py exports the fact, model.py compiles; __init__.py and library.py are not parsed
    assert checked and " 2 parsed" in checked[0], checked


_VALUE_FACT_PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n", "demo/__init__.py": "",
    "demo/utils.py": """\
        import torch as th


        def scatter_count(index: th.Tensor, dim_size: int) -> th.Tensor:
            out = th.zeros(dim_size, dtype=th.long, device=index.device)
            return out.scatter_add_(0, index, th.ones_like(index))


        def spread(x: th.Tensor, index: th.Tensor) -> th.Tensor:  # GNN004's tokens: parsed, and tells
            return x.repeat_interleave(scatter_count(index, x.size(0)), dim=0, output_size=index.numel())
    """,
    # GNN004's tokens and no region: parsed in the first pass, linted again when told that
    # `scatter_count` returns a tensor
    "demo/ops.py": """\
        import torch
        from demo.utils import scatter_count


        def expand(x, index, n: int):
            return torch.repeat_interleave(x, scatter_count(index, n), dim=0)
    """,
}


def test_a_file_linted_again_for_facts_is_parsed_once_and_runs_only_its_rules(tmp_path, monkeypatch):
    """A file parsed in the first pass and linted again with value facts reuses its parsed module
    (gnnlint/kept_modules.py), and with no region in its bytes runs only the rules whose tokens it
    holds (as ``gnnlint fix`` lints it): PyG's edge_index.py, sparse.py, collate.py."""
    from gnnlint import engine, parsing
    from tests.project_files import finding_lines, run, write_project

    root = write_project(tmp_path, _VALUE_FACT_PROJECT)
    parses, lints = [], []
    parse, lint = parsing.parse_module, engine.lint_bytes

    def counting_parse(data):
        parses.append(data)
        return parse(data)

    def recording_lint(path, data, options, facts=None, rules=None):
        lints.append((os.path.basename(path), facts is not None and not facts.is_empty(),
                      None if rules is None else sorted(r.code for r in rules)))
        return lint(path, data, options, facts, rules)

    monkeypatch.setattr(parsing, "parse_module", counting_parse)
    monkeypatch.setattr(engine, "lint_bytes", recording_lint)
    out = run(["check", ".", "--no-cache", "-j", "1", "--output-format", "concise"], root).output
    assert [line.split(":")[0] for line in finding_lines(out)] == ["demo/ops.py"], out  # the fact is used
    assert [entry for entry in lints if entry[0] == "ops.py"] == [("ops.py", False, ["GNN004"]),
                                                                   ("ops.py", True, ["GNN004"])]
    assert len(parses) == len({name for name, _, _ in lints}) == 2  # utils.py and ops.py, once each


def test_with_workers_a_file_linted_again_goes_to_the_worker_that_parsed_it(tmp_path, monkeypatch):
    """With two worker processes, the file linted again for facts is sent to the worker that
    parsed it in the first pass, which still holds its module (gnnlint/workers.Pool): parsed once,
    as with one process. Ten more parsed files make the first pass use the pool."""
    from gnnlint import parsing
    from tests.project_files import finding_lines, run, write_project

    files = dict(_VALUE_FACT_PROJECT)
    for k in range(10):
        files[f"demo/step{k}.py"] = "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"
    root = write_project(tmp_path, files)
    log = tmp_path / "parses.log"  # parses happen in the workers: they append here
    parse = parsing.parse_module

    def counting_parse(data):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {len(data)}\n")
        return parse(data)

    monkeypatch.setattr(parsing, "parse_module", counting_parse)
    out = run(["check", ".", "--no-cache", "-j", "2", "--output-format", "concise"], root).output
    assert "demo/ops.py" in [line.split(":")[0] for line in finding_lines(out)], out  # the fact is used
    ops = len((root / "demo/ops.py").read_bytes())
    entries = log.read_text().split()
    assert entries[1::2].count(str(ops)) == 1, entries  # ops.py: parsed once, though linted twice
    assert len(set(entries[0::2])) == 2 and str(os.getpid()) not in entries[0::2]  # in the two workers


def test_kept_modules_are_only_the_relinted_files_and_fit_the_budget(monkeypatch):
    from gnnlint import kept_modules

    monkeypatch.setattr(kept_modules, "KEEP_SOURCE_BYTES", 10)
    with kept_modules.keeping():
        kept_modules.keep("a.py", b"aaaa", b"aaaa", "module a")
        kept_modules.keep("b.py", b"bbbbbbb", b"bbbbbbb", "module b")  # over the budget: not kept
        assert kept_modules.take("b.py", b"bbbbbbb") is None
        assert kept_modules.take("a.py", b"aaab") is None  # other bytes: parsed again
        assert kept_modules.take("a.py", b"aaaa") == (b"aaaa", "module a")
        kept_modules.retain({"b.py"})
        assert kept_modules.take("a.py", b"aaaa") is None
        kept_modules.keep("b.py", b"bbbbbbb", b"bbbbbbb", "module b")  # room again
        assert kept_modules.take("b.py", b"bbbbbbb") == (b"bbbbbbb", "module b")
    kept_modules.keep("c.py", b"c", b"c", "module c")  # outside a check: nothing is kept
    assert kept_modules.take("c.py", b"c") is None


def _parsed_count(root) -> int:
    from tests.project_files import run

    out = run(["check", ".", "--no-cache", "--verbose", "-j", "1"], root).output
    checked = [line for line in out.splitlines() if "files checked" in line]
    assert checked, out
    return int(checked[0].split(" parsed")[0].rsplit(",", 1)[1])


def test_collate_and_wrapper_exports_need_a_top_level_function_and_a_wrapper_call(tmp_path):
    """``graph_collates`` / ``returned_args`` are told about top-level functions only: a file whose
    ``Batch.from_data_list`` or ``DataParallel(...)`` sits in methods, or names a wrapper without
    calling it (a subclass, a docstring, ``DDPStrategy``), tells nobody, and is not parsed for it (PyG's
    batch.py, dataloader.py, data_parallel.py, lightning/datamodule.py). Top-level functions under
    ``if``/``try`` and wrappers called through an attribute or after a line break still are."""
    from tests.project_files import write_project

    quiet = {
        "pyproject.toml": "[project]\nname = 'demo'\n", "demo/__init__.py": "",
        "demo/batching.py": """\
            from torch_geometric.data import Batch


            class Collater:
                def __call__(self, items):
                    return Batch.from_data_list(items)
        """,
        "demo/parallel.py": '''\
            import torch


            class DataParallel(torch.nn.DataParallel):
                """Like :class:`torch.nn.DataParallel`; use `DDPStrategy` under Lightning."""

                def scatter(self, model):
                    return model
        ''',
    }
    assert _parsed_count(write_project(tmp_path / "quiet", quiet)) == 0
    telling = {
        "pyproject.toml": "[project]\nname = 'demo'\n", "demo/__init__.py": "",
        "demo/batching.py": """\
            from torch_geometric.data import Batch

            try:
                import dgl
            except ImportError:
                def collate_graphs(items):
                    return Batch.from_data_list(items)
        """,
        "demo/parallel.py": """\
            import torch


            def wrap(model):
                return torch.nn.parallel.DistributedDataParallel(  # one process per device
                    model)
        """,
    }
    assert _parsed_count(write_project(tmp_path / "telling", telling)) == 2


def test_a_worker_process_keeps_no_module():
    """Workers are forked inside ``keeping()``: they would hold modules nobody takes back."""
    import multiprocessing

    from gnnlint import kept_modules

    def child(queue):
        kept_modules.keep("w.py", b"w", b"w", "module w")
        queue.put(kept_modules.take("w.py", b"w") is None)

    if not hasattr(os, "fork"):
        return
    context = multiprocessing.get_context("fork")
    with kept_modules.keeping():
        queue = context.Queue()
        process = context.Process(target=child, args=(queue,))
        process.start()
        assert queue.get(timeout=60) is True
        process.join(60)


_PULLED_PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\n\n[tool.gnnlint]\n",
    "helpers.py": """\
        import torch


        def fit(model):
            return torch.compile(model)
    """,
    "models.py": """\
        import torch


        class GCN(torch.nn.Module):
            def forward(self, x):
                if x.sum().item() > 0:
                    x = x * 2
                return x
    """,
    "train.py": """\
        import torch
        from helpers import fit
        from models import GCN

        model = fit(GCN())
        for step in range(10):
            model(torch.randn(4))
    """,
}


def test_a_warm_run_scans_no_import_line_again_and_an_edit_reaches_the_importers(tmp_path, monkeypatch):
    """The fact joins' import words (``fact_joins._import_words``: which files import ``fit``) are
    kept with the cache, keyed on each file's content digest: a warm run with nothing changed scans
    no file's import lines, an edited file's are scanned again and its importers' findings follow."""
    from gnnlint import fact_joins
    from tests.project_files import finding_lines, run, write_project

    root = write_project(tmp_path, _PULLED_PROJECT)
    scanned: list = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def findall(self, data):
            scanned.append(data)
            return self.pattern.findall(data)

    monkeypatch.setattr(fact_joins, "_IMPORT_SPANS", tuple(Counting(p) for p in fact_joins._IMPORT_SPANS))

    def check() -> set:
        fact_joins._import_words_memo.clear()  # the in-process memo: as a new process starts
        scanned.clear()
        return {line.split(" ")[0] + line.split(" ")[1] for line in
                finding_lines(run(["check", ".", "--output-format", "concise"], root).output)}

    assert check() == {"models.py:6:12:GNN001"} and scanned  # cold: train.py pulls fit's compile
    assert check() == {"models.py:6:12:GNN001"} and scanned == []  # warm: no file scanned again
    train = root / "train.py"
    train.write_text(train.read_text().replace("from helpers import fit\n", "").replace("fit(GCN())", "GCN()"))
    assert check() == set()  # the importer's words changed: nothing is compiled any more
    assert len({data for data in scanned}) == 1  # only the edited file was scanned
    # VARIANT: another file starts importing `fit`, in a parenthesised import over two lines
    (root / "run_all.py").write_text("import torch\nfrom helpers import (\n    fit,\n)\nfrom models import GCN\n\n"
                                     "net = fit(GCN())\nfor i in range(3):\n    net(torch.randn(4))\n")
    assert check() == {"models.py:6:12:GNN001"}
    assert check() == {"models.py:6:12:GNN001"} and scanned == []


def test_the_line_start_scans_agree_with_the_multiline_patterns():
    """``ipython_lines._has_magic_line`` and the newline-first patterns of ``facts`` (``from_imports``,
    ``sweep_modules``) answer what the ``^``-anchored ``re.M`` patterns they replace answer
    (checked on all 21,244 files of the corpora when they were written; here on random bytes)."""
    import random
    import re

    from gnnlint import facts
    from gnnlint.ipython_lines import _SCRIPT_MAGIC, _has_magic_line

    from_re = re.compile(rb"^[ \t]*from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]*"
                         rb"(?P<names>\([^)]*\)|[^\n]*)", re.M)
    for_re = re.compile(rb"^[ \t]*for[ \t]+([\w, \t()]+?)[ \t]+in\b", re.M)
    rng = random.Random(14)
    alphabet = [b" ", b"\t", b"\n", b"\r", b"!", b"%", b"a", b"=", b"from ", b"import ", b"(", b")", b"x",
                b"for ", b"in ", b"f(x)\n", b"from m import f\n"]
    for _ in range(30000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert _has_magic_line(data) == (_SCRIPT_MAGIC.search(data) is not None), data
        assert [m.group("dots", "module", "names") for m in from_re.finditer(data)] == \
            [m.group("dots", "module", "names") for m in facts._FROM_IMPORT_RE.finditer(b"\n" + data)], data
        assert [(m.group(1), m.end()) for m in for_re.finditer(data)] == \
            [(m.group(1), m.end() - 1) for m in facts._FOR_RE.finditer(b"\n" + data)], data


def test_the_literal_first_patterns_agree_with_the_word_boundary_ones():
    """``facts._LOOP_HEADER_RE`` and ``fact_joins._IMPORT_SPANS`` start with their literal
    (``for(?<!\\wfor)`` for ``\\bfor``): the same matches as the ``\\b``-first patterns they replace."""
    import random
    import re

    from gnnlint import fact_joins, facts

    loop_re = re.compile(rb"\bfor\s[^:\n]{0,120}?\bin\s+(?:t?range|tqdm)\("
                         rb"|\bfor\s[^:\n]{0,120}?\bin\b[^:]{0,200}?(?:loader|Loader|batches)"
                         rb"|\bfor\s+(?:\w+\s*,\s*)?\(?(?:batch|data|graph)\w*\s+in\b")
    spans = (re.compile(rb"\bimport\b[^\n]*"), re.compile(rb"\bimport\s*\([^)]*"))
    rng = random.Random(14)
    alphabet = [b" ", b"\t", b"\n", b"for", b"for ", b"xfor ", b"_for ", b"in ", b"range(", b"tqdm(", b"loader",
                b"batch", b"data", b"graph", b"a, ", b"(", b")", b":", b"x", b"in", b"import", b"ximport",
                b"import_", b" import "]
    for _ in range(30000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert [m.span() for m in loop_re.finditer(data)] == \
            [m.span() for m in facts._LOOP_HEADER_RE.finditer(data)], data
        for old, new in zip(spans, fact_joins._IMPORT_SPANS):
            assert old.findall(data) == new.findall(data), data
