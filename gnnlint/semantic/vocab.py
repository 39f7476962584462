"""What names mean in torch / PyG, shared by several analyses: the compile
functions, the ``is_compiling()`` spellings, module base classes, message
passing methods, Lightning step hooks, variable-size loaders, model wrappers.
"""
from __future__ import annotations

COMPILE_FUNCS = {"torch.compile", "torch_geometric.compile"}


IS_COMPILING = {
    "torch.compiler.is_compiling",
    "torch._dynamo.is_compiling",
    "torch_geometric.is_compiling",
    "torch.compiler.is_dynamo_compiling",
    "torch._utils.is_compiling",
    "torch_geometric.typing.is_compiling",
    "torch._dynamo.external_utils.is_compiling",
    "transformers.utils.is_torchdynamo_compiling",
}
# The last part of an is_compiling() spelling gnnlint cannot resolve (a project's own wrapper).
IS_COMPILING_NAMES = ("is_compiling", "is_dynamo_compiling", "is_torchdynamo_compiling")
# regions.py's why for a class compiling its own forward ends with this: every instance runs compiled.
# Not "(compiled by `": a class handed to another file's compiling helper (handoffs.py: "(compiled by
# `check_compile` in utils.py)") is compiled in that call only, its other instances run eagerly.
SELF_COMPILED_MARK = "` itself)"


# Decorators that keep dynamo out of a function: its body always runs eagerly.
DISABLE_FUNCS = {"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo"}


# Bases that make a class an nn.Module (resolved names or bare last parts).
MODULE_BASE_SUFFIXES = (
    "Module", "MessagePassing", "Sequential", "ModuleList", "ModuleDict",
    "LightningModule", "Conv", "Aggregation", "BasicGNN",
)


MESSAGE_PASSING_METHODS = ("message", "aggregate", "update", "message_and_aggregate", "edge_update")


LIGHTNING_STEP_HOOKS = ("training_step", "validation_step", "test_step", "predict_step")


VARIABLE_SIZE_LOADERS = {
    "NeighborLoader", "LinkNeighborLoader", "HGTLoader", "ClusterLoader", "ShaDowKHopSampler",
    "DataLoader", "DenseDataLoader", "DataListLoader", "GraphSAINTNodeSampler",
    "GraphSAINTEdgeSampler", "GraphSAINTRandomWalkSampler", "NeighborSampler",
    "ImbalancedSampler", "DynamicBatchSampler", "RandomNodeLoader", "ZipLoader",
    "HGTLoader", "LinkLoader", "NodeLoader", "GraphSAINTSampler", "ClusterData",
}


# Wrappers whose result runs the module they are given.
_FEED_MODEL_WRAPPERS = {"DistributedDataParallel", "DataParallel", "DDP", "FullyShardedDataParallel", "FSDP"}


# jraph's ``GraphsTuple`` (a NamedTuple, also used by PyTorch ports of jraph
# models): its fields in order; ``n_node`` / ``n_edge`` are always arrays of
# per-graph counts, never ints.
GRAPHS_TUPLE_CLASSES = ("jraph.GraphsTuple", "jraph._src.graph.GraphsTuple")
GRAPHS_TUPLE_FIELDS = ("nodes", "edges", "receivers", "senders", "globals", "n_node", "n_edge")
GRAPHS_TUPLE_COUNTS = ("n_node", "n_edge")


# methods of a module that do not run it (a call of one is no step)
MODULE_HOUSEKEEPING = frozenset({
    "parameters", "named_parameters", "state_dict", "modules", "children", "named_modules",
    "named_children", "buffers", "named_buffers", "zero_grad", "load_state_dict", "apply",
    "register_buffer", "register_parameter", "register_forward_hook", "add_module",
    "reset_parameters", "requires_grad_", "share_memory", "extra_repr", "num_parameters",
    "to", "eval", "train", "cuda", "cpu", "float", "double", "half", "bfloat16", "compile",
    "to_empty", "type", "save", "items", "keys", "values", "get",
})
