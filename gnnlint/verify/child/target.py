"""Loading the target in the verify child: importing a file or module and
its ``gnnlint_example()`` (or the function named), the file ``python -m``
would run, reading what an example returned, passing a PyG batch the way
``forward`` asks, and the project's compile sites for the example's model."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnnlint.verify.child.frames import USER, TargetError
from gnnlint.verify.child.values import unwrap

if TYPE_CHECKING:
    from gnnlint.verify.child.harness import Harness

# --------------------------------------------------------------------------
# target import and example parsing
# --------------------------------------------------------------------------

def package_root(path: Path) -> tuple[Path, str]:
    """(sys.path root, dotted module name) of a file, walking up __init__.py."""
    path = path.resolve()
    parts = [path.stem]
    d = path.parent
    while (d / "__init__.py").exists():
        parts.append(d.name)
        d = d.parent
    if path.name == "__init__.py":
        parts = parts[1:]
    return d, ".".join(reversed(parts))


def import_target(h: Harness, target: dict):
    kind = target["kind"]
    if kind == "file":
        path = Path(target["path"]).resolve()
        if not path.is_file():
            raise TargetError("not-found", f"{path}: no such file")
        root, modname = package_root(path)
        USER.add_root(str(root if root != path.parent else path.parent))
        USER.extra.add(str(path))
        sys.path.insert(0, str(root))
        if root != path.parent:
            mod = importlib.import_module(modname)
        else:
            spec = importlib.util.spec_from_file_location(modname, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[modname] = mod
            spec.loader.exec_module(mod)
        func_name = target.get("function") or "gnnlint_example"
    else:
        modname = target["module"]
        top = modname.split(".")[0]
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise TargetError("not-found", f"module {modname!r} not found (sys.path starts {sys.path[:3]})")
        origin = spec.origin or (list(spec.submodule_search_locations or [None])[0])
        if origin:
            o = Path(origin).resolve()
            root = o.parent.parent if o.name == "__init__.py" or spec.submodule_search_locations else o.parent
            USER.add_root(str(root))
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name and modname.startswith(e.name):
                raise TargetError("not-found", f"module {modname!r} not found") from None
            raise
        path = Path(getattr(mod, "__file__", "") or "").resolve()
        USER.extra.add(str(path))
        func_name = target.get("function") or "gnnlint_example"
    fn = getattr(mod, func_name, None)
    if fn is None or not callable(fn):
        raise TargetError("not-found", f"{path}: no function {func_name}() to verify")
    return mod, fn, path


def parse_example(torch, result) -> dict:
    """Normalise what gnnlint_example() returned."""
    ex: dict[str, Any] = {}
    if isinstance(result, dict):
        ex = dict(result)
    elif hasattr(result, "model") and hasattr(result, "inputs"):
        ex = {k: getattr(result, k) for k in ("model", "inputs", "optimizer", "scheduler",
                                              "loss_fn", "step", "run", "steps") if hasattr(result, k)}
    elif isinstance(result, (tuple, list)) and len(result) in (2, 3):
        ex = {"model": result[0], "inputs": result[1]}
        if len(result) == 3 and result[2] is not None:
            extra = result[2]
            if not isinstance(extra, dict):
                extra = {k: getattr(extra, k) for k in ("optimizer", "scheduler", "loss_fn", "step", "run", "steps")
                         if hasattr(extra, k)}
            ex.update(extra)
    else:
        raise TargetError("bad-example", "gnnlint_example() must return (model, [inputs...]) "
                          "or (model, [inputs...], {optimizer, scheduler, loss_fn})")
    if ex.get("run") is not None and not callable(ex["run"]):
        raise TargetError("bad-example", "gnnlint_example(): 'run' must be a callable taking the model")
    if ex.get("model") is None or not callable(ex["model"]):
        raise TargetError("bad-example", "gnnlint_example(): the model is missing or not callable")
    inputs = ex.get("inputs")
    if ex.get("run") is not None and inputs is None:
        inputs = []
    if not isinstance(inputs, (list, tuple)) or (not inputs and ex.get("run") is None):
        raise TargetError("bad-example", "gnnlint_example(): inputs must be a non-empty list")
    ex["inputs"] = list(inputs)
    return ex


def call_args(inp, model=None) -> tuple[tuple, dict]:
    if isinstance(inp, tuple):
        return inp, {}
    if isinstance(inp, list):
        return tuple(inp), {}
    if model is not None and _is_pyg_data(inp):
        return data_args(inp, model)
    return (inp,), {}


def _is_pyg_data(obj) -> bool:
    try:
        from torch_geometric.data.data import BaseData
    except ImportError:
        return False
    return isinstance(obj, BaseData)


_WHOLE_NAMES = {"data", "batch", "graph", "g", "inputs", "input", "sample", "hetero_data", "mini_batch"}
_MISSING = object()


def _data_attr(data, name: str):
    try:
        return getattr(data, name)
    except (AttributeError, KeyError):
        return _MISSING


def data_args(data, model) -> tuple[tuple, dict]:
    """A ``Data``/``HeteroData``/``Batch`` input passed the way the model's
    ``forward`` asks: ``forward(data)`` gets the object, ``forward(x,
    edge_index, batch)`` its attributes by name."""
    fwd = getattr(unwrap(model), "forward", None)
    try:
        sig = inspect.signature(fwd)
    except (TypeError, ValueError):
        return (data,), {}
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    params = [p for p in sig.parameters.values() if p.kind in kinds]
    if not params:
        return (data,), {}
    first = params[0]
    ann = str(first.annotation)
    required = [p for p in params if p.default is p.empty]
    if (first.name in _WHOLE_NAMES or "Data" in ann or "Batch" in ann
            or (_data_attr(data, first.name) is _MISSING and len(required) <= 1)):
        return (data,), {}
    args: list = []
    kwargs: dict = {}
    for p in params:
        val = _data_attr(data, p.name)
        if val is _MISSING:
            if p.default is p.empty:
                raise TargetError("bad-example", (
                    f"the model's forward{sig} asks for `{p.name}`, which the {type(data).__name__} input "
                    f"does not have (it has: {', '.join(sorted(map(str, data.keys())))}); pass a tuple of "
                    "arguments instead"))
            continue
        if p.kind == inspect.Parameter.KEYWORD_ONLY or kwargs or len(args) != params.index(p):
            kwargs[p.name] = val
        else:
            args.append(val)
    return tuple(args), kwargs


def module_origin(name: str) -> str:
    """The file ``python -m name`` would run (a clear error when there is none)."""
    cwd = os.getcwd()
    if not sys.path or sys.path[0] != cwd:
        sys.path.insert(0, cwd)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as e:
        raise TargetError("not-found", f"module {name!r} not found ({type(e).__name__}: {e})") from None
    if spec is None:
        raise TargetError("not-found", f"module {name!r} not found (sys.path starts {sys.path[:3]})")
    if spec.submodule_search_locations:  # a package: python -m runs its __main__
        main = importlib.util.find_spec(name + ".__main__")
        if main is None or not main.origin:
            raise TargetError("not-found", f"{name!r} is a package without __main__.py")
        spec = main
    origin = str(Path(spec.origin or "").resolve())
    top = importlib.util.find_spec(name.split(".")[0])
    if top is not None and top.origin:
        o = Path(top.origin).resolve()
        root = o.parent.parent if o.name == "__init__.py" else o.parent
        if str(root) not in ("/", ""):
            USER.add_root(str(root))
    return origin


def looks_like_example(raw: Any) -> bool:
    """Did a called function return a ``gnnlint_example``-style (model, inputs)?"""
    if isinstance(raw, dict):
        return callable(raw.get("model")) and ("inputs" in raw or "run" in raw)
    if isinstance(raw, (tuple, list)) and len(raw) in (2, 3):
        return callable(raw[0]) and isinstance(raw[1], (list, tuple))
    return hasattr(raw, "model") and hasattr(raw, "inputs")


# --------------------------------------------------------------------------
# compile sites from the project's source
# --------------------------------------------------------------------------

def project_files(h: Harness, target_path: Path, model) -> list[Path]:
    files: list[Path] = [target_path]
    root, modname = package_root(target_path)
    if root != target_path.parent:
        top = root / modname.split(".")[0]
        files += sorted(p for p in top.rglob("*.py") if p != target_path)
    try:
        mf = Path(inspect.getfile(type(unwrap(model)))).resolve()
        if str(mf) in USER and mf not in files:
            files.append(mf)
    except (TypeError, OSError):
        pass
    return files


def _site_dict(cs, via: str) -> dict:
    return {"path": str(Path(cs.path).resolve()), "line": cs.line, "mode": cs.mode,
            "dynamic": cs.dynamic, "fullgraph": bool(cs.fullgraph),
            "mark_dynamic": bool(cs.mark_dynamic), "options": {k: None for k in cs.options} or None,
            "via": via}


def find_sites(files: list[Path], model, target_path: Path) -> tuple[dict | None, dict | None, bool]:
    """(site for the model's class, site compiling an optimizer step, anything compiled)."""
    from gnnlint.verify import _sites

    cls = type(unwrap(model))
    try:
        cls_file = str(Path(inspect.getfile(cls)).resolve())
    except (TypeError, OSError):
        cls_file = ""
    scan = _sites.scan_files(files)
    site = step = None
    try:
        from gnnlint.project_index import build_index  # the real index, when present

        index = build_index(files)
        cs = index.compile_site_for_class(cls_file, cls.__name__)
        if cs is not None:
            site = _site_dict(cs, "project_index")
        sites = list(getattr(index, "sites", []) or [])
        steps = [s for s in sites if getattr(s, "target_kind", "") == "optimizer_step"]
        if steps:
            step = _site_dict(steps[0], "project_index")
        if site is None:
            # e.g. to_hetero(GNN(...)) is an fx GraphModule at runtime: use the
            # one model compile of the target file, if there is exactly one
            want = str(target_path.resolve())
            classes = [s for s in sites if getattr(s, "target_kind", "") == "class"
                       and str(Path(s.path).resolve()) == want]
            if len(classes) == 1:
                site = _site_dict(classes[0], "project_index (the file's only model compile)")
        if sites:
            scan["any"] = True
    except ImportError:
        pass
    except Exception as e:  # a broken index must not kill verification
        scan["notes"].append(f"project index failed: {type(e).__name__}: {e}")
    if site is None:
        site = scan["classes"].get(cls.__name__)
    if site is None and len(scan["classes"]) == 1:
        only = next(iter(scan["classes"].values()))
        if only["path"] == str(target_path.resolve()):
            site = dict(only, via="ast (the file's only model compile)")
    return site, step or scan["step"], scan["any"]
