"""What GNN001 (host-sync) and GNN013 (step-host-sync) both look for: the
expressions that copy a tensor's value to the host. The two rules differ
only in where a sync costs something (``_flag``): a compiled region (a graph
break) or the per-step code of a loop that drives compiled code."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from gnnlint.context import BATCH, MODEL, SCALAR, TENSOR, UNKNOWN
from gnnlint.rules.base import Rule

# Methods that copy a tensor to the host. `.tolist()` also exists on numpy
# arrays and `.cpu()` on modules: the receiver's kind decides.
_SYNC_METHODS = {"item", "tolist", "cpu", "numpy"}
_CASTS = {"float", "int", "bool"}
_LOGGING_FUNCS = {"print"}
# metric loggers taking a dict of values (`wandb.log({"loss": loss})`), which read each value on the host
_METRIC_LOGGERS = {"wandb.log"}
# builtin min()/max(): compare their operands (or the elements of one iterable) with `>`, read as a bool
_BUILTIN_EXTREMA = {"min", "max"}
# PyG Data attributes that are tensors by convention
_DATA_TENSOR_ATTRS = {"x", "y", "edge_index", "edge_attr", "edge_weight", "batch", "ptr", "pos",
                      "n_id", "e_id", "train_mask", "val_mask", "test_mask", "edge_label", "edge_label_index"}
# comparisons of whole tensors that return a Python bool: computed on the device, read on the host
_BOOL_COMPARISONS = {"allclose", "equal"}
SYNC_TRIGGERS = (b"item(", b"tolist(", b"cpu(", b"numpy(", b"float(", b"int(", b"bool(",
                 b"if ", b"while ", b"assert ", b"print(", b'f"', b"f'", b"allclose(", b"equal(",
                 b"\"cpu\")", b"'cpu')", b"]:", b"]]",  # these two: `x[ptr[i]:ptr[i + 1]]`
                 b"not ", b" or ", b" and ",  # truth values outside an `if`
                 b"%", b".format(", b"min(", b"max(", b" in ")  # other spellings (evidence e29)


def _copying_method(receiver: cst.BaseExpression) -> Optional[str]:
    """"cpu" when the receiver of ``.numpy()``/``.tolist()``/``.item()`` was
    already copied to the host (``x.cpu().numpy()``, ``x.detach().cpu()
    .numpy()``): the ``.cpu()`` is the call that syncs, and the message names it."""
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and not receiver.args:
        method = receiver.func.attr.value
        if method == "cpu":
            return "cpu"
        if method not in ("detach", "clone", "contiguous"):
            return None
        receiver = receiver.func.value
    return None


def _copied(receiver: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` of ``x.detach().cpu()`` (the chain ``_copying_method`` walks)."""
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and not receiver.args:
        method, receiver = receiver.func.attr.value, receiver.func.value
        if method == "cpu":
            break
    return receiver


def _forced(call: cst.Call) -> bool:
    """``.numpy(force=True)``."""
    return len(call.args) == 1 and call.args[0].keyword is not None and call.args[0].keyword.value == "force" \
        and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "True"


