"""What a correct gnnlint reports for each program in ``fixtures/``, and what
torch actually does with it at runtime.

``EXPECTED`` maps a fixture file name (relative to ``fixtures/``) to the
``(code, line)`` findings of ``gnnlint check`` with the default configuration
and the installed target versions, torch 2.13 + torch_geometric 2.8.1. It
follows the labelling policy of the shared labelled cases (a finding matches
when its code agrees and the expected line lies within its reported span):

- GNN001/004/008/009: the line of the call or subscript;
- GNN002: the optimizer constructor; GNN003: the ModuleDict subscript;
- GNN005: the expression that creates the sparse adjacency;
- GNN006/007/010/012: the ``torch.compile`` call; GNN011: the assignment;
- GNN014: the layer's constructor (a utility: its call); GNN016: the attribute;
- GNN017: the hook registration; GNN018: the ``state_dict()`` call;
  GNN019/GNN020: the call; GNN015: the mutation, the append, the dropout call
  or (a model compiled per configuration) the ``torch.compile`` call.

Anything else reported on a fixture is a false positive; every ``*_clean.py``
twin maps to ``[]``. Version-gated rules: GNN003 only runs for target torch
< 2.5, so ``tuple_moduledict_key_hazard.py`` is ``[]`` here and its findings
are in ``EXPECTED_EXTRA_BY_TARGET`` (add them to ``EXPECTED`` when checking
with ``--torch-version 2.4``; nothing else changes at 2.4, GNN002 is >= 2.3).

``RUNTIME`` records what torch 2.13.0+cpu / PyG 2.8.1 did with each fixture
up to ``recompile_storm`` (the four pairs added after it -- ``max_autotune``,
``range_chunks``, ``lightning_graph_steps``, ``held_compile_sync`` -- have no
record here; ``tests/test_verify.py`` gives their runtime verdicts, and the
Lightning pair, which needs ``lightning``, has none), measured with
``TORCH_LOGS=graph_breaks,recompiles``:

- ``example``: ``gnnlint_example()``; the model compiled with
  ``torch.compile(model, backend="eager")`` (``dynamic=None``), every input
  run twice in order; when a training dict is given, after each forward
  ``optimizer.zero_grad(); loss_fn(out, inputs).backward()``, the step
  ``torch.compile(optimizer.step, backend="eager")`` and ``scheduler.step()``.
  Inputs are deterministic (``gnnlint_example`` seeds torch).
- ``example_dynamic_true``: the same with ``dynamic=True``.
- ``main``: ``python fixtures/X.py`` with
  ``TORCH_COMPILE_OVERRIDE_BACKENDS=">=0:eager"`` (the file's own compile
  options, eager backend).
- ``eager_syncs``: ``aten`` host-sync / data-dependent ops seen by a
  ``TorchDispatchMode`` with ``TORCH_COMPILE_DISABLE=1`` (uncompiled model),
  keyed by the innermost line of the fixture on the Python stack, over the
  three example inputs (``example``) or the whole ``main()``. ``.tolist()``,
  boolean-mask indexing and CPU ``repeat_interleave`` do not dispatch
  ``_local_scalar_dense``, so they do not appear there.

Breaks are ``(line, reason)`` with the user frame in the fixture; breaks and
recompiles inside torch / PyG are given as ``"path:line"`` strings relative to
site-packages. Every run under ``dynamic=None`` includes one recompile of the
top-level ``forward`` on the second input size ("size mismatch at index 0",
automatic dynamic shapes) -- the clean twins show exactly that and nothing
else (``BASELINE``), so it is not a hazard event.
"""
from __future__ import annotations

