"""Where a loss was computed, relative to the tape (or the optimizer) that should record it.

The one home for the questions the tape rules ask about a loss's history: which statement computed the
loss handed to `tape.gradient`, whether that ran outside the tape's block, which forward pass before the
tape it came from, whether `minimize` got a finished tensor, and which layer attributes are computed
from variables once, before any tape. Built on `Facts` bindings and the value model (`values.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.dataflow import names_in, render
from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value, keyword_arg
from tapelint.analysis.gradients import GradientCall
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, is_unknown, latest_assignment, values_of
from tapelint.analysis.vocabulary import optimizer_class
from tapelint.analysis.walk import child_nodes

# Values that are not a computation: a name, a constant, an attribute.
_PLAIN = (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Attribute)
# How many `loss = total` aliases, and how many assignments deep a forward pass, are followed.
_ALIAS_LIMIT = 10
_FORWARD_DEPTH = 8
_LOSS_OR_METRIC_PREFIXES = ("keras.losses.", "keras.metrics.")


def is_computation(facts: Facts, expr: cst.BaseExpression | None) -> bool:
    """Does evaluating `expr` run an op (that a tape would have had to record)? A name, a constant,
    an attribute, an element of a container, a container of those, or a new variable do not."""
    pending = [expr]
    while pending:
        current = pending.pop()
        if current is None or isinstance(current, _PLAIN):
            continue
        if isinstance(current, (cst.Tuple, cst.List)):
            pending.extend(e.value for e in current.elements)
            continue
        if isinstance(current, cst.Subscript):
            continue  # `outputs[0]` may be a Python tuple: not sure it is an op
        if isinstance(current, cst.Call):
            if facts.resolve(current.func) in ("tensorflow.Variable", "keras.Variable"):
                continue
            if isinstance(current.func, cst.Name) and current.func.value in ("list", "tuple", "dict"):
                continue
            return True
        if isinstance(current, (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.IfExp)):
            return True
    return False


def loss_assignment(facts: Facts, grad: GradientCall) -> Binding | None:
    """Where the loss of `tape.gradient(loss, ...)` was computed: the latest assignment its name may see
    at the gradient call. None when the target is not a plain name or has no assignment in sight."""
    target = grad.target
    if not isinstance(target, cst.Name):
        return None
    return latest_assignment(facts, target.value, grad.site.scope, grad.site.order)


@dataclass(frozen=True)
class OutsideComputation:
    """The last step of a loss that ran outside its tape's block."""

    node: cst.CSTNode  # the assignment target (or expression) that computed it
    name: str  # the loss as the gradient call names it
    where: str  # "before" or "after" the block


def loss_computed_outside(facts: Facts, grad: GradientCall) -> OutsideComputation | None:
    """The computation of the loss handed to `grad` when it ran outside the tape's `with` block, in the
    tape's function: written into the `gradient` call after the block, or assigned (through `loss =
    total` aliases) before or after it. None when it ran inside, or in doubt."""
    site, tape, target = grad.site, grad.tape, grad.target
    if target is None:
        return None
    if not isinstance(target, cst.Name):
        if is_computation(facts, target) and site.order > tape.end_order:
            return OutsideComputation(target, render(target), "after")
        return None
    binding = loss_assignment(facts, grad)
    followed = 0
    while binding is not None and followed < _ALIAS_LIMIT:
        followed += 1
        if binding.scope is not tape.scope or binding.index is not None or tape.encloses(binding.order):
            return None
        if tape.order <= binding.order <= tape.end_order:
            return None
        if target.value in names_in(grad.sources):
            return None
        if isinstance(binding.value, cst.Name):
            # `loss = total`: an alias, look at what it names.
            binding = latest_assignment(facts, binding.value.value, binding.scope, binding.order)
            continue
        if not binding.augmented and not is_computation(facts, binding.value):
            return None
        node = binding.target_node if binding.augmented else binding.node
        if isinstance(node, cst.Assign):
            node = node.targets[0].target
        return OutsideComputation(node, target.value, "after" if binding.order > tape.end_order else "before")
    return None


def forward_pass_before_tape(facts: Facts, grad: GradientCall, owner: str) -> CallSite | None:
    """The call of `owner` (`model(x)`) that produced the loss of `grad` when it ran before the tape
    opened: followed back from the loss through the assignments made inside the block."""
    target = grad.target
    if not isinstance(target, cst.Name):
        return None
    tape = grad.tape
    scope = grad.site.scope
    # Depth-first, in the order of the names read, so the first forward pass found is the one the
    # loss reads first. A state already followed found nothing: it is not followed twice.
    pending: list[tuple[str, int, int]] = [(target.value, grad.site.order, 0)]
    followed: set[tuple[str, int, int]] = set()
    while pending:
        state = pending.pop()
        if state in followed:
            continue
        followed.add(state)
        name, at, depth = state
        binding = latest_assignment(facts, name, scope, at)
        if binding is None or binding.scope is not tape.scope or binding.value is None or depth > _FORWARD_DEPTH:
            continue
        if binding.order < tape.order:
            for node in calls_in(binding.value):
                site = facts.call_site(node)
                if site is not None and site.func == owner:
                    return site
            continue
        if tape.encloses(binding.order):
            for inner in sorted(names_in(binding.value), reverse=True):
                pending.append((inner, binding.order, depth + 1))
    return None


def is_loss_or_metric(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int) -> bool:
    """Is `expr` surely a Keras loss or metric object (or what a `keras.losses`/`keras.metrics`
    function gave back), so calling it computes a loss, not a model's forward pass?"""
    found = values_of(facts, expr, scope, order)
    if not found or is_unknown(found):
        return False
    return all(
        v.kind in (Kind.LOSS, Kind.METRIC)
        or v.kind is Kind.EXTERNAL and (v.cls or "").startswith(_LOSS_OR_METRIC_PREFIXES)
        for v in found
    )


