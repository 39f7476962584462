"""Target torch / torch_geometric versions, without importing either.

Rules declare the versions their hazard exists in as specifiers
(``">=2.0,<2.4"``); the target comes from config/CLI, else the installed
distributions' metadata, else "newest" (every specifier with no upper bound
matches, and one with an upper bound does not).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

_NUM = re.compile(r"\d+")


def parse_version(text: str) -> tuple[int, ...]:
    """'2.13.0+cpu' -> (2, 13, 0); '2.8' -> (2, 8, 0)."""
    core = text.strip().split("+")[0]
    parts = []
    for piece in core.split(".")[:3]:
        match = _NUM.match(piece)
        parts.append(int(match.group()) if match else 0)
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


@lru_cache(maxsize=None)
def installed_version(distribution: str) -> Optional[str]:
    """The installed distribution's version, from the name of its
    ``.dist-info`` / ``.egg-info`` folder on ``sys.path`` (what
    importlib.metadata finds, without its ~15 ms import: every run asks,
    a warm one-file run included)."""
    import os
    import sys

    want = distribution.lower().replace("-", "_")
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            stem = name.rsplit(".", 1)[0]
            dist, _, version = stem.partition("-")
            if dist.lower().replace("-", "_").replace(".", "_") == want and version:
                return version.split("-py")[0]
    return None


@lru_cache(maxsize=256)  # asked for every rule of every file's prefilter with the same few strings
def matches(spec: str, version: Optional[str]) -> bool:
    """Whether ``version`` satisfies every clause of ``spec`` (comma-separated
    ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``). ``version`` None = newest."""
    if not spec.strip():
        return True
    for clause in spec.split(","):
        clause = clause.strip()
        match = re.match(r"(<=|>=|==|!=|<|>)\s*(.+)", clause)
        if not match:
            raise ValueError(f"bad version specifier {clause!r}")
        op, bound_text = match.groups()
        if version is None:
            # "newest": lower bounds hold, upper bounds and pins do not.
            if op in ("<", "<=", "=="):
                return False
            continue
        have, bound = parse_version(version), parse_version(bound_text)
        ok = {
            "<": have < bound, "<=": have <= bound, ">": have > bound,
            ">=": have >= bound, "==": have == bound, "!=": have != bound,
        }[op]
        if not ok:
            return False
    return True


def is_valid_version(text: str) -> bool:
    return bool(re.match(r"^\d+(\.\d+){0,2}([.+a-z0-9]*)$", text.strip()))


# ---------------------------------------------------------------------- declared
# Names a project may declare torch / torch_geometric under (pip, conda).
_DECLARED_NAMES = {
    "torch": ("torch", "pytorch"),
    "torch_geometric": ("torch-geometric", "torch_geometric", "pyg"),
}
_REQ_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")
_LOWER_RE = re.compile(r"(?<![<>!=~])(>=|~=|===|==|>|\^|~|=)\s*v?(\d+(?:\.\d+)*)")


def lowest_allowed(spec: str) -> Optional[str]:
    """The lowest version a requirement's specifier allows: '>=2.2,<3' ->
    '2.2'; '==2.4.*' -> '2.4'; conda's '=2.4' and poetry's '^2.4' too; None
    when it has no lower bound ('<3', nothing)."""
    spec = spec.split(";")[0].split("#")[0]
    found = [m.group(2) for m in _LOWER_RE.finditer(spec)]
    if not found:
        return None
    return min(found, key=parse_version)


def _requirement_lines(text: str):
    for line in text.splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith(("#", "-")):
            yield line


def _declared_in(root: str, distribution: str) -> list[tuple[str, str]]:
    """(lowest allowed version, where) for every declaration of
    ``distribution`` in the project's files at ``root``."""
    import glob
    import os

    names = {n.lower().replace("_", "-") for n in _DECLARED_NAMES.get(distribution, (distribution,))}
    out: list[tuple[str, str]] = []

    def consider(requirement: str, where: str) -> None:
        match = _REQ_RE.match(requirement.strip().strip("'\""))
        if not match:
            return
        name = match.group(1).split("::")[-1].lower().replace("_", "-")
        if name not in names:
            return
        version = lowest_allowed(match.group(2))
        if version is not None:
            out.append((version, f"{requirement.strip()!r} in {where}"))

    pyproject = os.path.join(root, "pyproject.toml")
    if os.path.isfile(pyproject):
        try:
            import tomllib

            with open(pyproject, "rb") as fh:
                doc = tomllib.load(fh)
        except (OSError, ValueError):
            doc = {}
        project = doc.get("project") if isinstance(doc.get("project"), dict) else {}
        for req in project.get("dependencies") or []:
            if isinstance(req, str):
                consider(req, "pyproject.toml [project] dependencies")
        for extra, reqs in (project.get("optional-dependencies") or {}).items():
            for req in reqs if isinstance(reqs, list) else []:
                if isinstance(req, str):
                    consider(req, f"pyproject.toml [project.optional-dependencies] {extra}")
        poetry = ((doc.get("tool") or {}).get("poetry") or {})
        for table in ("dependencies", "dev-dependencies"):
            for name, value in (poetry.get(table) or {}).items():
                version = value.get("version") if isinstance(value, dict) else value
                if isinstance(version, str):
                    spec = version if version[:1] in "<>=^~!" else f"=={version}"
                    consider(f"{name}{spec}", f"pyproject.toml [tool.poetry.{table}]")
    for path in sorted(glob.glob(os.path.join(root, "requirements*.txt"))
                       + glob.glob(os.path.join(root, "requirements", "*.txt"))):
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for line in _requirement_lines(text):
            consider(line, os.path.relpath(path, root))
    for name in ("environment.yml", "environment.yaml"):
        path = os.path.join(root, name)
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for line in text.splitlines():  # "  - pytorch=2.4", "  - pytorch::pytorch>=2.2", pip's "- torch==2.4"
            item = re.match(r"^\s*-\s+([^\s:#][^#]*?)\s*$", line) or re.match(r"^\s*-\s+(\w+::[^#]*?)\s*$", line)
            if item:
                consider(item.group(1), name)
    path = os.path.join(root, "setup.cfg")
    if os.path.isfile(path):
        import configparser

        parser = configparser.ConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError):
            parser = None
        if parser is not None:
            if parser.has_option("options", "install_requires"):
                for line in _requirement_lines(parser.get("options", "install_requires")):
                    consider(line, "setup.cfg [options] install_requires")
            if parser.has_section("options.extras_require"):
                for extra, value in parser.items("options.extras_require"):
                    for line in _requirement_lines(value):
                        consider(line, f"setup.cfg [options.extras_require] {extra}")
    return out


