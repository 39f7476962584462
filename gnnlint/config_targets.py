"""Which project classes a Hydra config group may build: ``_target_`` lines
of the project's YAML configs, read with a line scan (no YAML parser, no
import of the linted code).

``hydra.utils.instantiate(cfg.encoder)`` builds the class named by the
``_target_`` of the config selected for the group ``encoder``: a file
``<config dir>/encoder/<option>.yaml`` whose top level holds ``_target_:
pkg.module.Encoder``, or an ``encoder:`` key holding a ``_target_`` in a
config file of the same config directory. The config directory is found
next to the file that instantiates, or above it: the nearest folder ``A``
(walking up from the file, at most to the project root -- a folder with
``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``) that has
``A/encoder/`` or ``A/<conf-like>/`` (``conf``, ``config``, ``configs``,
``cfg``, ``hydra_configs``, ...) holding configs. Nothing found: no
candidates (precision first). Library targets (``torch.optim.Adam``) do
not resolve to a project file and drop out where the engine resolves them.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Optional
from gnnlint.facts import ImportRef

# The marker module of the ImportRef a file exports for "the class the config
# group <name> selects" (gnnlint.semantic.instantiate); the engine turns it
# into the candidate classes.
CONFIG_GROUP = "<hydra config group>"
# The phrase of the exported reason that names the class; replaced by the class.
CONFIG_CLASS = "the class the config selects"
# How the reason names the condition (the class is built when the run's config picks it).
CONFIG_CLASS_MARK = "when the config selects it"
# The engine's mark on a resolved candidate: it may be defined in the file that
# instantiates it (other facts about a file's own names are not sent back to it).
SAME_FILE = "\x00config"

_YAML = (".yaml", ".yml")
_CONF_NAME = re.compile(r"^(?:conf|config|configs|cfg|cfgs|hydra_configs?|hydra)(?:[_-]\w+)?$", re.I)
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_TARGET = re.compile(r"""^(\s*)(?:-\s+)?_target_\s*:\s*['"]?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)['"]?\s*(?:#.*)?$""")
_KEY = re.compile(r"""^(\s*)(?:-\s+)?['"]?([A-Za-z_][\w\-]*)['"]?\s*:\s*(?:#.*)?$""")
_MAX_UP = 8
_MAX_FILES = 2000
_MAX_BYTES = 1 << 20


def group_ref(group: str) -> ImportRef:
    return ImportRef(CONFIG_GROUP, group)


def is_group_ref(ref: object) -> bool:
    return isinstance(ref, ImportRef) and ref.module == CONFIG_GROUP


def candidates(importer: str, group: str) -> list[tuple[str, str]]:
    """``[(dotted target, yaml path relative to the folder holding the
    configs), ...]`` the config group ``group`` may build for code in
    ``importer``, in a stable order, without duplicates."""
    for folder in _folders_up(importer):
        found = _at(folder, group)
        if found:
            return found
    return []


def _folders_up(importer: str):
    """The folder holding ``importer``, then each parent up to the project's
    root (a folder with ``.git`` / ``pyproject.toml`` / ``setup.py``), at most
    ``_MAX_UP``: where its configs may live."""
    folder = os.path.dirname(os.path.abspath(importer))
    for _ in range(_MAX_UP):
        yield folder
        if any(os.path.exists(os.path.join(folder, m)) for m in _ROOT_MARKERS):
            return
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def as_import(dotted: str) -> ImportRef:
    """``pkg.models.GCN`` -> the class; ``pkg.models.build_gcn`` (a factory
    Hydra calls) -> what it returns (``build_gcn()``, as for an imported factory)."""
    module, _, name = dotted.rpartition(".")
    return ImportRef(module, name if name[:1].isupper() else f"{name}()")


