"""The shared answers of semantic/names.py that other analyses ask (issue 14:
no question answered in two places): ``reaching`` (which bindings reach a use,
in its two readings) and ``callers_of`` (who calls a local function, with and
without aliases)."""
from __future__ import annotations


import libcst as cst

from gnnlint.context import FileContext
from tests.file_contexts import context_of




def _use(ctx: FileContext, name: str, call: str) -> cst.Name:
    """The argument ``name`` of the last call of ``call``."""
    found = [c for c in ctx.all_calls() if ctx.dotted(c.func) == call]
    arg = found[-1].args[0].value
    assert isinstance(arg, cst.Name) and arg.value == name
    return arg


def _values(ctx: FileContext, name: str, at: cst.CSTNode, **kw) -> list[str]:
    return sorted(ctx.module.code_for_node(b.value) for b, _scope in ctx.reaching(name, at, **kw))


def test_reaching_may_follows_conditional_rebinding_back():
    ctx = context_of("""
        x = a
        if c:
            x = b
        use(x)
    """)
    at = _use(ctx, "x", "use")
    assert _values(ctx, "x", at) == ["a", "b"]
    # the conservative reading: `x = b` may overwrite `x = a`, which is not surely the value
    assert _values(ctx, "x", at, exclusive_only=True) == ["b"]


def test_reaching_both_branches_of_an_if():
    ctx = context_of("""
        if c:
            x = a
        else:
            x = b
        use(x)
    """)
    at = _use(ctx, "x", "use")
    assert _values(ctx, "x", at) == ["a", "b"]
    assert _values(ctx, "x", at, exclusive_only=True) == ["a", "b"]


def test_reaching_stops_at_an_unconditional_rebinding():
    ctx = context_of("""
        x = a
        x = b
        use(x)
    """)
    at = _use(ctx, "x", "use")
    assert _values(ctx, "x", at) == ["b"]
    assert _values(ctx, "x", at, exclusive_only=True) == ["b"]
    assert ctx.reaching("nothing", at) == []


def _callers(ctx: FileContext, func: str, **kw) -> list[str]:
    info = next(f for f in ctx.func_info.values() if f.qualname == func)
    return [ctx.module.code_for_node(c) for c in ctx.callers_of(info, **kw)]


def test_callers_of_aliases_only_when_asked():
    ctx = context_of("""
        import torch
        def train_a(m): pass
        def train_b(m): pass
        train = train_a if fast else train_b
        step = torch.compile(train_a)
        train_a(1)
        train(2)
        step(3)
    """)
    assert _callers(ctx, "train_a") == ["train_a(1)", "step(3)"]
    assert _callers(ctx, "train_a", through_aliases=True) == ["train_a(1)", "train(2)"]
    assert _callers(ctx, "train_b", through_aliases=True) == ["train(2)"]


def test_callers_of_methods_on_instances():
    ctx = context_of("""
        class Base:
            def encode(self, x): pass
            def forward(self, x):
                return self.encode(x)
        class Child(Base):
            pass
        b = Base()
        c = Child()
        b.encode(1)
        c.encode(2)
    """)
    assert _callers(ctx, "Base.encode") == ["self.encode(x)", "b.encode(1)"]
    # through a subclass instance too when values are followed
    assert _callers(ctx, "Base.encode", through_aliases=True) == ["self.encode(x)", "b.encode(1)", "c.encode(2)"]


def test_reaching_comprehension_element_reads_its_target():
    # the element is written before its `for` clause, but runs after it binds the target
    ctx = context_of("""
        x = a
        ys = [use(x) for x in xs]
    """)
    assert _values(ctx, "x", _use(ctx, "x", "use")) == ["xs"]
    ctx = context_of("""
        x = a
        zs = [x for x in use(x)]
    """)
    assert _values(ctx, "x", _use(ctx, "x", "use")) == ["a"]  # the iterable is read before the target is bound


def _sole(ctx: FileContext, name: str, at: cst.CSTNode, how=None):
    binding = ctx.sole_binding(name, at, how)
    return None if binding is None else (binding.how, ctx.module.code_for_node(binding.value) if binding.value else None)


def test_sole_binding_one_assignment_reaches():
    ctx = context_of("""
        x = a
        x = b
        use(x)
    """)
    at = _use(ctx, "x", "use")
    assert _sole(ctx, "x", at) == ("assign", "b")
    assert _sole(ctx, "x", at, "assign") == ("assign", "b")
    assert _sole(ctx, "x", at, "param") is None  # one binding, another kind


def test_sole_binding_none_when_a_conditional_rebinding_may_reach():
    # the may reading of reaching: `x = a` or `x = b` -- no single value
    ctx = context_of("""
        x = a
        if c:
            x = b
        use(x)
    """)
    assert _sole(ctx, "x", _use(ctx, "x", "use")) is None
    ctx = context_of("""
        if c:
            x = a
        else:
            x = b
        use(x)
    """)
    assert _sole(ctx, "x", _use(ctx, "x", "use")) is None
    ctx = context_of("""
        use(x)
    """)
    assert _sole(ctx, "x", _use(ctx, "x", "use")) is None  # nothing bound here


def test_sole_binding_a_parameter_of_a_method_and_of_a_function():
    ctx = context_of("""
        class Net:
            def forward(self, graph):
                run(graph)
        def step(batch, flag=False):
            if flag:
                batch = batch.to("cpu")
            use(batch)
    """)
    assert _sole(ctx, "graph", _use(ctx, "graph", "run"), "param") == ("param", None)
    # rebound under a branch: the parameter or the copy may reach
    assert _sole(ctx, "batch", _use(ctx, "batch", "use"), "param") is None
