"""The kinds a value may be and the tables that decide them: "what does this library call return?"

The constants (TENSOR, BATCH, MODEL, ...), the torch / PyG / tensor-method vocabularies, the name and
annotation patterns kinds.py reads, and the pure functions deciding a ``torch.<...>(...)`` /
``torch_geometric.<...>(...)`` call's kind from its dotted name. No context, no model: kinds.py asks them
(and re-exports them: importers keep ``from gnnlint.semantic.kinds import MODEL``).
"""
from __future__ import annotations

import re

import libcst as cst

from gnnlint.semantic.vocab import VARIABLE_SIZE_LOADERS

# -- kinds -------------------------------------------------------------------
TENSOR = "tensor"


BATCH = "batch"


MODEL = "model"


OPTIMIZER = "optimizer"


SCHEDULER = "scheduler"


LOADER = "loader"


SCALAR = "scalar"


UNKNOWN = "unknown"


# torch.<fn> calls that do not return a tensor.
# the legacy typed constructors: `torch.LongTensor([n])` builds a CPU tensor
LEGACY_TENSOR_CONSTRUCTORS = frozenset((
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
))
_TORCH_NON_TENSOR = {
    "device", "dtype", "Size", "no_grad", "inference_mode", "enable_grad", "set_grad_enabled",
    "manual_seed", "seed", "compile", "save", "load", "is_tensor", "is_floating_point",
    "is_complex", "is_nonzero", "numel", "get_default_dtype", "set_default_dtype",
    "set_printoptions", "use_deterministic_algorithms", "set_num_threads", "get_num_threads",
    "is_grad_enabled", "is_inference_mode_enabled", "typename", "set_float32_matmul_precision",
    "is_storage", "broadcast_shapes", "initial_seed", "get_rng_state", "autocast",
    "Generator", "Stream", "Event", "set_default_device", "get_default_device",
    "allclose", "equal", "is_same_size", "is_autocast_enabled", "are_deterministic_algorithms_enabled",
}


_TORCH_TENSOR_SUBMODULES = {"linalg", "fft", "special", "sparse", "nested", "masked"}


_TENSOR_METHODS_NON_TENSOR = {
    "item", "tolist", "size", "dim", "ndimension", "numel", "nelement", "element_size",
    "data_ptr", "is_contiguous", "is_floating_point", "numpy", "stride", "storage_offset",
    "get_device", "is_complex", "type", "untyped_storage", "equal", "__len__", "is_pinned",
    "is_coalesced", "is_set_to", "is_shared", "has_names", "is_signed", "__repr__",
}


_TENSOR_ATTRS_NON_TENSOR = {
    "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "is_sparse", "layout",
    "is_leaf", "names", "is_quantized", "is_meta", "is_cpu", "itemsize", "nbytes",
}


# Attributes of a PyG Data/HeteroData/Batch that are not tensors.
_BATCH_ATTRS_NON_TENSOR = {
    "num_nodes", "num_edges", "num_graphs", "batch_size", "num_features", "num_node_features",
    "num_edge_features", "keys", "node_types", "edge_types", "metadata", "is_directed",
    "is_undirected", "has_isolated_nodes", "has_self_loops", "stores", "node_stores",
    "edge_stores", "num_node_types", "num_edge_types", "x_dict", "edge_index_dict",
    "edge_attr_dict", "y_dict", "collect", "to_dict", "to_namedtuple", "input_id", "device", "dtype", "is_cuda",
}


# Methods only tensors have (not numpy arrays, modules or Python values):
# calling one on a value of unknown kind returns a tensor.
_TENSOR_ONLY_METHODS = {
    "detach", "softmax", "log_softmax", "sigmoid", "relu", "unsqueeze", "permute", "contiguous",
    "masked_fill", "masked_fill_", "index_select", "eq", "ne", "lt", "gt", "le", "ge", "long",
    "clamp", "clamp_min", "clamp_max", "topk", "gather", "scatter", "scatter_add", "scatter_reduce",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "type_as", "expand", "expand_as",
    "repeat_interleave", "masked_select", "logical_and", "logical_or", "logical_not", "bmm", "mm",
    "matmul", "index_add", "index_add_", "argsort", "logsumexp", "norm", "unbind", "narrow",
    "flip", "roll", "tril", "triu", "diag", "sign", "sqrt", "rsqrt", "exp", "log", "log1p", "pow",
    "isnan", "isinf", "isfinite", "nan_to_num", "clone", "numpy", "tolist", "item",
}


_MODEL_METHODS_NON_TENSOR = {
    "parameters", "named_parameters", "state_dict", "modules", "children", "named_modules",
    "named_children", "buffers", "named_buffers", "zero_grad", "load_state_dict", "apply",
    "register_buffer", "register_parameter", "register_forward_hook", "add_module",
    "reset_parameters", "requires_grad_", "share_memory", "extra_repr", "num_parameters",
}


_MODEL_METHODS_SELF = {"to", "eval", "train", "cuda", "cpu", "float", "double", "half", "bfloat16",
                       "compile", "to_empty", "jittable", "type"}


# `x_graph`, `h_batch`: features per graph / the batch vector of `x`, tensors, not a Data batch
_BATCH_NAMES = re.compile(r"^(batch|data|graph|sample|mini_?batch|hetero_data|(?!(?:x|h|z|e)_)(\w+_)?(data|batch|graph))$")