def _at(folder: str, group: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for root in _config_roots(folder, group):
        # a group folder right here: only it; a conf-like folder: all of it
        tree = os.path.join(root, group) if root == folder else root
        for path, targets in _scan_tree(tree):
            parts = os.path.relpath(path, root).split(os.sep)
            in_group = group in parts[:-1]
            for indent, parent_key, dotted in targets:
                # the group's own file: its top-level _target_; any config file
                # of the tree: a _target_ right under a `group:` key
                if (in_group and indent == 0 and parent_key is None) or parent_key == group:
                    item = (dotted, os.path.relpath(path, folder).replace(os.sep, "/"))
                    if item not in out:
                        out.append(item)
    return out


@lru_cache(maxsize=4096)
def _config_roots(folder: str, group: str) -> tuple[str, ...]:
    """Config directories at ``folder``: ``folder`` itself when it has a
    ``group/`` folder of YAML files, and its conf-like subfolders."""
    roots = []
    if _has_yaml(os.path.join(folder, group)):
        roots.append(folder)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    for name in names:
        path = os.path.join(folder, name)
        if _CONF_NAME.match(name) and os.path.isdir(path):
            roots.append(path)
    return tuple(roots)


@lru_cache(maxsize=1024)
def _has_yaml(folder: str) -> bool:
    try:
        return any(n.endswith(_YAML) for n in os.listdir(folder))
    except OSError:
        return False


def _walk_configs(root: str, suffixes: tuple):
    """The files under ``root`` whose names end with ``suffixes``, in a stable
    order, skipping hidden folders and caches; at most ``_MAX_FILES``."""
    count = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(suffixes):
                continue
            count += 1
            if count > _MAX_FILES:
                return
            yield os.path.join(directory, name)


@lru_cache(maxsize=256)
def _scan_tree(root: str) -> tuple:
    """``((yaml path, ((indent, parent key | None, dotted target), ...)), ...)``."""
    out = []
    for path in _walk_configs(root, _YAML):
        targets = _scan_file(path)
        if targets:
            out.append((path, targets))
    return tuple(out)


def _scan_file(path: str) -> tuple:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES)
    except OSError:
        return ()
    if b"_target_" not in data:
        return ()
    text = data.decode("utf-8", "replace")
    keys: list[tuple[int, str]] = []  # the open mapping keys: (indent, key)
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        target = _TARGET.match(line)
        indent = len(line) - len(line.lstrip(" -"))
        if target is not None:
            while keys and keys[-1][0] >= indent:
                keys.pop()
            out.append((indent, keys[-1][1] if keys else None, target.group(2)))
            continue
        while keys and keys[-1][0] >= indent:
            keys.pop()
        key = _KEY.match(line)
        if key is not None:
            keys.append((indent, key.group(2)))
    return tuple(out)


def target_why(why: str, dotted: str, where: str) -> str:
    """The reason given to the file defining the candidate class."""
    name = dotted.rpartition(".")[2]
    text = f"`{name}` ({CONFIG_CLASS_MARK}, `{where}`)"
    if CONFIG_CLASS in why:
        return why.replace(CONFIG_CLASS, text)
    return f"compiled forward of {text}"



# -- the entries of a config mapping: `**cfg.compile.args` ------------------------------
_ENTRY = re.compile(r"""^(\s*)['"]?([A-Za-z_][\w\-]*)['"]?\s*:(?:\s+(.*?))?\s*$""")
_PACKAGE_GLOBAL = re.compile(r"^#\s*@package\s+_global_\s*$", re.M)
ABSENT = "\x00absent"


def mapping_entry(importer: str, path: tuple, key: str) -> "Optional[tuple[str, str]]":
    """``(raw value, yaml path)`` of ``key`` in the mapping at ``path``
    (``("compile", "args")``) of the project's Hydra configs for code in
    ``importer``; ``(ABSENT, yaml path)`` when every config that defines the
    mapping leaves ``key`` out; None when no config defines it, or the configs
    disagree, or the entry is not a plain scalar (then nothing is known)."""
    for folder in _folders_up(importer):
        answers = []
        for root in _config_roots(folder, path[0]):
            answers += _mapping_answers(root, tuple(path), key)
        if answers:
            values = {value for value, _where in answers}
            if len(values) != 1 or None in values:
                return None
            where = os.path.relpath(answers[0][1], folder).replace(os.sep, "/")
            return answers[0][0], where
    return None


