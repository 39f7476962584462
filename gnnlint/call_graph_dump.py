"""Behind the flag ``GNNLINT_CALLGRAPH_DUMP=<dir>`` (default off): write each linted file's
call-graph summary and the lines today's regions cover, for ``bench/callgraph_diff.py``.

A file linted again in a later fact round overwrites its dump: the last one has the
project's facts. Nothing here changes findings.
"""
from __future__ import annotations

import hashlib
import json
import os

import libcst as cst

_HEADERS = {cst.If: "test", cst.While: "test", cst.For: "iter"}


def dump_file(folder: str, path: str, module: cst.Module, data: bytes, context) -> None:
    from gnnlint.engine import decode_source
    from gnnlint.positions import finder_for
    from gnnlint.semantic.summaries import summarize

    try:
        finder = finder_for(module, data, decode_source(data), context.parent)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        finder = None
    if finder is None:
        return

    def span(node):
        twin = finder.twin.get(node.body[0] if isinstance(node, cst.SimpleStatementLine) and node.body else node)
        return (twin.lineno, twin.end_lineno) if twin is not None else None

    today = {"c": [], "h": [], "d": []}
    for node in context.preorder:
        if isinstance(node, cst.SimpleStatementLine) and node.body:
            probe = node.body[0]
        elif type(node) in _HEADERS:
            probe = getattr(node, _HEADERS[type(node)])
        else:
            continue
        lines = span(node)
        if lines is None:
            continue
        first, last = lines if isinstance(node, cst.SimpleStatementLine) else (lines[0], lines[0])
        try:
            marks = (("c", context.compiled_region(probe)), ("h", context.hot_region(probe)),
                     ("d", context.step_drive(probe)))
        except Exception:  # a measurement: an analysis that fails on a shape says nothing here
            continue
        for key, why in marks:
            if why is not None:
                today[key].extend(range(first, last + 1))
    out = {"path": path, "summary": summarize(context, span), "today": today}
    name = hashlib.sha1(os.path.abspath(path).encode()).hexdigest() + ".json"
    with open(os.path.join(folder, name), "w") as handle:
        json.dump(out, handle)