@lru_cache(maxsize=None)
def target_version(distribution: str, root: str) -> tuple[Optional[str], str]:
    """The version to warn for when the config does not set one, and where it
    came from: the installed distribution's metadata, else the lowest version
    the project at ``root`` allows in its declared dependencies (a pre-commit
    environment has no torch; ruff reads requires-python the same way), else
    None (newest)."""
    installed = installed_version(distribution)
    if installed is not None:
        return installed, f"installed {distribution} {installed} (its metadata)"
    declared = _declared_in(root, distribution)
    if declared:
        version, where = min(declared, key=lambda d: parse_version(d[0]))
        return version, f"lowest allowed by {where}"
    return None, "not set, not installed, not declared: the newest"


# The versions the rules' measured costs come from (shared/evidence).
MEASURED_TORCH = (2, 13)


def measured_torch(version: Optional[str]) -> bool:
    """Whether a message may state what torch 2.13 was measured to do: the
    target is torch 2.13 (or unknown, i.e. the newest)."""
    return version is None or parse_version(version)[:2] == MEASURED_TORCH


def torch_label(version: Optional[str]) -> str:
    """'torch 2.4' for a target version, 'torch 2.13' when unknown."""
    if version is None:
        return "torch %d.%d" % MEASURED_TORCH
    major, minor, _ = parse_version(version)
    return f"torch {major}.{minor}"



MEASURED_PYG = (2, 8)


def measured(torch_version: Optional[str], pyg_version: Optional[str] = None) -> bool:
    """Whether a message may cite the measured numbers (torch 2.13 + PyG
    2.8.1, ``shared/evidence/torch-2.13-pyg-2.8.1``): the target torch and
    PyG are those versions, or unknown (the newest)."""
    return measured_torch(torch_version) and (
        pyg_version is None or parse_version(pyg_version)[:2] == MEASURED_PYG)


def recompile_limit_name(version: Optional[str]) -> str:
    """dynamo's limit on recompiles of one frame, as the target version names
    it: ``recompile_limit`` from torch 2.6, ``cache_size_limit`` before."""
    return "recompile_limit" if matches(">=2.6", version) else "cache_size_limit"
