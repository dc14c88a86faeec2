"""Variable assignments that sit on the forward path of a loss: `var.assign(f(w))` inside a tape, with the
loss then reading `var` (or the assign's result).

TensorFlow records no gradient through `assign`, `assign_add` or `assign_sub`: the value read back from the
variable is a new leaf, so the weights that computed the assigned value get no gradient along that path.
`forward_path_assigns(facts)` answers, per `tape.gradient` call: which assignments inside its tape block
store a value computed from the gradient's own sources (its variables, or calls of the models whose
weights they are) and are read back, after the assignment, by the loss. The result of `assign` counts as
a read back only for a `tf.Variable`: on TF 2.21 Keras 3's `Variable.assign` returns the value it was
given, which keeps its gradient. Only the tape's own function is
followed (assignments inside a layer's `call` are not). Anything that cannot be read means "no".
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.dataflow import names_in_order
from tapelint.analysis.facts import CallSite, Facts, arg_value
from tapelint.analysis.gradients import GradientCall, gradient_calls
from tapelint.analysis.loss_flow import calls_in
from tapelint.analysis.names import dotted
from tapelint.analysis.values import Kind, last_assignment, values_of
from tapelint.analysis.variable_sets import holders, variable_list

ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub"})
_WEIGHT_FACTORIES = frozenset({"add_weight", "add_variable"})
# Expressions followed back through the tape block in one question.
_BUDGET = 200


@dataclass(frozen=True)
class ForwardAssign:
    grad: GradientCall
    site: CallSite  # the `var.assign(...)` call
    variable: str  # the variable as written (`h`, `self.memory`)
    source: str  # the gradient source the assigned value is computed from (`w`, `model`)
    owner: bool  # `source` is a model or layer whose weights are differentiated, not a variable
    read: cst.CSTNode  # the expression of the loss that reads the variable (or the assign's result) back


def _roots(grad: GradientCall, facts: Facts) -> tuple[set[str], set[str]] | None:
    """The gradient's sources as (variables, weight owners): `[w, b]` -> ({w, b}, {}),
    `model.trainable_variables` -> ({}, {model}). None when the sources cannot be read."""
    site = grad.site
    if grad.sources is None:
        return None
    listed = variable_list(facts, grad.sources, site.scope, site.order)
    if listed is not None:
        variables = {p.owner for p in listed.parts if p.kind == "variable"}
        owners = {p.owner for p in listed.parts if p.kind != "variable"}
        return variables, owners
    name = dotted(grad.sources)
    if name is not None and _variable_kind(facts, grad.sources, site) is not None:
        return {name}, set()
    return None


def _variable_kind(facts: Facts, expr: cst.BaseExpression, site: CallSite) -> str | None:
    """"tf" when `expr` is surely a `tf.Variable`, "keras" when it is surely a `keras.Variable` or what
    `self.add_weight` made (or a mix), None when it may be something else."""
    found = values_of(facts, expr, site.scope, site.order)
    if found and all(v.kind is Kind.VARIABLE for v in found):
        return "tf" if all(v.cls == "tensorflow.Variable" for v in found) else "keras"
    name = dotted(expr)
    if name is None:
        return None
    bound = holders(facts, name, site.scope, site.order)
    if bound and all(
        isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Attribute)
        and b.value.func.attr.value in _WEIGHT_FACTORIES and b.index is None for b in bound
    ):
        return "keras"
    return None


def _matches(name: str, roots: set[str]) -> str | None:
    for root in sorted(roots):
        if name == root or name.startswith(root + "."):
            return root
    return None


def _computed_from(facts: Facts, grad: GradientCall, value: cst.BaseExpression, order: int,
                   variables: set[str], owners: set[str]) -> str | None:
    """The source (a variable read, or a call of a weight owner) that `value`, evaluated at `order`,
    is computed from, following the assignments made inside the tape block."""
    tape = grad.tape
    pending: list[tuple[cst.BaseExpression, int]] = [(value, order)]
    seen: set[tuple[str, int]] = set()
    budget = _BUDGET
    while pending and budget > 0:
        budget -= 1
        expr, at = pending.pop()
        for call in calls_in(expr):
            func = dotted(call.func)
            if func is not None and isinstance(call.func, (cst.Name, cst.Attribute)):
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in ASSIGN_METHODS:
                    continue
                found = _matches(func, owners)
                if found is not None:
                    return found
        for name in names_in_order(expr):
            found = _matches(name, variables)
            if found is not None:
                return found
            if (name, at) in seen:
                continue
            seen.add((name, at))
            binding = last_assignment(facts, name, tape.scope, at)
            if binding is None or binding.value is None or binding.scope is not tape.scope:
                continue
            if tape.encloses(binding.order):
                pending.append((binding.value, binding.order))
    return None


def _read_back(facts: Facts, grad: GradientCall, assign: CallSite, variable: str,
               result_cut: bool) -> cst.CSTNode | None:
    """The expression through which the loss of `grad` reads what `assign` stored: the variable, read
    after the assignment inside the tape block, or (when `result_cut`) the assign call's own result."""
    tape = grad.tape
    spans = blocks(facts)
    if grad.target is None:
        return None
    # Each expression with the one that read the name it is bound to (`loss = f(out)` for `out = ...`).
    pending: list[tuple[cst.BaseExpression, int, cst.BaseExpression]] = [
        (grad.target, grad.site.order, grad.target)]
    seen: set[tuple[str, int]] = set()
    budget = _BUDGET
    while pending and budget > 0:
        budget -= 1
        expr, at, reader = pending.pop()
        if result_cut and any(call is assign.node for call in calls_in(expr)):
            return reader
        names = names_in_order(expr)
        if at > assign.order and not spans.exclusive(assign.order, at) and any(
                n == variable or n.startswith(variable + ".") for n in names):
            return expr
        for name in names:
            if (name, at) in seen:
                continue
            seen.add((name, at))
            binding = last_assignment(facts, name, tape.scope, at)
            if binding is None or binding.value is None or binding.scope is not tape.scope:
                continue
            if tape.encloses(binding.order):
                pending.append((binding.value, binding.order, expr))
    return None