def _mapping_view(expr: cst.BaseExpression) -> bool:
    """``out.keys()`` / ``out.items()``: a Tensor has neither, so the receiver is a dict (of outputs)
    whatever its kind says, and ``k in out.keys()`` reads no tensor."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value in ("keys", "items")


def _operands(expr: cst.BaseExpression) -> list:
    """``a``, ``b``, ``c`` of ``a or b and c``: the operands of nested boolean operations, in order."""
    if isinstance(expr, cst.BooleanOperation):
        return _operands(expr.left) + _operands(expr.right)
    return [expr]


class SyncRule(Rule):
    """Finds the syncs; a subclass decides whether one costs something here."""

    triggers = SYNC_TRIGGERS
    # `.numpy()` of a device tensor raises (it copies nothing): on its own it
    # reads a CPU tensor. A rule about device syncs (GNN013) skips it; the
    # `.cpu()` before it, when there is one, is the sync and is reported.
    bare_numpy_syncs = True
    # A bare f-string of a tensor (not printed): dynamo traces it and formats the value after the
    # graph (torch 2.13: no graph break, `fullgraph=True` compiles; bench/evidence/e28_fstring_tensor.py),
    # so it breaks nothing in compiled code (GNN001); in per-step eager code it is a sync (GNN013).
    bare_fstring_syncs = True
    # `"{:.3f}".format(t)` (deferred like an f-string) and builtin `max(t, 0.5)` / `min(a, b)` / `max(t)`
    # (dynamo traces them) break no graph (e29); in per-step eager code each reads the value on the host.
    # `"%.3f" % t` and `x in t` are syncs in both: dynamo gives up on the whole frame (e29).
    traced_syncs = True

    def _flag(self, node: cst.CSTNode, what: str) -> None:
        raise NotImplementedError

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        # `x[ptr[i]:ptr[i + 1]]`: a tensor slice bound is converted to an int (`__index__`, `Tensor.item()`);
        # a bound can only be 0-d, so any tensor there is one value read on the host. Under compile
        # (default mode) dynamo breaks at it (bench/evidence/e27_tensor_slice_bounds.py)
        if not isinstance(node.slice, cst.Slice):
            return
        for bound in (node.slice.lower, node.slice.upper):
            if self._element_or_result(bound) and self._device_tensor(bound) \
                    and self.context.kind(bound) == TENSOR and not (
                        self.context.fullgraph_everywhere() and self.context.compiled_region(node)):
                # (fullgraph=True captures the bound as an unbacked int: no break, no recompile, e27)
                self._flag(bound, f"a tensor slice bound `{self.context.module.code_for_node(bound)[:40]}` "
                                  f"(an int conversion)")
                return

    def _element_or_result(self, bound: Optional[cst.BaseExpression]) -> bool:
        """An element of a tensor (``ptr[i]``) or a name bound to one or to a call's result
        (``n = mask.sum()``); not an attribute (``batch.batch_size`` is PyG's int), nor a name bound to one."""
        if isinstance(bound, cst.Name):
            binding, _ = self.context.lookup(bound.value, bound)
            return binding is not None and binding.how == "assign" and isinstance(binding.value, (cst.Subscript,
                                                                                                   cst.Call))
        return isinstance(bound, cst.Subscript)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and _forced(node):
            # `t.numpy(force=True)` copies `t` to the host from any device (it is
            # `t.detach().cpu()...numpy()`); a numpy array has no `.numpy()`
            if self.context.kind(func.value) not in (SCALAR, MODEL) and _copying_method(func.value) is None \
                    and not self.context.host_tensor(func.value) and not self.context.host_on_some_path(func.value):
                self._flag(node, "`.numpy(force=True)`")
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and self._to_host(node):
            # `t.to("cpu")` / `.to(device="cpu")` / `.to(torch.device("cpu"))`: the same copy as `t.cpu()`
            # in per-step eager code; dynamo traces it in compiled code (e10: 0 graph breaks), where only
            # reading the copy on the host (`.numpy()`, `.item()`) breaks the graph
            if self.context.kind(func.value) == TENSOR and not self.context.host_tensor(func.value) \
                    and not self.context.compiled_region(node):
                self._flag(node, f"`.to({self.context.module.code_for_node(node.args[0].value)})`")
            return
        if isinstance(func, cst.Attribute) and func.attr.value in _SYNC_METHODS and not node.args:
            receiver_kind = self.context.kind(func.value)
            method = func.attr.value
            if receiver_kind in (SCALAR, MODEL):
                return
            # a graph / batch moved to the device: its `.cpu()` copies its tensors back
            moved = method == "cpu" and receiver_kind in (BATCH, UNKNOWN) and self.context.moved_to_device(func.value)
            if receiver_kind != TENSOR and method in ("tolist", "cpu") and not moved:
                return  # numpy arrays have .tolist(); modules have .cpu()
            if receiver_kind == UNKNOWN and method == "numpy" and not self._chained_from_tensor(func.value):
                return
            copying = _copying_method(func.value)
            if copying is None and method == "numpy" and not self.bare_numpy_syncs:
                return
            if copying is None and self.context.host_tensor(func.value):
                return  # a CPU tensor (`torch.tensor(list)`, a `.cpu()` result): no device sync
            if copying is not None and self.context.host_tensor(_copied(func.value)):
                return  # `t.cpu().numpy()` of a CPU tensor: the `.cpu()` copies nothing (it is not flagged either)
            self._flag(node, f"`.{copying or method}()`")
            return
        resolved = self.context.resolve(func)
        if self._bool_comparison(node, resolved):
            self._flag(node, f"`{self.context.module.code_for_node(func)}()`, a Python bool computed on the device,")
            return
        if resolved in _CASTS and len(node.args) == 1 and node.args[0].keyword is None:
            if self._device_tensor(node.args[0].value):
                self._flag(node, f"`{resolved}()` of a tensor")
            return
        if resolved in _METRIC_LOGGERS and node.args and isinstance(node.args[0].value, cst.Dict) \
                and node.args[0].keyword is None:
            # wandb converts each tensor value to a Python number (`.item()` / `.tolist()`) as it logs
            for element in node.args[0].value.elements:
                if isinstance(element, cst.DictElement) and self._formats_as_tensor(element.value):
                    self._flag(node, "logging a tensor to wandb")
                    return
            return
        if resolved in _LOGGING_FUNCS or self._lightning_print(func):
            for arg in node.args:
                if arg.keyword is not None:
                    continue
                if self._device_tensor(arg.value) or self._formats_tensor(arg.value):
                    self._flag(node, "printing a tensor")
                    return
            return
        if self.traced_syncs and resolved in _BUILTIN_EXTREMA and self._compares_tensor(node):
            self._flag(node, f"builtin `{resolved}()` of a tensor (a comparison read as a bool)")
            return
        if self.traced_syncs and isinstance(func, cst.Attribute) and func.attr.value == "format" \
                and self._formats_tensor(node) and not self._printed(node):
            self._flag(node, "formatting a tensor with `str.format`")

    def _lightning_print(self, func: cst.BaseExpression) -> bool:
        """``self.print(...)`` in a LightningModule: Lightning's print (rank 0), which formats its arguments."""
        return isinstance(func, cst.Attribute) and func.attr.value == "print" and isinstance(func.value, cst.Name) \
            and func.value.value == "self" and self.context.lightning_method(self.context.enclosing_function(func))

    def _compares_tensor(self, call: cst.Call) -> bool:
        """``max(t, 0.5)`` / ``min(a, b)`` with a device tensor operand, or ``max(t)`` over one (its
        elements compared); not ``max(a, b)`` of numbers nor ``max(losses, key=...)`` of a list."""
        args = [a for a in call.args if a.keyword is None]
        if not args or any(a.star for a in args) or any(a.keyword is not None for a in call.args):
            return False
        return any(self._device_tensor(a.value) for a in args)

    def _printed(self, node: cst.CSTNode) -> bool:
        """``node`` (a formatted string) is an argument of ``print``: reported once, as printing."""
        parent = self.context.parent.get(node)
        while isinstance(parent, cst.ConcatenatedString):
            parent = self.context.parent.get(parent)
        if isinstance(parent, cst.Arg):
            call = self.context.parent.get(parent)
            return isinstance(call, cst.Call) and (self.context.resolve(call.func) in _LOGGING_FUNCS
                                                   or self._lightning_print(call.func))
        return False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        # `"%.3f" % loss`, `fmt % (step, loss)`: `%`-formatting reads each value on the host
        if type(node.operator) is cst.Modulo and self._formats_tensor(node) and not self._printed(node):
            self._flag(node, "`%`-formatting a tensor")

    def _computed_tensor(self, expr: cst.BaseExpression) -> bool:
        """``expr`` (or every assignment that reaches the name; a parameter does not count) is not a
        model's output nor a dict view:
        ``k in out`` is the idiom of a dict of outputs (``if "loss" in out``), rare on a tensor."""
        values = [expr]
        if isinstance(expr, cst.Name):
            reaching = self.context.reaching(expr.value, expr)
            if not reaching or not all(b.how == "assign" for b, _ in reaching):
                return False  # a parameter (`idx in output_shapes`, heldout3): a dict as often as a tensor
            values = [b.value for b, _ in reaching]
        return all(self._not_model_output(v) for v in values)

    def _not_model_output(self, value: Optional[cst.BaseExpression]) -> bool:
        if _mapping_view(value) or isinstance(value, (cst.Dict, cst.DictComp)):
            return False
        return not (isinstance(value, cst.Call) and self.context.kind(value.func) == MODEL)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `x in t`: `Tensor.__contains__` is `(t == x).any()` read as a Python bool
        for target in node.comparisons:
            if type(target.operator) in (cst.In, cst.NotIn) and self._computed_tensor(target.comparator) \
                    and self._device_tensor(target.comparator) and not self.context.is_string(node.left):
                self._flag(node, f"`{'not in' if type(target.operator) is cst.NotIn else 'in'}` on a tensor "
                                 f"(its truth value)")
                return

    def _to_host(self, call: cst.Call) -> bool:
        """``.to("cpu")`` (positional or ``device=``, a string or ``torch.device("cpu")``), not
        ``non_blocking=True`` (an asynchronous copy waits for nothing)."""
        if not call.args or any(a.keyword is not None and a.keyword.value == "non_blocking"
                                and not (isinstance(a.value, cst.Name) and a.value.value == "False")
                                for a in call.args):
            return False
        first = call.args[0]
        return (first.keyword is None or first.keyword.value == "device") and self.context.cpu_device(first.value)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        # f"{loss:.4f}" reads the value back like .item() does; print(f"...")
        # is reported once, as printing
        if self._printed(node):
            return
        if self.bare_fstring_syncs and self._formats_tensor(node):
            self._flag(node, "formatting a tensor in an f-string")

    def _bool_comparison(self, node: cst.Call, resolved: Optional[str]) -> bool:
        """``torch.allclose(a, b)`` / ``torch.equal(a, b)`` / ``a.allclose(b)`` on a
        device tensor: the result is a Python bool, so it is copied to the host
        like ``.item()`` is."""
        func = node.func
        if self.context.is_test_file():
            return False  # a test comparing outputs (`assert torch.allclose(out, ref)`): a check, not a step
        if resolved is not None and resolved.startswith("torch.") and resolved[6:] in _BOOL_COMPARISONS:
            operands = [a.value for a in node.args[:2] if a.keyword is None and not a.star]
        elif isinstance(func, cst.Attribute) and func.attr.value in _BOOL_COMPARISONS and node.args \
                and self.context.kind(func.value) == TENSOR:
            operands = [func.value, node.args[0].value]
        else:
            return False
        return any(self._device_tensor(operand) for operand in operands) \
            and not any(self.context.host_tensor(operand) for operand in operands)

    def _device_tensor(self, expr: cst.BaseExpression) -> bool:
        """A tensor not known to live on the CPU (reading a CPU tensor does not sync the device)."""
        return self.context.is_tensor(expr) and not self.context.host_tensor(expr)

    def _formats_as_tensor(self, expr: cst.BaseExpression) -> bool:
        # a Data object's custom attributes are often strings (`batch.split`)
        if isinstance(expr, cst.Attribute) and expr.attr.value not in _DATA_TENSOR_ATTRS \
                and self.context.kind(expr.value) == BATCH:
            return False
        return self._device_tensor(expr)

    def _chained_from_tensor(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in ("cpu", "detach") and self.context.kind(expr.func.value) != SCALAR

    def _formats_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.FormattedString):
            return any(isinstance(part, cst.FormattedStringExpression)
                       and self._formats_as_tensor(part.expression) for part in expr.parts)
        if isinstance(expr, cst.ConcatenatedString):
            return self._formats_tensor(expr.left) or self._formats_tensor(expr.right)
        if isinstance(expr, cst.BinaryOperation):  # `"%.3f" % loss`, `fmt % (step, loss)`
            if type(expr.operator) is not cst.Modulo or not self.context.is_string(expr.left):
                return False
            values = [e.value for e in expr.right.elements] if isinstance(expr.right, cst.Tuple) else [expr.right]
            return any(not isinstance(v, cst.StarredElement) and self._formats_as_tensor(v) for v in values)
        if isinstance(expr, cst.Call):  # `"{:.3f}".format(loss)`
            return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format" \
                and self.context.is_string(expr.func.value) \
                and any(not a.star and self._formats_as_tensor(a.value) for a in expr.args)
        return False

    # tensor truthiness --------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._check_condition(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._check_condition(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check_condition(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check_condition(node.test)

    def visit_CompIf(self, node: cst.CompIf) -> None:  # `[i for i in ids.unique() if i != pad]`
        self._check_condition(node.test)

    def _check_condition(self, test: cst.BaseExpression) -> None:
        culprit = self._truthy_tensor(test)
        if culprit is not None:
            self._flag(test, "using a tensor as a condition")

    # `ok = not (torch.isnan(g).any() or torch.isinf(g).any())`: `not` and a non-last `or`/`and`
    # operand read a truth value wherever they stand, not only in an `if` (those are checked above)
    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not) and self._outside_condition(node) \
                and self._truthy_tensor(node.expression) is not None:
            self._flag(node, "`not` of a tensor (its truth value)")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        parent = self.context.parent.get(node)
        if isinstance(parent, cst.BooleanOperation) or (isinstance(parent, cst.UnaryOperation)
                                                         and isinstance(parent.operator, cst.Not)) \
                or not self._outside_condition(node):
            return  # the outermost operation, outside a condition, reports
        if any(self._truthy_tensor(op) is not None for op in _operands(node)[:-1]):  # the last is not tested
            self._flag(node, f"`{'or' if isinstance(node.operator, cst.Or) else 'and'}` on a tensor (its truth value)")

    def _outside_condition(self, node: cst.CSTNode) -> bool:
        """Not (part of) the test of an ``if`` / ``while`` / ``assert`` / conditional expression /
        comprehension filter, which ``_check_condition`` reads."""
        child, parent = node, self.context.parent.get(node)
        while isinstance(parent, cst.BooleanOperation) or (isinstance(parent, cst.UnaryOperation)
                                                           and isinstance(parent.operator, cst.Not)):
            child, parent = parent, self.context.parent.get(parent)
        return getattr(parent, "test", None) is not child

    def _truthy_tensor(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The sub-expression whose truth value is a tensor's, if any."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self._truthy_tensor(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return self._truthy_tensor(expr.left) or self._truthy_tensor(expr.right)
        if self.context.unpassed_input(expr):
            return None  # `labels` of `forward(..., labels=None)` that no call passes: None, no tensor
        if self._device_tensor(expr) and not self.context.host_flag(expr):
            return expr  # (a flag the project keeps in a batch dict is a Python bool: host_flags.py)
        return None
