"""Where a model's `trainable` flag stands, and which of its weight lists a tape differentiates.

Keras evaluates `trainable_variables` when it is read (`[]` while the model is frozen), while `variables`
and `weights` list every variable whatever the flag says. `trainable_at` tells the flag at a point of the
code (in execution order, through the functions that run there); `weight_reads` finds the frozen model's
lists among the sources of the file's gradient calls. TL301 asks both.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import boolean
from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.names import dotted
from tapelint.analysis.training import frozen_values, parts
from tapelint.analysis.values import last_assignment, values
from tapelint.analysis.vocabulary import WEIGHT_ATTRIBUTES


@dataclass(frozen=True)
class WeightRead:
    """A read of the frozen model's weights that a gradient call differentiates."""

    kind: str  # "trainable" (`trainable_variables`, `trainable_weights`) or "all" (`variables`, `weights`)
    trainable: bool | None  # the frozen model's `trainable` where the list is read (None: cannot be told)
    node: cst.CSTNode
    inside: bool = False  # the list of a model built from the frozen one


def weight_reads(facts: Facts, freeze: Binding, holder: str) -> list[WeightRead]:
    """The reads of the frozen model's own weight lists among the sources of the file's gradient calls
    (through names bound to them: `d_vars = disc.trainable_variables`), each with the model's `trainable`
    at the read. Keras evaluates `trainable_variables` when it is read: `[]` while the model is frozen;
    `variables` and `weights` list every variable whatever `trainable` says, and a tape differentiates them
    (their `tf.Variable`s were made trainable; `trainable = False` only changes the Keras flag)."""
    target = freeze.target_node.value if isinstance(freeze.target_node, cst.Attribute) else None
    if target is None:
        return []
    frozen = frozen_values(facts, target, freeze.scope, freeze.order)
    if not frozen or any(v.kind.value == "unknown" for v in frozen):
        return []
    resolver = values(facts)
    found: list[WeightRead] = []
    for site in facts.gradient_calls():
        for attribute, scope, order in _weight_attributes(facts, arg_value(site.node, 1, "sources"), site.scope,
                                                          site.order):
            owners = resolver.of(attribute.value, scope, order)
            if not owners:
                continue
            kind = "trainable" if attribute.attr.value.startswith("trainable") else "all"
            if owners <= frozen:
                owner = dotted(attribute.value)
                state = trainable_at(facts, owner, scope, order) if owner is not None else None
                found.append(WeightRead(kind, state, attribute))
                continue
            # A model built from the frozen one (`Sequential([base, head])`): its `variables` hold the frozen
            # model's too; its `trainable_variables` do where the frozen model is trainable again.
            if any(v.kind.value != "unknown" and frozen & (parts(facts, v) or frozenset()) for v in owners):
                state = trainable_at(facts, holder, scope, order) if kind == "trainable" else None
                found.append(WeightRead(kind, state, attribute, inside=True))
    return found


def _weight_attributes(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int,
                       depth: int = 0) -> list[tuple[cst.Attribute, Scope, int]]:
    """`X.trainable_variables`-like reads in `expr` (a sum, a list), followed through one plain binding per name."""
    found: list[tuple[cst.Attribute, Scope, int]] = []
    if expr is None or depth > 4:
        return found
    if isinstance(expr, cst.Attribute) and expr.attr.value in WEIGHT_ATTRIBUTES:
        return [(expr, scope, order)]
    if isinstance(expr, cst.BinaryOperation):
        return (_weight_attributes(facts, expr.left, scope, order, depth + 1)
                + _weight_attributes(facts, expr.right, scope, order, depth + 1))
    if isinstance(expr, (cst.List, cst.Tuple)):
        for element in expr.elements:
            found += _weight_attributes(facts, element.value, scope, order, depth + 1)
        return found
    name = dotted(expr)
    if name is not None:
        binding = last_assignment(facts, name, scope, order)
        if binding is not None and binding.value is not None and binding.index is None and not binding.augmented:
            return _weight_attributes(facts, binding.value, binding.scope, binding.order, depth + 1)
    return found


def trainable_at(facts: Facts, holder: str, scope: Scope, order: int, depth: int = 0) -> bool | None:
    """The model's `trainable` flag when code at (`scope`, `order`) runs: the last `holder.trainable = ...`
    before it in the same function; with none, the flag at every call of the function (a function nobody
    here calls runs after the module: the flag the module leaves). A model is trainable until frozen. A
    call in between to a function of this file that sets some `.trainable` (a `set_trainable(model, flag)`
    helper) leaves it unknown."""
    if depth > 8:
        return None
    target = f"{holder}.trainable"
    own = [b for b in facts.bindings_of(target) if b.scope is scope and b.order < order and not b.augmented]
    last = own[-1].order if own else -1
    if any(last < c.order < order and _sets_trainable(facts, c) for c in facts.calls if c.scope is scope):
        return None
    if own:
        return boolean(own[-1].value)
    if holder.startswith("self.") and scope.class_name is not None:
        # Set in the class's methods: only `__init__`/`build` run at a known time (before any other method).
        others = [b for b in facts.bindings_of(target) if b.scope.class_name == scope.class_name and not b.augmented]
        if any(b.scope.simple_name not in ("__init__", "build") for b in others):
            return None
        return boolean(others[-1].value) if others else True
    if scope.is_module:
        return True
    elsewhere = [b for b in facts.bindings_of(target) if b.scope is not scope and not b.scope.is_module]
    if elsewhere:
        return None  # also set in other functions, which may run in between
    callers = facts.call_sites_of_scope(scope)
    if not callers:
        return trainable_at(facts, holder, facts.module_scope, 1 << 60, depth + 1)
    states = {trainable_at(facts, holder, c.scope, c.order, depth + 1) for c in callers}
    return states.pop() if len(states) == 1 else None


def _sets_trainable(facts: Facts, site: CallSite) -> bool:
    """Does the call run a function of this file that assigns some `X.trainable`?"""
    callee = facts.functions.get(site.func or "")
    if callee is None:
        return False
    return any(b.target.endswith(".trainable") and callee.contains(b.scope) for b in facts.bindings)
