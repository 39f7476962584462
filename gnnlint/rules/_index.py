"""Generated from the rule classes by `python -m gnnlint.docs`; do not edit."""
from gnnlint.rules import RuleInfo

RULES = (
    RuleInfo('GNN001', 'host-sync', 'gnn001_host_sync', (b'item(', b'tolist(', b'cpu(', b'numpy(', b'float(', b'int(', b'bool(', b'if ', b'while ', b'assert ', b'print(', b'f"', b"f'", b'allclose(', b'equal(', b'"cpu")', b"'cpu')", b']:', b']]', b'not ', b' or ', b' and '), 'compiled', '', ''),
    RuleInfo('GNN002', 'float-lr', 'gnn002_float_lr', (b'compile',), 'compiled', '>=2.3', ''),
    RuleInfo('GNN003', 'tuple-moduledict-key', 'gnn003_tuple_moduledict_key', (b'ModuleDict', b'ParameterDict', b'HeteroConv', b'convs'), 'compiled', '<2.5', ''),
    RuleInfo('GNN004', 'repeat-interleave-size', 'gnn004_repeat_interleave_size', (b'repeat_interleave',), None, '', ''),
    RuleInfo('GNN005', 'sparse-under-compile', 'gnn005_sparse_under_compile', (b'SparseTensor', b'sparse', b'adj_t', b'to_torch_c'), 'compiled', '', ''),
    RuleInfo('GNN006', 'reduce-overhead-dynamic', 'gnn006_reduce_overhead_dynamic', (b'reduce-overhead', b'max-autotune', b'cudagraphs'), 'compiled', '', ''),
    RuleInfo('GNN007', 'compile-not-dynamic', 'gnn007_compile_not_dynamic', (b'compile',), 'compiled', '', ''),
    RuleInfo('GNN008', 'data-dependent-shape', 'gnn008_data_dependent_shape', (b'nonzero', b'argwhere', b'unique', b'where', b'masked_select', b'bincount', b'['), 'compiled', '', ''),
    RuleInfo('GNN009', 'pyg-size-inference', 'gnn009_pyg_size_inference', (b'AttentionalAggregation', b'DeepSetsAggregation', b'DegreeScalerAggregation', b'EdgeCNN', b'EquilibriumAggregation', b'GAT', b'GCN', b'GIN', b'GRUAggregation', b'GraphMultisetTransformer', b'GraphNorm', b'GraphSAGE', b'InstanceNorm', b'LCMAggregation', b'LSTMAggregation', b'LayerNorm', b'MLPAggregation', b'MaxAggregation', b'MeanAggregation', b'MeanSubtractionNorm', b'MedianAggregation', b'MinAggregation', b'MulAggregation', b'MultiAggregation', b'PNA', b'PairNorm', b'PatchTransformerAggregation', b'PowerMeanAggregation', b'QuantileAggregation', b'Set2Set', b'SetTransformerAggregation', b'SoftmaxAggregation', b'SortAggregation', b'StdAggregation', b'SumAggregation', b'VarAggregation', b'VariancePreservingAggregation', b'add_self_loops', b'avg_pool_x', b'degree', b'fps', b'get_laplacian', b'get_self_loop_attr', b'global_add_pool', b'global_max_pool', b'global_mean_pool', b'group_argsort', b'index2ptr', b'index_to_mask', b'knn', b'knn_graph', b'max_pool_x', b'one_hot', b'radius', b'radius_graph', b'remove_isolated_nodes', b'scatter', b'scatter_add', b'scatter_max', b'scatter_mean', b'scatter_min', b'scatter_sum', b'softmax', b'sort_edge_index', b'structured_negative_sampling', b'to_dense_adj', b'to_dense_batch', b'to_nested_tensor'), 'compiled', '', ''),
    RuleInfo('GNN010', 'compile-result-discarded', 'gnn010_compile_result_discarded', (b'compile',), 'compiled', '', ''),
    RuleInfo('GNN011', 'hidden-compile-errors', 'gnn011_hidden_compile_errors', (b'suppress_errors', b'cache_size_limit', b'recompile_limit', b'SUPPRESS_ERRORS'), None, '', ''),
    RuleInfo('GNN012', 'lazy-module-compiled', 'gnn012_lazy_module_compiled', (b'compile',), 'compiled', '', ''),
    RuleInfo('GNN013', 'step-host-sync', 'gnn013_step_host_sync', (b'item(', b'tolist(', b'cpu(', b'numpy(', b'float(', b'int(', b'bool(', b'if ', b'while ', b'assert ', b'print(', b'f"', b"f'", b'allclose(', b'equal(', b'"cpu")', b"'cpu')", b']:', b']]', b'not ', b' or ', b' and '), 'compiled_or_hot', '', ''),
    RuleInfo('GNN014', 'layer-graph-break', 'gnn014_layer_graph_break', (b'APPNP', b'ChebConv', b'EdgeCNN', b'EdgePooling', b'GAT', b'GATConv', b'GATv2Conv', b'GCN', b'GCN2Conv', b'GCNConv', b'GIN', b'GraphSAGE', b'HGTConv', b'JumpingKnowledge', b'MFConv', b'PNA', b'PointNetConv', b'RGCNConv', b'SAGEConv', b'SAGPooling', b'SGConv', b'Set2Set', b'SortAggregation', b'TopKPooling', b'add_remaining_self_loops', b'coalesce', b'contains_self_loops', b'dropout_edge', b'dropout_node', b'is_undirected', b'k_hop_subgraph', b'negative_sampling', b'remove_self_loops', b'subgraph', b'to_undirected'), 'compiled', '>=2.0', '>=2.3'),
    RuleInfo('GNN015', 'recompile-limit-eager', 'gnn015_recompile_limit_eager', (b'compile', b'+=', b'append', b'extend', b'insert', b'dropout'), 'compiled', '>=2.0', ''),
    RuleInfo('GNN016', 'data-size-in-compiled', 'gnn016_data_size_in_compiled', (b'num_nodes', b'size('), 'compiled', '', ''),
    RuleInfo('GNN017', 'hook-after-compile', 'gnn017_hook_after_compile', (b'register_forward',), 'compiled', '>=2.1', ''),
    RuleInfo('GNN018', 'compiled-state-dict', 'gnn018_compiled_state_dict', (b'state_dict',), 'compiled', '>=2.0', ''),
    RuleInfo('GNN019', 'compiled-train-step', 'gnn019_compiled_train_step', (b'backward', b'step(', b'zero_grad'), 'compiled', '>=2.0', ''),
    RuleInfo('GNN020', 'host-call-in-compiled', 'gnn020_host_call_in_compiled', (b'print(', b'log', b'warn', b'time.', b'random', b'manual_seed', b'perf_counter'), 'compiled', '>=2.0', ''),
)
