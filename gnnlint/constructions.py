"""Can another file's construction of a class turn its default-``False`` switch on? (read from bytes)

A class takes an opt-in switch, off by default, and the project builds it without it::

    # nets.py                                           # model.py (compiled by train.py)
    class Normalizer(nn.Module):                        self.node_norm = Normalizer(size=4, zscore=True)
        def __init__(self, size=None, zscore=False, scale_by_max=False): ...
        def forward(self, x):
            if self.scale_by_max:                       # never runs: nothing turns it on
                batch_max = x[x != 0].abs().max()

The defining file tells which switches no construction of its own turns on (``ctor_switches``,
semantic/default_off_flags.py); ``switch_maybe_on`` reads every other project file's bytes and answers
whether one of them may pass it. It may when the file names the switch at all (a keyword, a config key, a
subclass's ``super().__init__``), or names the class other than in an import line or a call
``Class(...)`` (a subclass, an alias, a registry, a string naming it; not a word of a message), or a call passes ``*args`` / ``**kwargs`` or
enough positional arguments to reach the switch's position. Cheap: a word search first, a small
bracket scan of the calls only in files naming the class.
"""
from __future__ import annotations

import re

_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b(?:[ \t]*\([^)]*\)|[^\n]*)", re.M)
_QUOTES = b"'\""


def switch_maybe_on(data: bytes, cls: str, flag: str, position: int, registered: bool = True) -> bool:
    """True when this file's bytes may construct ``cls`` with ``flag`` on (``position``: the switch's
    index among ``__init__``'s positional parameters after ``self``; -1 for keyword-only).

    ``registered``: the class may be built without its name (a decorator registers it), so any file naming
    the switch may turn it on. Otherwise a file not naming the class builds it only through a subclass, an
    alias or a registry that a file naming it makes (that file answers True), and a file naming it turns the
    switch on in its calls: the same keyword handed to another class (``ProductBasis(symmetric=True)`` next
    to ``WeightedTP(...)``) does not."""
    word = flag.encode()
    if registered and re.search(rb"\b%s\b" % re.escape(word), data):
        return True
    if re.search(rb"(?<!\bself)\.%s[ \t]*=(?!=)|['\"]%s['\"]" % (re.escape(word), re.escape(word)), data):
        return True  # set after construction (`tp.flag = True`, not another class's `self.flag = flag`), a key
    name = cls.encode()
    if name not in data:
        return False
    imports = [m.span() for m in _IMPORT_LINE.finditer(data)]
    # a class of its own of the same name, ours never imported: its bare calls build that one
    own = re.search(rb"\bclass[ \t]+%s\b" % re.escape(name), data) is not None \
        and not any(re.search(rb"\b%s\b" % re.escape(name), data[a:b]) for a, b in imports)
    for match in re.finditer(rb"\b%s\b" % re.escape(name), data):
        start, end = match.span()
        if any(a <= start < b for a, b in imports):
            continue
        line_start = data.rfind(b"\n", 0, start) + 1
        if data[line_start:start].lstrip().startswith(b"#"):
            continue  # a comment
        head = data[line_start:start]
        if _in_all_list(data, start):
            continue  # `__all__ = ["Normalizer", ...]`: an export list names it, builds nothing
        if head.count(b'"') % 2 or head.count(b"'") % 2:
            opened = head[max(head.rfind(b'"'), head.rfind(b"'")) + 1:]
            if data[end:end + 1] in _QUOTES and re.fullmatch(rb"[\w.]*", opened):
                return True  # a string naming it (a registry key, a config target `pkg.nets.Normalizer`)
            continue  # a word of a message (`print("Node Normalizer", ...)`)
        if own and not head.endswith(b"."):
            continue  # the file's own class (`pkg.models.Normalizer(...)` still names ours)
        if re.search(rb"\b(?:class|def)[ \t]+$", head):
            return True  # another definition of the name
        rest = data[end:end + 200].lstrip(b" \t")
        if not rest.startswith(b"("):
            return True  # a reference: a base class, an alias, `partial(Class, ...)`
        args = _call_args(data, data.index(b"(", end))
        if args is None:
            return True
        positional = 0
        for arg in args:
            if arg.startswith(b"*") or re.match(rb"%s[ \t\r\n]*=(?!=)" % re.escape(word), arg):
                return True
            if not re.match(rb"[A-Za-z_]\w*[ \t\r\n]*=(?!=)", arg):
                positional += 1
        if position >= 0 and positional > position:
            return True
    return False


_ALL_LIST = re.compile(rb"^__all__[ \t]*\+?=[ \t]*[\[(]", re.M)


def _in_all_list(data: bytes, at: int) -> bool:
    """``at`` lies inside the brackets of a module-level ``__all__ = [...]`` (or ``+=``, a tuple)."""
    for match in _ALL_LIST.finditer(data, 0, at):
        close = data.find(b")" if data[match.end() - 1:match.end()] == b"(" else b"]", match.end())
        if close < 0 or at < close:
            return True
    return False


def _call_args(data: bytes, open_at: int):
    """The stripped top-level arguments of the call whose ``(`` is at ``open_at``, or None if unreadable."""
    depth, quote, args, start = 0, None, [], open_at + 1
    i, end = open_at, min(len(data), open_at + 5000)
    while i < end:
        c = data[i:i + 1]
        if quote is not None:
            if c == b"\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in (b"'", b'"'):
            quote = c
        elif c == b"#":
            newline = data.find(b"\n", i)
            i = end if newline < 0 else newline
            continue
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                args.append(data[start:i].strip())
                return [a for a in args if a]
        elif c == b"," and depth == 1:
            args.append(data[start:i].strip())
            start = i + 1
        i += 1
    return None


def decorated_class(data: bytes, cls: str) -> bool:
    """The defining file decorates ``class <cls>`` (a registry may build it by another name)."""
    return re.search(rb"^[ \t]*@[^\n]*\n(?:[ \t]*(?:@|#)[^\n]*\n)*[ \t]*class[ \t]+%s\b" % re.escape(cls.encode()),
                     data, re.M) is not None