EXPECTED: dict[str, list[tuple[str, int]]] = {
    "item_in_forward_hazard.py": [("GNN001", 30), ("GNN001", 32), ("GNN001", 33)],
    "item_in_forward_clean.py": [],
    "train_loop_sync_hazard.py": [("GNN013", 49), ("GNN013", 50), ("GNN013", 51),
                                  ("GNN013", 62)],
    "train_loop_sync_clean.py": [],
    "compile_discarded_hazard.py": [("GNN010", 42), ("GNN010", 43)],
    "compile_discarded_clean.py": [],
    "float_lr_compiled_step_hazard.py": [("GNN002", 30)],
    "float_lr_compiled_step_clean.py": [],
    "tuple_moduledict_key_hazard.py": [],  # GNN003 is gated to torch < 2.5: see below
    "tuple_moduledict_key_clean.py": [],
    "repeat_interleave_hazard.py": [("GNN004", 20), ("GNN004", 41)],
    "repeat_interleave_clean.py": [],
    # GNN014: the default GCNConv normalisation is what crashes on the CSR path
    # (measured: GCNConv(normalize=False) compiles on the CSR adjacency, the
    # default and add_self_loops=False raise IndexError)
    "sparse_adj_hazard.py": [("GNN005", 20), ("GNN014", 26), ("GNN014", 27)],
    "sparse_adj_clean.py": [],
    "loader_not_dynamic_hazard.py": [("GNN007", 58)],
    "loader_not_dynamic_clean.py": [],
    "reduce_overhead_hazard.py": [("GNN006", 59), ("GNN007", 59)],
    "reduce_overhead_clean.py": [],
    "data_dependent_shape_hazard.py": [("GNN008", 33), ("GNN008", 34), ("GNN008", 35),
                                       ("GNN009", 37)],
    "data_dependent_shape_clean.py": [],
    "lazy_module_hazard.py": [("GNN012", 49)],
    "lazy_module_clean.py": [],
    "hidden_errors_hazard.py": [("GNN011", 19), ("GNN011", 20)],
    "hidden_errors_clean.py": [],
    "layer_graph_break_hazard.py": [("GNN014", 25), ("GNN014", 26), ("GNN014", 30)],
    "layer_graph_break_clean.py": [],
    "data_size_hazard.py": [("GNN016", 30)],
    "data_size_clean.py": [],
    "compiled_checkpoint_hazard.py": [("GNN018", 58), ("GNN017", 61)],
    "compiled_checkpoint_clean.py": [],
    "compiled_train_step_hazard.py": [("GNN020", 34), ("GNN020", 36), ("GNN019", 52), ("GNN019", 54),
                                      ("GNN019", 55)],
    "compiled_train_step_clean.py": [],
    "recompile_storm_hazard.py": [("GNN015", 42), ("GNN015", 65), ("GNN015", 71), ("GNN015", 101),
                                  ("GNN015", 115)],
    "recompile_storm_clean.py": [],
    # CUDA graphs through `mode="max-autotune"` (it sets `triton.cudagraphs`: e21)
    "max_autotune_hazard.py": [("GNN006", 49)],
    "max_autotune_clean.py": [],
    # the slices of a chunked `range` loop: a shorter last chunk (semantic/chunks.py)
    "range_chunks_hazard.py": [("GNN007", 65)],
    "range_chunks_clean.py": [],
    # `trainer.fit` of a compiled LightningModule whose steps take PyG `Batch`es (semantic/lightning_feeds.py)
    "lightning_graph_steps_hazard.py": [("GNN007", 78)],
    "lightning_graph_steps_clean.py": [],
    # per-step syncs of a loop running a held object's compile (semantic/holders.py)
    "held_compile_sync_hazard.py": [("GNN013", 60), ("GNN013", 62)],
    "held_compile_sync_clean.py": [],
}

# Findings added to EXPECTED for other target versions (``--torch-version``).
EXPECTED_EXTRA_BY_TARGET: dict[str, dict[str, list[tuple[str, int]]]] = {
    "torch<2.5": {
        # loop-variable edge-type key, literal tuple key
        "tuple_moduledict_key_hazard.py": [("GNN003", 33), ("GNN003", 35)],
    },
}

