"""Where a compile-site finding points and how a fix adds a keyword to it
(shared by the compile-site rules: GNN006, GNN007)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.rules.base import NodeEdit


def compile_report_node(site_node: cst.CSTNode) -> cst.CSTNode:
    """Where a compile-site finding points: the call, or the decorator expression."""
    return site_node.decorator if isinstance(site_node, cst.Decorator) else site_node


def add_keyword_edit(context, site_node: cst.CSTNode, keyword: str, value: str) -> Optional[NodeEdit]:
    """An edit that passes ``keyword=value`` to a compile site (None when the
    call forwards ``**kwargs``, which might already hold it)."""
    if isinstance(site_node, cst.Decorator) and not isinstance(site_node.decorator, cst.Call):
        text = context.module.code_for_node(site_node.decorator)
        return NodeEdit(site_node.decorator, f"{text}({keyword}={value})")
    call = context.compile_call_node(site_node)
    if call is None:
        return None
    if any(arg.star == "**" for arg in call.args):
        return None
    if not call.args:
        return NodeEdit(call, f"{context.module.code_for_node(call.func)}({keyword}={value})")
    return NodeEdit(call.args[-1].value, f", {keyword}={value}", where="after")
