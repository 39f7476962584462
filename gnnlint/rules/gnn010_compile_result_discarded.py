from __future__ import annotations

import libcst as cst

from gnnlint.rules.base import FixSpec, Invalid, NodeEdit, Rule, Valid
from gnnlint.versions import matches

# PyG versions in which torch_geometric.compile is deprecated
_DEPRECATED_SINCE = ">=2.5"


class CompileResultDiscarded(Rule):
    """
    ## What it does
    Flags `torch.compile(model)` used as a bare statement, whose result is
    thrown away, and calls to the deprecated `torch_geometric.compile`.

    ## Why is this bad?
    `torch.compile` does not change the module it is given: it returns a new,
    compiled callable. A bare `torch.compile(model)` compiles nothing — the
    program keeps running the eager `model` and the speed-up never comes.
    (`model.compile()`, the in-place method, is fine.)

    `torch_geometric.compile` was a thin wrapper kept for old PyG versions; it
    is deprecated since PyG 2.5 in favour of `torch.compile`, so it is flagged
    only when the target PyG version is 2.5 or newer (on older versions it
    still does work of its own and is not replaced), and not in a fallback
    that a version test chose instead of `torch.compile`
    (`if pyg_full_compile(): torch.compile(model) else: torch_geometric.compile(...)`):
    that branch runs only on the older versions.

    ## Example
    ```python
    model = GCN(16, 32, 7)
    torch.compile(model, dynamic=True)
    ```

    ## Use instead
    ```python
    model = GCN(16, 32, 7)
    model = torch.compile(model, dynamic=True)
    ```

    ## Fix safety
    Safe: assigning the result back to the name that was passed
    (`model = torch.compile(model)`) makes later uses of `model` run the
    compiled module, which is what the statement meant. Only offered when the
    argument is a plain name or `self.<attr>`, and not when the same function
    compiles that model again later (`torch.compile(model)` then
    `m = torch.compile(model, dynamic=True)`): assigning the first back would
    make the second compile the wrapper; delete the dead statement instead. Replacing `torch_geometric.compile(`
    by `torch.compile(` is safe (same arguments, same behaviour) when `torch` is
    imported under that name.

    ## References
    - [torch.compile](https://pytorch.org/docs/stable/generated/torch.compile.html)
    - [PyG: compiled GNNs](https://pytorch-geometric.readthedocs.io/en/latest/advanced/compile.html)
    """

    code = "GNN010"
    name = "compile-result-discarded"
    severity = "error"  # the model is never compiled: everything runs eagerly
    summary = "`torch.compile(model)` whose result is discarded, or deprecated `torch_geometric.compile`"
    region = "compiled"
    triggers = (b"compile",)
    fix_applicability = "safe"

    VALID = (
        Valid("""
import torch
model = torch.compile(model)
"""),
        Valid("""
import torch
model.compile()
compiled = torch.compile(model, dynamic=True)
"""),
        Valid("""
import re
re.compile("x")
"""),
    )
    INVALID = (
        Invalid("""
import torch
torch.compile(model, dynamic=True)
""", lines=(3,), expected_fix="""
import torch
model = torch.compile(model, dynamic=True)
"""),
        Invalid("""
import torch as T
class M:
    def setup(self):
        T.compile(self.encoder)
""", lines=(5,), expected_fix="""
import torch as T
class M:
    def setup(self):
        self.encoder = T.compile(self.encoder)
"""),
        # compiled again below: assigning this one back would compile the wrapper, so no fix
        Invalid("""
import torch
def run(model, loader):
    torch.compile(model)
    m = torch.compile(model, dynamic=True)
    for d in loader:
        m(d.x, d.edge_index)
""", lines=(4,), expected_fix="""
import torch
def run(model, loader):
    torch.compile(model)
    m = torch.compile(model, dynamic=True)
    for d in loader:
        m(d.x, d.edge_index)
"""),
        # not deprecated before PyG 2.5: nothing to report
        Invalid("""
import torch
import torch_geometric
model = torch_geometric.compile(model)
""", lines=(), options=(("pyg_version", "2.4.0"),)),
        Invalid("""
import torch
import torch_geometric
model = torch_geometric.compile(model)
""", lines=(4,), expected_fix="""
import torch
import torch_geometric
model = torch.compile(model)
"""),
        Invalid("""
from torch_geometric import compile
compile(model)
""", lines=(3,)),
        # a fallback for the PyG versions a version test turned torch.compile down for: not deprecated there
        Invalid("""
import torch
import torch_geometric
from .utils import check_pyg_full_compile

class Net(torch.nn.Module):
    def get_compile(self, **kwargs):
        if check_pyg_full_compile():
            return torch.compile(self, **kwargs)
        else:
            self.compile_submodules(**kwargs)
            return self

    def compile_submodules(self, **kwargs):
        self.encoder = torch_geometric.compile(self.encoder, **kwargs)
        if torch_geometric.__version__ < "2.5":
            self.decoder = torch_geometric.compile(self.decoder)
        else:
            self.decoder = torch.compile(self.decoder)
""", lines=()),
        # a choice of models, not of versions: still deprecated
        Invalid("""
import torch
import torch_geometric
if args.model == "gcn":
    net = torch_geometric.compile(GCN())
else:
    net = torch.compile(CNN())
""", lines=(5,)),
    )

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        api = self.context.resolve(call.func)
        if api not in ("torch.compile", "torch_geometric.compile") or not self.context.compile_result_discarded(call):
            return
        target = call.args[0].value
        text = self.context.module.code_for_node(target)
        fix = None
        new_call = self._torch_compile_call(call) or call
        assignment = f"{text} = {self.context.module.code_for_node(new_call)}"
        if self._compiled_again(call, text):
            self.report(call, f"The result of `{self.context.module.code_for_node(call.func)}({text})` is "
                              f"discarded, so this statement compiles nothing; `{text}` is compiled again below. "
                              f"Delete it (assigning it back would make the later compile wrap the wrapper).")
            return
        if isinstance(target, cst.Name) or (
                isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            replacement = cst.Assign(targets=[cst.AssignTarget(target=target)], value=new_call)
            fix = FixSpec("safe", f"Assign the result: `{assignment}`", (NodeEdit(node, replacement),))
        self.report(call, f"The result of `{self.context.module.code_for_node(call.func)}({text})` is "
                          f"discarded, so `{text}` is never compiled. Assign it: `{assignment}`.", fix)

    def _compiled_again(self, call: cst.Call, text: str) -> bool:
        """A later compile of the same model in the same function (``torch.compile(model)`` then
        ``m = torch.compile(model, dynamic=True)``): assigning the first back would make the second
        compile the wrapper. The statement is dead, not misplaced: no fix."""
        ctx = self.context
        scope = ctx.enclosing_function(call)
        return any(node is not call and site.target == text and ctx.enclosing_function(node) is scope
                   and ctx.order.get(node, 0) > ctx.order.get(call, 0)
                   for node, site in ctx.compile_sites)

    def _deprecated(self) -> bool:
        return matches(_DEPRECATED_SINCE, self.context.options.pyg_version)

    def visit_Call(self, node: cst.Call) -> None:
        if self.context.resolve(node.func) != "torch_geometric.compile" or not self._deprecated():
            return
        parent = self.context.parent.get(node)
        if isinstance(parent, cst.Expr):
            return  # reported as a discarded result, with the combined fix
        if self.context.version_fallback(node):
            return  # runs only on the older versions a version test sent away from torch.compile
        new_call = self._torch_compile_call(node)
        fix = FixSpec("safe", "Use `torch.compile`", (NodeEdit(node.func, new_call.func),)) if new_call else None
        instead = self.context.module.code_for_node(new_call.func) if new_call else "torch.compile"
        self.report(node, f"`torch_geometric.compile` is deprecated since PyG 2.5. Call `{instead}` directly.", fix)

    def _torch_compile_call(self, call: cst.Call):
        """``call`` rewritten to use torch.compile, if torch is imported by a name."""
        if self.context.resolve(call.func) != "torch_geometric.compile" or not self._deprecated():
            return call
        for local, full in self.context.aliases.items():
            if full == "torch":
                return call.with_changes(func=cst.Attribute(cst.Name(local), cst.Name("compile")))
        return None
