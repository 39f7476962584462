"""What the child does with the user's values: describe them, make them
JSON, walk the tensors inside them, move them to the device."""
from __future__ import annotations


def describe(obj) -> str:
    try:
        if hasattr(obj, "__self__") and hasattr(obj, "__func__"):
            return f"{type(obj.__self__).__name__}.{obj.__func__.__name__}"
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
            return getattr(obj, "__qualname__", repr(obj))
        return type(obj).__name__
    except Exception:
        return "?"


def jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return repr(v)


def iter_tensors(torch, obj, depth=0):
    if depth > 6:
        return
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from iter_tensors(torch, o, depth + 1)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from iter_tensors(torch, o, depth + 1)
    elif hasattr(obj, "to_dict") and callable(getattr(obj, "to_dict")):
        try:
            d = obj.to_dict()
        except Exception:
            return
        yield from iter_tensors(torch, d, depth + 1)
    elif type(obj).__name__ == "SparseTensor":  # torch_sparse
        yield obj


def shape_sig(torch, obj) -> str:
    parts = []
    for t in iter_tensors(torch, obj):
        try:
            parts.append("x".join(str(int(s)) for s in t.size()))
        except Exception:
            parts.append("?")
    return ",".join(parts)


def move_to_device(obj, device):
    if device == "cpu":
        return obj
    if hasattr(obj, "to"):
        try:
            return obj.to(device)
        except Exception:
            return obj
    if isinstance(obj, tuple):
        return tuple(move_to_device(o, device) for o in obj)
    if isinstance(obj, list):
        return [move_to_device(o, device) for o in obj]
    if isinstance(obj, dict):
        return {k: move_to_device(v, device) for k, v in obj.items()}
    return obj


def unwrap(model):
    return getattr(model, "_orig_mod", model)


def mark_varying_dims(torch, inputs) -> None:
    flat = [list(iter_tensors(torch, i)) for i in inputs]
    if len(flat) < 2:
        return
    n = min(len(f) for f in flat)
    for pos in range(n):
        ts = [f[pos] for f in flat if isinstance(f[pos], torch.Tensor)]
        if len(ts) != len(flat) or len({t.dim() for t in ts}) != 1:
            continue
        for d in range(ts[0].dim()):
            if len({int(t.size(d)) for t in ts}) > 1:
                for t in ts:
                    try:
                        torch._dynamo.maybe_mark_dynamic(t, d)
                    except Exception:
                        pass