_MODEL_NAMES = re.compile(r"^(model|net|encoder|decoder|gnn|classifier|module|(\w+_)?(model|net|gnn|encoder|decoder))$")


_SCALAR_PARAM_NAMES = re.compile(
    r"^(num_\w+|n_\w+|\w+_size|size|dim|dims|training|p|k|eps|lr|heads|\w+_channels|channels|"
    r"\w+_dim|epoch|epochs|step|idx|i|j|name|mode|verbose|seed|\w+_ratio|ratio|alpha|beta|"
    r"gamma|tau|temperature|depth|layer|layers|flow|aggr|reduce|bias|normalize|cached|"
    r"add_self_loops|improved|dropout|act|jk|\w+_type|\w+_types|return_\w+)$"
)


_TENSOR_ANNOTATIONS = re.compile(
    r"^(Optional\[)?(torch\.)?(Tensor|FloatTensor|LongTensor|BoolTensor)\]?$|^(Opt)?Tensor$|"
    r"^(Adj|OptTensor|PairTensor|OptPairTensor|SparseTensor|EdgeIndex|Index)$|^(torch\.)?Tensor \| None$"
)


_SCALAR_ANNOTATIONS = re.compile(r"^(Optional\[)?(int|float|bool|str|complex)\]?$|^(int|float|bool|str) \| None$")


# torch.nn.utils functions that return a tensor (the total gradient norm...).
_TORCH_UTILS_RETURNING_TENSORS = {
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.get_total_norm", "torch.nn.utils.parameters_to_vector",
}


_STRING_NODES = frozenset((cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
_SCALAR_NODES = frozenset((cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                           cst.FormattedString, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp,
                           cst.SetComp, cst.GeneratorExp, cst.Lambda, cst.Tuple))


def _torch_call_kind(parts: list[str], resolved: str) -> str:
    """``torch.<...>(...)``: tensor functions, nn modules, optimizers, schedulers."""
    if len(parts) == 2:
        name = parts[1]
        if name in LEGACY_TENSOR_CONSTRUCTORS:
            return TENSOR  # torch.LongTensor([n]): a (CPU) tensor
        if name in _TORCH_NON_TENSOR or name[:1].isupper():
            return UNKNOWN
        return TENSOR
    if parts[1] == "nn" and len(parts) >= 4 and parts[2] == "functional":
        return TENSOR
    if resolved in _TORCH_UTILS_RETURNING_TENSORS:
        return TENSOR
    if parts[-1] in ("Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"):
        return TENSOR  # a parameter is a tensor, not a module
    if parts[1] == "nn" and parts[-1][:1].isupper():
        return MODEL
    if parts[1] == "optim":
        if len(parts) >= 3 and parts[2] == "lr_scheduler":
            return SCHEDULER
        return OPTIMIZER if parts[-1][:1].isupper() else UNKNOWN
    if parts[1] in _TORCH_TENSOR_SUBMODULES:
        return TENSOR
    return UNKNOWN


def _scatter_returns_tensor(name: str) -> bool:
    """A torch_scatter function returning one tensor (``scatter_max`` / ``segment_min_coo``
    return a tuple (values, arg): not one tensor)."""
    return name.startswith(("scatter", "segment", "gather")) and "max" not in name and "min" not in name


def _pyg_call_kind(parts: list[str]) -> str:
    """``torch_geometric.<...>(...)``: loaders, layers and models, utils, data objects."""
    last = parts[-1]
    if last in VARIABLE_SIZE_LOADERS and "loader" in parts:
        return LOADER
    if last == "to_hetero" or last == "to_hetero_with_bases":
        return MODEL
    if len(parts) >= 2 and parts[1] == "nn" and last[:1].isupper():
        return MODEL
    if len(parts) >= 2 and parts[1] == "utils":
        if last.startswith(("is_", "has_", "contains_")):
            return SCALAR
        return TENSOR
    if len(parts) >= 2 and parts[1] == "nn" and last.startswith("global_"):
        return TENSOR
    if last in ("Data", "HeteroData", "Batch"):
        return BATCH
    return UNKNOWN


# methods whose `dim=` / `keepdim=` / `descending=` keyword only a tensor takes (a list's `sort` takes
# `key` / `reverse`, numpy's reductions `axis`): their result is a tensor (or a tuple of tensors:
# `_, idx = scores.sort(dim=-1)`), whatever the receiver is known as
_DIM_METHODS = frozenset(("sort", "max", "min", "median", "mode", "kthvalue", "cummax", "cummin", "argmax",
                          "argmin", "argsort", "sum", "mean", "prod", "std", "var", "cumsum", "amax", "amin",
                          "nansum", "nanmean", "softmax", "log_softmax", "topk", "unique", "norm"))
_TENSOR_KEYWORDS = frozenset(("dim", "keepdim", "descending"))


def tensor_keyword_call(call: cst.Call) -> bool:
    """``x.sort(dim=-1, descending=True)`` / ``out["logits"].max(dim=1)``: a tensor method's call."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in _DIM_METHODS and any(
        a.keyword is not None and a.keyword.value in _TENSOR_KEYWORDS for a in call.args)
