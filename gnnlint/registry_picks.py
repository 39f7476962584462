"""Which registered names a registry lookup by a config name can pick.

``registry.get_model_class(cfg["name"])(...)`` compiled in a trainer reaches
the classes registered under that registry (semantic/registries.py). A
project that vendors a library registering dozens of models names only a few
of them: the whole values of the configs nearest the compiling file
(config_targets.named_in_configs) and the string literals of the compiling
file itself (an argparse ``choices=`` / ``default=``, a name passed in code).
When none of them names a registered class, every registered class stays
reachable. Asked by fact_joins.pull_compiled_params, which hands the picked
names on in the fact (``"<registry>.<getter>:@/painn,schnet"``).
"""
from __future__ import annotations

import re
from typing import Optional, Sequence

from gnnlint import config_targets

_LITERAL = re.compile(rb"""['"]([A-Za-z_][\w.\-]*)['"]""")


def picked_names(compiling: str, registry: str, every: Sequence[str], contents: Optional[dict], bytes_of,
                 memo: Optional[dict]) -> str:
    """The registered names of ``registry`` the project's configs or
    ``compiling``'s literals name, sorted and comma-joined; "" for all
    (``memo``: the run's, None outside one)."""
    names = memo.get(registry) if memo is not None else None
    if names is None:
        names = _registered(registry, every, contents, bytes_of)
        if memo is not None:
            memo[registry] = names
    if not names:
        return ""
    data = bytes_of(compiling, contents) or b""
    picks = set(config_targets.named_in_configs(compiling, names))
    picks.update(n for n in (m.decode() for m in _LITERAL.findall(data)) if n in names)
    return ",".join(sorted(picks))


def _registered(registry: str, every: Sequence[str], contents: Optional[dict], bytes_of) -> frozenset:
    """Every name registered with ``@<registry>.register*(...)`` in the project: the first
    literal argument (or ``name=``), else the decorated class's name."""
    mark = b"@" + registry.encode() + b".register"
    named = re.compile(rb"@%s\.register\w*\(\s*(?:name\s*=\s*)?['\"]([A-Za-z_][\w.\-]*)['\"]" % re.escape(registry.encode()))
    bare = re.compile(rb"@%s\.register\w*(?:\(\s*\))?[ \t]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*class[ \t]+(\w+)"
                      % re.escape(registry.encode()))
    out = set()
    for path in every:
        data = bytes_of(path, contents)
        if data is None or mark not in data:
            continue
        out.update(m.decode() for m in named.findall(data))
        out.update(m.decode() for m in bare.findall(data))
    return frozenset(out)