def calls_loss_or_metric_member(facts: Facts, call: CallSite, member: str) -> bool:
    """Does `call` (`self.loss_fn(...)`, `self.acc.update_state(...)`) go through the attribute
    `member` (`self.loss_fn`) that its last assignment made a Keras loss or metric object?"""
    # The value model follows parameters and factories too (`self.loss_fn = loss_fn`).
    func = call.node.func
    node = func if dotted(func) == member else (
        func.value if isinstance(func, cst.Attribute) and dotted(func.value) == member else None)
    if node is None:
        return False
    found = values_of(facts, node, call.scope, call.order)
    return bool(found) and not is_unknown(found) and all(v.kind in (Kind.LOSS, Kind.METRIC) for v in found)


def is_keras_optimizer(facts: Facts, receiver: cst.BaseExpression, site: CallSite) -> bool:
    """Is the receiver of `site` a Keras optimizer created right there (`Adam().minimize`) or by the
    statement that last assigned its name (`opt = Adam()`)?"""
    if isinstance(receiver, cst.Call):
        return optimizer_class(facts.resolve(receiver.func)) is not None
    binding = latest_assignment(facts, render(receiver), site.scope, site.order)
    value = binding.value if binding is not None else None
    return isinstance(value, cst.Call) and optimizer_class(facts.resolve(value.func)) is not None


@dataclass(frozen=True)
class PrecomputedLoss:
    """A loss that a Keras optimizer's `minimize` cannot record, because it was computed beforehand."""

    node: cst.CSTNode  # what to point at: the loss argument, or the lambda
    name: str  # the tensor's name
    # "tensor": `minimize(loss, ...)` with `loss` a finished tensor and no `tape=`;
    # "callable": `minimize(lambda: loss, ...)`, the callable only returns a finished tensor.
    form: str


def precomputed_minimize_loss(facts: Facts, site: CallSite) -> PrecomputedLoss | None:
    """`opt.minimize(lambda: loss, var_list)` (or `opt.minimize(loss, var_list)`) with `loss` a tensor
    computed earlier and no `tape=`: a Keras optimizer opens its own tape around the callable only."""
    func = site.node.func
    if not isinstance(func, cst.Attribute) or not is_keras_optimizer(facts, func.value, site):
        return None
    if keyword_arg(site.node, "tape") is not None:
        return None
    loss = arg_value(site.node, 0, "loss")
    body: cst.BaseExpression | None = None
    if isinstance(loss, cst.Lambda):
        body = loss.body
    elif isinstance(loss, cst.Name) and loss.value not in facts.functions:
        binding = latest_assignment(facts, loss.value, site.scope, site.order)
        if binding is None or binding.index is not None or binding.value is None:
            return None
        if isinstance(binding.value, cst.Lambda):
            body = binding.value.body
        elif is_computation(facts, binding.value):
            return PrecomputedLoss(loss, loss.value, "tensor")
    if not isinstance(body, cst.Name):
        return None
    computed = latest_assignment(facts, body.value, site.scope, site.order)
    if computed is None or computed.index is not None or not is_computation(facts, computed.value):
        return None
    if isinstance(computed.value, cst.Lambda):
        return None
    lambda_node = loss if isinstance(loss, cst.Lambda) else None
    return PrecomputedLoss(lambda_node or loss or site.node, body.value, "callable")


@dataclass(frozen=True)
class CombinedWeights:
    """`self.kernel = self.w_mu + self.w_sigma * eps` in a Keras layer's `build` or `__init__`, read in
    its `call`: computed once, outside any tape, from the layer's own variables."""

    binding: Binding  # the assignment in `build`/`__init__`
    variable: str  # the first variable it reads (`self.w_mu`)
    method: str  # "build" or "__init__"


def weights_combined_outside_call(facts: Facts) -> list[CombinedWeights]:
    """Every attribute of a Keras layer of this module computed from the layer's variables in `build`
    or `__init__` and read (not reassigned) in `call`."""
    found: list[CombinedWeights] = []
    for cls in facts.classes.values():
        call = cls.methods.get("call")
        if call is None or not any(b.startswith("keras.") for b in cls.bases):
            continue
        own = [b for b in facts.bindings_in_class(cls.name) if b.target.startswith("self.")]
        variables = {b.target for b in own if _creates_variable(facts, b.value)}
        if not variables:
            continue
        read_in_call = names_in(call.node)
        for binding in own:
            scope = binding.scope
            if scope.simple_name not in ("build", "__init__") or binding.target in variables:
                continue
            value = binding.value
            if binding.index is not None or not isinstance(value, (cst.BinaryOperation, cst.Call)):
                continue
            if isinstance(value, cst.Call) and not (facts.resolve(value.func) or "").startswith("tensorflow."):
                continue
            used = sorted(names_in(value) & variables)
            if not used or binding.target not in read_in_call:
                continue
            if any(b.scope is call for b in facts.bindings_of(binding.target)):
                continue
            found.append(CombinedWeights(binding, used[0], scope.simple_name))
    return found


def _creates_variable(facts: Facts, value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Call) and (
        facts.resolve(value.func) in ("tensorflow.Variable", "keras.Variable") or dotted(value.func) == "self.add_weight")


def calls_in(expr: cst.CSTNode) -> list[cst.Call]:
    """Every call inside `expr` (itself included), innermost last."""
    found = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            found.append(node)
        stack.extend(child_nodes(node))
    return found