# What every clean twin does under the ``example`` protocol (dynamic=None).
BASELINE: dict = {
    "graph_breaks": [],
    "recompiles": [("forward", "tensor size mismatch at index 0 (automatic dynamic shapes)")],
    "note": "float_lr_compiled_step_clean.py also shows the "
            "optimizer-step breaks listed under float_lr_compiled_step_hazard.py "
            "(torch-internal, caused by compiling optimizer.step after an LR scheduler "
            "wrapped it); lazy_module_clean.py's forward is to_hetero's '<eval_with_key>'.",
}

RUNTIME: dict[str, dict] = {
    "item_in_forward_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [
            (30, "Unsupported Tensor.item() call with capture_scalar_outputs=False"),
            (32, "Unsupported Tensor.item() call with capture_scalar_outputs=False "
                 "(float() of a tensor)"),
            (33, "Data dependent operator: aten._local_scalar_dense.default (Tensor.tolist)"),
        ],
        "recompiles": [
            (30, "resume_in_forward_at_30: guard `___stack0 == 6.0` -- the .item() value "
                 "max_deg is specialised (dynamic=None only)"),
            (33, "resume_in_forward_at_33: guard `len(___stack0) == 3` -- the .tolist() list "
                 "length (number of graphs) is specialised; with dynamic=True it recompiles "
                 "for every new number of graphs (2 recompiles for 2/3/5 graphs)"),
        ],
        "example": "3 breaks, 10 graphs (dynamic=None); 3 breaks, 2 recompiles, 6 graphs "
                   "(dynamic=True); clean twin: 0 breaks, 2 graphs",
        "eager_syncs": {"example": {30: "_local_scalar_dense x3", 32: "_local_scalar_dense x3"}},
        "main": "3 graph breaks (lines 30, 32, 33), no recompiles (every batch has 32 graphs)",
    },
    "train_loop_sync_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [],
        "example": "gnnlint_example's run() drives train()/test() over a DataLoader of 40 "
                   "graphs (5 batches): a host sync per batch at 49/50/51/62 ('confirmed'). "
                   "Not reported (host-side library code): DataLoader collation at 43/60 and "
                   "Adam's CPU step counters at 48; the once-per-epoch reads at 53/63 of the "
                   "clean twin (fewer than half as many as model calls); the grad-mode "
                   "recompile when test() runs under no_grad",
        "eager_syncs": {
            "main": {49: "_local_scalar_dense x6 (once per train batch: 3 batches x 2 epochs)",
                     50: "_local_scalar_dense x6", 51: "_local_scalar_dense x6",
                     62: "_local_scalar_dense x4 (once per eval batch: 2 x 2)"},
            "main_clean_twin": {53: "_local_scalar_dense x4 (twice per epoch, after the loop)",
                                63: "_local_scalar_dense x2 (once per epoch)"},
            "both_twins_not_findings": {43: "x22 DataLoader collation", 48: "x84 Adam.step on "
                                        "CPU (step count)", 60: "x14 DataLoader collation"},
        },
        "main": "1 recompile (GLOBAL_STATE grad_mode: test() under no_grad), same as the twin",
    },
    "compile_discarded_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [],
        "example": "build_model() returns a LinkPredictor whose encoder is a plain GraphSAGE "
                   "and whose decoder has no compiled call: calling it directly captures 0 "
                   "frames (torch._dynamo counters stay empty); the clean twin's model "
                   "captures 91 calls in 2 graphs. Under the verify protocol (model compiled "
                   "from outside) both twins look the same: baseline only",
        "main": "0 breaks, 0 recompiles, nothing compiled (the clean twin compiles encoder "
                "and decoder)",
        "warnings": "torch_geometric.compile emits \"'torch_geometric.compile' is deprecated "
                    "in favor of 'torch.compile'\" at line 43",
    },
    "float_lr_compiled_step_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "library_graph_breaks": [
            ("torch/_dynamo/external_utils.py:69", "Attempted to call function marked as "
             "skipped: Adam.step wrapped by the LR scheduler (lr_scheduler.py) -- also in "
             "the clean twin"),
            ("torch/optim/optimizer.py:79", "Call to torch._dynamo.graph_break() -- also in "
             "the clean twin"),
        ],
        "recompiles": [
            ("torch/optim/adam.py:214", "Adam.step: guard `self.param_groups[0]['lr'] == 0.01` "
             "failed after the first StepLR change; exactly one recompile with the default "
             "dynamic=None (the lr then becomes a dynamic float). The lr object comes from "
             "the optimizer constructed at line 30"),
        ],
        "example": "1 lr recompile of Adam.step (6 scheduler steps, StepLR step_size=2); the "
                   "clean twin (lr=torch.tensor) has none",
        "step_dynamic_false": "torch.compile(optimizer.step, dynamic=False): one recompile "
                              "per lr change (3 in 8 steps: lr 0.01 -> 1e-3 -> 1e-4 -> 1e-5)",
        "main": "1 recompile of Adam.step (lr guard), 2 torch-internal breaks as above",
    },
    "tuple_moduledict_key_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [],
        "example": "baseline only: torch 2.13 + PyG 2.8.1 trace the tuple-key ModuleDict "
                   "lookups at lines 33 and 35 without a break (1 graph with dynamic=True); "
                   "the hazard exists for torch < 2.5 only",
        "main": "0 breaks, 0 recompiles",
    },
    "repeat_interleave_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [
            (41, "Dynamic shape operator: aten.repeat_interleave.Tensor's output shape "
                 "depends on input Tensor data"),
            (20, "same operator, inside broadcast_to_nodes() called from the layer loop "
                 "(forward line 44): 'graph break in loop' -> Dynamo skips the rest of forward "
                 "(resume_in_forward_at_41) and runs it eagerly; broadcast_to_nodes is then "
                 "compiled as its own frame and breaks at 20 again"),
        ],
        "recompiles": [(19, "broadcast_to_nodes: tensor 'counts' size mismatch (number of "
                            "graphs 2 -> 3)")],
        "example": "3 breaks, 6 graphs (dynamic=None); 3 breaks, 3 graphs (dynamic=True); "
                   "clean twin: 0 breaks",
        "eager_syncs": {"example": {20: "aten.repeat_interleave.Tensor x6",
                                    41: "aten.repeat_interleave.Tensor x3"}},
        "main": "3 graph breaks (41, 20, 20), no recompiles",
    },
    "sparse_adj_hazard.py": {
        "outcome": "crash",
        "crash": ("IndexError", "tuple index out of range", 31,
                  "raised from inside Dynamo while tracing PyG "
                  "torch_geometric/utils/loop.py:755 compute_loop_attr; user frame line 31 "
                  "(self.conv1(x, adj_t)); same with dynamic=True and in main()"),
        "graph_breaks": [(31, "Attempted to wrap sparse Tensor: torch.compile does not "
                              "support sparse Tensors")],
        "library_graph_breaks": [
            ("torch_geometric/nn/conv/gcn_conv.py:238", "Attempted to wrap sparse Tensor"),
            ("torch_geometric/nn/conv/gcn_conv.py:56", "Attempted to wrap sparse Tensor"),
            ("torch_geometric/utils/sparse.py:122", "Attempted to wrap sparse Tensor"),
            ("torch_geometric/utils/loop.py:446", "Attempted to wrap sparse Tensor"),
            ("torch_geometric/utils/sparse.py:412", "Attempted to wrap sparse Tensor"),
            ("torch_geometric/index.py:29", "Dynamic shape operator: "
             "aten.repeat_interleave.Tensor"),
        ],
        "recompiles": [],
        "note": "the finding is anchored at line 20 (to_torch_csr_tensor in "
                "sparse_adjacency()); the runtime events are at the first use, line 31",
        "main": "exits 1 with the same IndexError after the same breaks",
    },
    "loader_not_dynamic_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [(25, "forward: tensor 'x' size mismatch at index 0 (second batch "
                            "size); then automatic dynamic shapes")],
        "example": "indistinguishable from the clean twin under the example protocol "
                   "(the protocol's compile is dynamic=None either way); with dynamic=True "
                   "0 recompiles",
        "main": "3 recompiles of forward (line 25): (1) 'x' size mismatch on the second "
                "batch, (2) guard `num_graphs == 32` on the last, smaller batch (the "
                "int argument is specialised until it changes), (3) GLOBAL_STATE grad_mode "
                "(evaluate() under no_grad; the clean twin has only this one)",
    },
    "reduce_overhead_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [(26, "forward: tensor 'x' size mismatch at index 0 -- with the "
                            "file's dynamic=False one recompile per distinct batch size")],
        "example": "dynamic=None: baseline only; dynamic=False (the file's option): 2 "
                   "recompiles for the 3 input sizes (3 graphs); CPU run, so no CUDA graphs "
                   "are recorded and mode='reduce-overhead' is only visible on GPU",
        "main": "3 recompiles for the 4 inference batches (every batch a new size: "
                "398/546/547/435 nodes); never reaches recompile_limit=8 with 4 batches",
    },
    "data_dependent_shape_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [
            (33, "Dynamic shape operator: aten.nonzero.default"),
            (34, "Dynamic shape operator: aten.nonzero.default (boolean-mask subscript h[keep])"),
            (35, "Dynamic shape operator: aten._unique2.default"),
            (37, "Unsupported Tensor.item() call with capture_scalar_outputs=False -- break "
                 "inside PyG torch_geometric/utils/_scatter.py:48 (dim_size = "
                 "int(index.max()) + 1) reached from global_mean_pool(h, batch) at line 37"),
        ],
        "recompiles": [
            (33, "resume_in_forward_at_33: 'h' size mismatch (dynamic=None)"),
            (34, "resume_in_forward_at_34: 'idx' size mismatch (dynamic=None)"),
            (35, "resume_in_forward_at_35: 'h' size mismatch (dynamic=None)"),
            (37, "resume_in_forward_at_37: 'g_kept' size mismatch (dynamic=None)"),
        ],
        "example": "4 breaks, 14 graphs (dynamic=None); 4 breaks, 7 graphs (dynamic=True); "
                   "clean twin: 0 breaks, 2 graphs",
        "eager_syncs": {"example": {33: "aten.nonzero x3", 35: "aten._unique2 x3",
                                    37: "_local_scalar_dense x3 (inside PyG scatter)"}},
        "main": "4 graph breaks (33, 34, 35 and PyG _scatter.py:48 from 37), no recompiles",
    },
    "lazy_module_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "library_graph_breaks": [
            ("torch/nn/parameter.py:149", "__class__ assignment on user-defined object "
             "(UninitializedParameter.materialize)"),
            ("torch_geometric/nn/dense/linear.py:135", "Attempted to represent unregistered "
             "RemovableHandle (lazy-init hook)"),
        ],
        "recompiles": [("torch_geometric/nn/dense/linear.py:121/129/133, "
                        "torch_geometric/nn/conv/sage_conv.py:120/135/139",
                        "24 recompiles: guards on parameter type/shape/bias-is-None and "
                        "requires_grad while the lazy parameters materialise")],
        "example": "2 breaks, 25 recompiles (24 in PyG + the baseline), 29 graphs "
                   "(dynamic=None); 2 breaks, 19 recompiles, 25 graphs (dynamic=True); "
                   "clean twin: 0 breaks, 1 recompile, 2 graphs. User frames are in "
                   "to_hetero's generated '<eval_with_key>.1' module, never in the fixture: "
                   "the finding's line 49 gets no event at that line",
        "main": "2 breaks and 18 recompiles (clean twin: 0 and 0)",
    },
    "hidden_errors_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [],
        "example": "gnnlint_example() runs configure_compiler(): afterwards "
                   "torch._dynamo.config.suppress_errors is True and cache_size_limit == "
                   "recompile_limit == 64 (was False / 8) for the rest of the process. This "
                   "model has no compile error or recompile storm, so nothing is hidden in "
                   "this run: baseline only",
        "main": "1 recompile (GLOBAL_STATE grad_mode for the final eval), same as the twin",
    },
    "layer_graph_break_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [
            (30, "Dynamic shape operator: aten.nonzero.default (dropout_edge, "
                 "torch_geometric/utils/dropout.py:212)"),
            (33, "in the `for conv in self.convs` loop: GCNConv -> gcn_norm -> "
                 "add_remaining_self_loops (utils/loop.py:650), 'torch.compile detected a graph "
                 "break in a for/while loop. Skipping the frame and falling back to eager, as "
                 "graph breaks in loops are not supported.'"),
            (34, "GATConv -> remove_self_loops (utils/loop.py:113), nonzero"),
        ],
        "recompiles": [("GCNConv.forward, gcn_norm, add_remaining_self_loops and their resume "
                        "functions", "tensor 'edge_index' size mismatch at index 1 (each new "
                        "edge count after dropout)")],
        "example": "18 breaks, 19 recompiles, 23 graphs over 6 calls; the resume function "
                   "after line 30 (holding the layer loop) fails and is skipped, so the user "
                   "code after the edge dropout runs eagerly in every call; clean twin: 0 "
                   "breaks, 1 recompile (the baseline), 2 graphs",
    },
    "data_size_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [("GraphConv / global_add_pool frames", "size mismatch (dynamic=None)")],
        "example": "the user forward frame fails ('forward: Unsupported', dynamo's "
                   "'Failed to convert args/kwargs to proxy' on the num_nodes property) and "
                   "runs eagerly in all 6 calls; only the convs compile, as frames of their "
                   "own (6 graphs, 4 recompiles); clean twin: the forward compiles (2 graphs, "
                   "the baseline recompile)",
    },
    "compiled_checkpoint_hazard.py": {
        "outcome": "RuntimeError at the end of main(), by design: loading the checkpoint of "
                   "the compiled wrapper into a plain SAGE ('Missing key(s) ... \"conv1.lin_l.weight\"', "
                   "'Unexpected key(s) ... \"_orig_mod.conv1.lin_l.weight\"')",
        "graph_breaks": [],
        "recompiles": [],
        "main": "the hook registered at line 61 after training never runs: 'collected 0 "
                "embedding tensors' (the extraction call reuses the eval/no_grad graph compiled "
                "for validation); clean twin: checkpoint loads, 'collected 1 embedding tensors'",
    },
    "compiled_train_step_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [(34, "time.perf_counter: Attempted to call function marked as skipped"),
                         (36, "logging.Logger method not supported for non-export cases"),
                         (52, "Optimizer.zero_grad marked as skipped"),
                         (54, "Unsupported Tensor.backward() call"),
                         (55, "torch/optim/optimizer.py:79 torch._dynamo.graph_break()")],
        "recompiles": [],
        "main": "6 'Graph break in user code' log entries (TORCH_LOGS=graph_breaks, eager "
                "backend); clean twin: 0",
    },
    "recompile_storm_hazard.py": {
        "outcome": "ok",
        "graph_breaks": [],
        "recompiles": [(42, "self.calls == N (module int attributes are static)"),
                       (55, "self.epoch == N: read in forward, set by the loop at line 101"),
                       (65, "len(self.history) == N"),
                       (71, "p == <float> (the dropout rate of each epoch)"),
                       (115, "a new SAGE per hidden size: a parameter's shape differs")],
        "example": "gnnlint verify (eager backend): every storm hits `recompile_limit` (8); "
                   "`CountingSAGE`, `WarmupSAGE`, `ProbedSAGE` and `DropSAGE` ran 8 of 12 calls "
                   "compiled, the sweep's last 2 of 10 models 0 of 1; each storm is in its own "
                   "model because dynamo names only the first failing guard of a frame; clean "
                   "twin (buffers, a 0-d tensor rate, a reset per configuration): every call compiled",
    },
}