def _mapping_answers(root: str, path: tuple, key: str) -> list:
    """[(raw value | ABSENT | None when not a scalar, yaml path)] of every YAML
    file under ``root`` that defines the mapping: the config directory's own
    files and ``# @package _global_`` files from the top, a group folder named
    ``path[0]`` from its second key."""
    out = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        rel = os.path.relpath(directory, root)
        for name in sorted(files):
            if not name.endswith(_YAML):
                continue
            file = os.path.join(directory, name)
            text = _read_text(file)
            if text is None:
                continue
            if rel == "." or _PACKAGE_GLOBAL.search(text):
                wanted = path
            elif rel.split(os.sep)[0] == path[0]:
                wanted = path[1:]
            else:
                continue
            entries = _mapping_in(text, wanted)
            if entries is not None:
                out.append((entries.get(key, ABSENT), file))
    return out


@lru_cache(maxsize=512)
def _read_text(path: str) -> "Optional[str]":
    try:
        with open(path, "rb") as handle:
            return handle.read(_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def _mapping_in(text: str, path: tuple) -> "Optional[dict]":
    """The scalar entries of the mapping at ``path`` in one YAML text (a
    nested mapping's entry: None), or None when the text does not define it."""
    stack: list[tuple[int, str]] = []
    found: Optional[dict] = None
    child_indent = -1
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("- "):
            continue
        match = _ENTRY.match(line)
        if match is None:
            continue
        indent, name, value = len(match.group(1)), match.group(2), (match.group(3) or "").split(" #")[0].strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        keys = tuple(k for _i, k in stack)
        if found is not None and keys[:len(path)] == path and len(keys) == len(path):
            if child_indent < 0:
                child_indent = indent
            found[name] = _scalar(value)
        if keys + (name,) == path:
            if value.startswith("{"):
                return _flow_mapping(value)
            if value and value not in ("null", "~"):
                return None  # `args: ${oc.create:...}`, a reference: unknown
            found, child_indent = {}, -1
        stack.append((indent, name))
    return found


def _scalar(raw: str) -> "Optional[str]":
    if not raw or raw.startswith(("{", "[", "$", "&", "*", "|", ">", "!")):
        return None  # a nested mapping, a list, an interpolation, an anchor: not a plain value
    return raw.strip("'\"") if raw[:1] in "'\"" else raw


def _flow_mapping(raw: str) -> "Optional[dict]":
    if not raw.endswith("}") or "{" in raw[1:] or "[" in raw:
        return None
    out = {}
    for item in raw[1:-1].split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition(":")
        if not sep:
            return None
        out[name.strip().strip("'\"")] = _scalar(value.strip())
    return out


# -- a config-built class's constructor arguments: `encoder: ${encoder}` ----------------
_INTERPOLATION = re.compile(r"""^['"]?\$\{([A-Za-z_][\w\-]*)\}['"]?$""")


def param_fills(importer: str, cls_name: str, param: str) -> list[tuple[str, str]]:
    """What the project's Hydra configs build for the constructor parameter
    ``param`` of the class ``cls_name`` defined in ``importer``: each config
    file whose top-level ``_target_`` names that class (``pkg.lit.VAE``, the
    module matched against the end of ``importer``'s path) and whose
    top-level ``param:`` entry is an interpolation of a config group
    (``encoder: ${encoder}``) gives ``("group", name)``; one holding a nested
    ``_target_`` (``encoder:`` / ``  _target_: pkg.enc.Encoder``) gives
    ``("target", dotted)``. A literal, a list or anything else gives nothing."""
    module_path = os.path.splitext(os.path.abspath(importer))[0].replace(os.sep, "/")
    folder = None
    for folder in _folders_up(importer):
        roots = [root for root in _config_roots(folder, param)
                 if root != folder]  # a group folder named like the parameter, not a config directory
        out = _fills_in(roots, module_path, cls_name, param)
        if out:
            return out
    # the configs live next to the entry scripts (experiments/<task>/configs/), not above the class
    if folder is not None and any(os.path.exists(os.path.join(folder, m)) for m in _ROOT_MARKERS):
        return _fills_in(_project_config_roots(folder), module_path, cls_name, param)
    return []


def config_builds(defining: str, cls_name: str) -> bool:
    """Some ``_target_`` of the project's Hydra configs names the class ``cls_name`` of the file
    ``defining`` (at any depth): a run may build it with whatever arguments the config holds."""
    module_path = os.path.splitext(os.path.abspath(defining))[0].replace(os.sep, "/")
    # each folder up to the project's root, nearest first: a checkout with no root marker
    # (no .git / pyproject.toml) has its `configs/` next to `src/`, not under `/`
    return any(_names_class(dotted, module_path, cls_name)
               for folder in _folders_up(defining)
               for root in _project_config_roots(folder) for _path, targets in _scan_tree(root)
               for _indent, _parent, dotted in targets)


def _fills_in(roots, module_path: str, cls_name: str, param: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for root in roots:
        tree = dict(_scan_tree(root))
        for path, targets in tree.items():
            if not _builds_class(path, targets, tree, module_path, cls_name):
                continue
            for item in _top_entry(path, param, targets):
                if item not in out:
                    out.append(item)
    return out


def _builds_class(path: str, targets: tuple, tree: dict, module_path: str, cls_name: str) -> bool:
    """Does this config build the class: its own top-level ``_target_``, or
    that of a config its ``defaults:`` list extends (``model/graphformer.yaml``
    with ``defaults: [- default]`` and ``net: {_target_: ...}``: Hydra merges
    ``model/default.yaml``'s ``_target_: pkg.lit.Module`` under it)?"""
    seen = {path}
    while True:
        if any(indent == 0 and parent is None and _names_class(dotted, module_path, cls_name)
               for indent, parent, dotted in targets):
            return True
        if any(indent == 0 and parent is None for indent, parent, _ in targets):
            return False  # its own top-level target wins over the one it extends
        base = _extended(path)
        if base is None or base in seen:
            return False
        seen.add(base)
        path, targets = base, tree.get(base, ())


_DEFAULTS_PLAIN = re.compile(r"""^\s+-\s+['"]?([A-Za-z_][\w\-]*)(?:\.ya?ml)?['"]?\s*(?:#.*)?$""")


def _extended(path: str) -> "Optional[str]":
    """The config of the same group a config's top-level ``defaults:`` list
    names by a plain entry (``- default``, ``- base.yaml``; not ``_self_``,
    not a ``group: option`` choice), when it exists; the first one."""
    inside = False
    for line in (_read_text(path) or "").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[:1].isspace() and not line.startswith("-"):
            inside = line.split(":")[0].strip() == "defaults"
            continue
        match = _DEFAULTS_PLAIN.match(line) if inside else None
        if match is None or match.group(1) == "_self_":
            continue
        folder = os.path.dirname(path)
        for ext in _YAML:
            base = os.path.join(folder, match.group(1) + ext)
            if base != path and os.path.isfile(base):
                return base
    return None


_MAX_DIRS = 3000
_SKIP_DIRS = frozenset(("__pycache__", "node_modules", "site-packages", "venv", "build", "dist"))


@lru_cache(maxsize=64)
def _project_config_roots(root: str) -> tuple[str, ...]:
    """The conf-like folders (``configs``, ``conf``, ...) anywhere under the
    project's root, outermost only, walked once per root (at most
    ``_MAX_DIRS`` folders)."""
    out = []
    count = 0
    for directory, dirs, _files in os.walk(root):
        count += 1
        if count > _MAX_DIRS:
            break
        keep = []
        for name in sorted(dirs):
            if name.startswith(".") or name in _SKIP_DIRS:
                continue
            if _CONF_NAME.match(name):
                out.append(os.path.join(directory, name))  # scanned whole by _scan_tree; not walked again
            else:
                keep.append(name)
        dirs[:] = keep
    return tuple(out)


def _names_class(dotted: str, module_path: str, cls_name: str) -> bool:
    """``pkg.lit.VAE`` names the class ``VAE`` of ``.../pkg/lit.py``; so does
    ``pkg.VAE`` when ``pkg/__init__.py`` re-exports it (``from .lit import VAE``)."""
    module, _, name = dotted.rpartition(".")
    if not module or name != cls_name:
        return False
    module = "/" + module.replace(".", "/")
    if module_path.endswith(module):
        return True
    package = os.path.dirname(module_path)
    return package.endswith(module) and _reexports(package, cls_name)


def _reexports(package: str, cls_name: str) -> bool:
    text = _read_text(os.path.join(package, "__init__.py")) or ""
    # one line, or a parenthesised list over several (`from .base import (\n    VAE,\n)`)
    return re.search(rf"^\s*from\s+\.\w+\s+import\s+(?:\([^)]*|[^#\n]*)\b{re.escape(cls_name)}\b",
                     text, re.M) is not None


def _top_entry(path: str, param: str, targets: tuple) -> list[tuple[str, str]]:
    text = _read_text(path) or ""
    group = _defaults_choice(text, param)
    if group is not None:
        return [("group", group)]  # defaults: [- arch: e3conv]: the group's config fills `arch`
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match is None or match.group(1) or match.group(2) != param:
            continue
        value = (match.group(3) or "").split(" #")[0].strip()
        if not value:
            return [("target", dotted) for indent, parent, dotted in targets if indent > 0 and parent == param]
        group = _INTERPOLATION.match(value)
        return [("group", group.group(1))] if group is not None else []
    return []


_DEFAULTS_ITEM = re.compile(
    r"""^\s+-\s+(?:override\s+)?['"]?/?((?:[\w\-]+/)*[A-Za-z_][\w\-]*)(?:@([\w\-.]+))?['"]?\s*:\s*(\S[^#]*?)?\s*(?:#.*)?$""")


def _defaults_choice(text: str, param: str) -> Optional[str]:
    """Does the config's top-level ``defaults:`` list pick an option of the
    group ``param`` (``- arch: e3conv.yaml``, ``- /model/arch: e3conv``,
    ``- override arch: ophiuchus``, ``- encoders@arch: gcn``; not ``- arch:
    null``)? Hydra composes that option's config under the key ``param``
    (the group's last part, or the ``@`` package). The group (its last
    part: ``candidates`` finds its folder), or None."""
    inside = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[:1].isspace() and not line.startswith("-"):
            inside = line.split(":")[0].strip() == "defaults"
            continue
        match = _DEFAULTS_ITEM.match(line) if inside else None
        if match is None:
            continue
        group = match.group(1).split("/")[-1]
        key = (match.group(2) or group).split(".")[-1]
        if key == param and (match.group(3) or "null") != "null":
            return group
    return None


# a whole scalar value of a YAML / JSON / TOML config: `name: painn`, `"model": "painn",`,
# `model = "painn"`, `- painn` (a list item), `[painn, schnet]` (a flow list)
_VALUE = re.compile(r"""(?:^[ \t]*-[ \t]+|[:=\[,][ \t]*)['"]?([A-Za-z_][\w.\-]*)['"]?[ \t]*(?=[,}\]#\r\n]|$)""", re.M)
_CONFIG_EXT = (".yaml", ".yml", ".json", ".toml")


def named_in_configs(importer: str, names: frozenset) -> frozenset:
    """Which of ``names`` (a registry's registered names) the configs nearest
    ``importer`` name as a whole value: the conf-like folders (``configs/``,
    ``conf/``) of its folder, then of each parent up to the project's root;
    the first folder whose configs name one of them answers (a vendored
    library's configs further up do not widen the project's own)."""
    for folder in _folders_up(importer):
        hits = frozenset(v for root in _conf_dirs(folder) for v in _config_values(root) if v in names)
        if hits:
            return hits
    return frozenset()


@lru_cache(maxsize=1024)
def _conf_dirs(folder: str) -> tuple[str, ...]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    return tuple(os.path.join(folder, n) for n in names
                 if _CONF_NAME.match(n) and os.path.isdir(os.path.join(folder, n)))


@lru_cache(maxsize=256)
def _config_values(root: str) -> frozenset:
    """Every whole scalar value of the config files under ``root``, read once per run."""
    out: set = set()
    for path in _walk_configs(root, _CONFIG_EXT):
        text = _read_text(path)
        if text:
            out.update(_VALUE.findall(text))
    return frozenset(out)
