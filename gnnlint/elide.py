"""Big constant tables, emptied before libcst parses a large file.

libcst needs ~570 bytes of memory per source byte of ordinary code, and far
more for numeric tables: torch's ``sparse/_triton_ops_meta.py`` (500 KB, one
6,800-line dict of tuples of numbers) peaks at ~700 MB in
``libcst.parse_module``. No rule can report inside a literal made only of
constants and dotted names of imported modules (``torch._C.foo``: no call, no
subscript, no local variable in it), so in a large file each such literal of
many lines is replaced by an empty one of the same extent:

    TABLE = {                          TABLE = {
        ("bsr", (16, 16)): (1, 2),
        ...                      ->
        ("bsr", (32, 32)): (4, 8),
    }                                  }

The replacement keeps every newline and pads the last line to the closing
bracket's column, so every position after the literal -- and therefore every
finding, noqa comment and fix edit -- is the same as in the original file.
The C parser finds the literals: ~0.2 s and ~110 MB for that file, against
~3 s and ~700 MB for libcst. torch's ``annotated_fn_args.py`` (530 KB, a dict
keyed by ``torch._C._VariableFunctions.*``) drops from 378 MB to ~80 MB.
"""
from __future__ import annotations

import ast

# Only files this large pay for the extra C-parser pass.
MIN_FILE_BYTES = 128 * 1024
# Only literals this tall are worth replacing (and no realistic config dict
# that a fix could need to edit is this big and free of calls).
MIN_LITERAL_LINES = 50

_BRACKETS = {ast.Dict: (b"{", b"}"), ast.List: (b"[", b"]"), ast.Tuple: (b"(", b")")}


def elide_constant_tables(data: bytes, tree: "ast.Module | None" = None) -> bytes:
    """``data`` with its big all-constant dict/list/tuple literals emptied
    (positions outside them unchanged), or ``data`` itself when there are
    none, the file is small, not UTF-8, or does not compile. ``tree``: the
    file's ``ast``, when the caller has already parsed it."""
    if len(data) < MIN_FILE_BYTES or b"\n" not in data:
        return data
    try:
        data.decode("utf-8")  # ast's columns are UTF-8 offsets: other codecs are left alone
        if tree is None:
            tree = compile(data, "<elide>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, RecursionError):
        return data
    spans: list = []
    modules = {alias.asname or alias.name.split(".")[0]
               for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    try:
        _collect(tree, spans, modules)
    except RecursionError:
        return data
    if not spans:
        return data
    line_starts = [0]
    position = data.find(b"\n")
    while position >= 0:
        line_starts.append(position + 1)
        position = data.find(b"\n", position + 1)
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    out, done = [], 0
    for node in sorted(spans, key=lambda n: (n.lineno, n.col_offset)):
        start = line_starts[node.lineno - 1] + node.col_offset
        end = line_starts[node.end_lineno - 1] + node.end_col_offset
        opening, closing = _BRACKETS[type(node)]
        if data[start:start + 1] != opening or data[end - 1:end] != closing:
            continue  # a tuple without parentheses: leave it
        last_line_prefix = data[line_starts[node.end_lineno - 1]:end - 1].decode("utf-8")
        out += [data[done:start], opening, newline * (node.end_lineno - node.lineno),
                b" " * len(last_line_prefix), closing]
        done = end
    out.append(data[done:])
    return b"".join(out)


def _collect(node: ast.AST, spans: list, modules: set) -> None:
    """The outermost tall all-constant container literals under ``node``."""
    for child in ast.iter_child_nodes(node):
        if type(child) in _BRACKETS and child.end_lineno - child.lineno + 1 >= MIN_LITERAL_LINES \
                and _all_constant(child, modules):
            spans.append(child)
        else:
            _collect(child, spans, modules)


def _all_constant(node: ast.AST, modules: set) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute):  # torch._C.foo, rooted at an imported module
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in modules
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _all_constant(node.operand, modules)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_all_constant(e, modules) for e in node.elts)
    if isinstance(node, ast.Dict):
        # a None key is `**mapping`
        return all(k is not None and _all_constant(k, modules) for k in node.keys) and \
            all(_all_constant(v, modules) for v in node.values)
    return False