def forward_path_assigns(facts: Facts) -> list[ForwardAssign]:
    """Every assignment to a variable inside a tape block that cuts the path from the gradient's sources
    to its loss (see the module docstring)."""

    def compute() -> list[ForwardAssign]:
        found: list[ForwardAssign] = []
        assigns = [c for c in facts.calls if c.method in ASSIGN_METHODS and c.receiver is not None and c.tapes]
        if not assigns:
            return found
        for grad in gradient_calls(facts):
            tape = grad.tape
            mine = [a for a in assigns if a.scope is tape.scope and tape.encloses(a.order)]
            if not mine:
                continue
            roots = _roots(grad, facts)
            if roots is None:
                continue
            variables, owners = roots
            for site in mine:
                func = site.node.func
                if not isinstance(func, cst.Attribute):
                    continue  # (never: an assign method's call is one of an attribute)
                receiver = func.value
                variable = site.receiver or ""
                value = arg_value(site.node, 0, "value")
                kind = _variable_kind(facts, receiver, site) if value is not None else None
                if value is None or kind is None:
                    continue
                source = _computed_from(facts, grad, value, site.order, variables - {variable}, owners)
                if source is None:
                    continue
                # Measured on TF 2.21: `tf.Variable.assign` returns the variable (no gradient to the
                # value); Keras 3's `Variable.assign` returns the value tensor itself, which keeps it.
                read = _read_back(facts, grad, site, variable, result_cut=kind == "tf")
                if read is None:
                    continue
                found.append(ForwardAssign(grad, site, variable, source, source not in variables, read))
        return found

    return facts.cached("forward_path_assigns", compute)
