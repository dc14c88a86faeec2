"""`tape.gradient` calls with their tape, target, sources and watched tensors, and what they feed.

Built on `Facts`; shared by the tape rules (TL003-TL007) and anything else that asks "which tape
computed these gradients" or "which variables are these gradients applied to".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, TapeBlock, arg_value
from tapelint.analysis.dataflow import names_in
from tapelint.analysis.names import dotted
from tapelint.analysis.values import last_assignment


@dataclass(eq=False)
class GradientCall:
    site: CallSite
    tape: TapeBlock
    target: cst.BaseExpression | None
    sources: cst.BaseExpression | None

    @property
    def method(self) -> str:
        return self.site.method or "gradient"


def tape_of(facts: Facts, site: CallSite) -> TapeBlock | None:
    """The `with GradientTape() as name` block a gradient call refers to, in the same function
    (or an enclosing one). None when the tape comes from elsewhere (a parameter, another function)."""
    tape = facts.tape_for_call(site)
    if tape is None:
        return None
    if tape.scope is not site.scope and not tape.scope.contains(site.scope):
        return None
    if site.receiver is not None and facts.is_param(site.receiver, site.scope):
        return None
    # A rebinding of the tape's name between the block and the call (`tape = other`) hides it.
    binding = last_assignment(facts, site.receiver or "", site.scope, site.order)
    if binding is not None and binding.node is not tape.node and binding.value is not tape.call:
        return None
    return tape


def gradient_calls(facts: Facts) -> list[GradientCall]:
    def compute() -> list[GradientCall]:
        found = []
        for site in facts.gradient_calls():
            tape = tape_of(facts, site)
            if tape is None:
                continue
            target = arg_value(site.node, 0, "target")
            sources = arg_value(site.node, 1, "sources")
            found.append(GradientCall(site, tape, target, sources))
        return found

    return facts.cached("tape_gradient_calls", compute)


def watch_calls(facts: Facts, tape: TapeBlock, before: int | None = None) -> list[CallSite]:
    """`tape.watch(...)` calls on this tape inside its block (and before `before`)."""
    return [
        c for c in facts.method_calls(tape.name, "watch")
        if tape.encloses(c.order) and (before is None or c.order < before)
    ]


def watched_names(facts: Facts, tape: TapeBlock, before: int | None = None) -> set[str]:
    """Names the tape watches, including the names inside a watched list (`tape.watch([x, y])`,
    `inputs = [x, y]; tape.watch(inputs)`)."""
    names: set[str] = set()
    for call in watch_calls(facts, tape, before):
        for arg in call.node.args:
            names |= names_in(arg.value)
            for name in list(names_in(arg.value)):
                binding = last_assignment(facts, name, call.scope, call.order)
                if binding is not None and binding.value is not None:
                    names |= names_in(binding.value)
    return names


def is_inside(tape: TapeBlock, binding: Binding) -> bool:
    return binding.scope is tape.scope and tape.encloses(binding.order)


def weights_owner(expr: cst.BaseExpression | None) -> str | None:
    """`model` for `model.trainable_variables` / `model.trainable_weights`."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("trainable_variables", "trainable_weights"):
        return dotted(expr.value)
    return None


def other_models(facts: Facts, grad: GradientCall) -> Callable[[cst.BaseExpression, Scope, int], bool] | None:
    """When every source of `grad` is the weights of a known model (`G.trainable_variables`,
    `enc.trainable_variables + dec.trainable_variables`), a predicate that accepts a callee which is a
    known model other than those: its weights get no gradient from this call. None when in doubt."""
    from tapelint.analysis.models import model_reader, sequential_stack

    parts: list[cst.BaseExpression] = []
    pending = [grad.sources]
    while pending:
        expr = pending.pop()
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            pending += [expr.left, expr.right]
        elif isinstance(expr, (cst.List, cst.Tuple)):
            pending += [e.value for e in expr.elements]
        elif isinstance(expr, cst.Attribute) and weights_owner(expr) is not None:
            parts.append(expr.value)
        else:
            return None
    reader = model_reader(facts)
    site = grad.site
    owned = []
    # Names a source model is built from: a model inside it (`Sequential([encoder, head])`) is no other model.
    inside: set[str] = set()
    for owner in parts:
        info = reader.model_of(owner, site.scope, site.order)
        if info is None or info.kind not in ("sequential", "subclass", "application"):
            return None  # a functional model's layers are not read here
        owned.append(info.construction)
        node = facts.classes[info.class_name].node if info.kind == "subclass" and info.class_name in facts.classes \
            else info.construction
        inside |= names_in(node)
        for entry in sequential_stack(facts, info.construction) or ():
            if entry is not None and entry.added is not None:
                inside |= names_in(entry.node)

    def other(func: cst.BaseExpression, scope: Scope, order: int) -> bool:
        name = dotted(func)
        if name is None or name in inside or name.split(".")[-1] in inside:
            return False
        info = reader.model_of(func, scope, order)
        return info is not None and all(info.construction is not c for c in owned)

    return other


def under_tape(facts: Facts, site: CallSite, *, every_caller: bool, levels: int) -> bool:
    """Does the call run while a tape records: inside a `with tape` block, or in a function of this
    module whose callers are (any of them, or `every_caller`), up to `levels` calls up? Iterative."""
    frontier = [site]
    for _ in range(levels + 1):
        if any(s.tapes for s in frontier) and not every_caller:
            return True
        if every_caller and all(s.tapes for s in frontier):
            return True
        callers: list[CallSite] = []
        for current in frontier:
            if current.tapes:
                continue
            if current.scope.is_module:
                if every_caller:
                    return False
                continue
            found = facts.call_sites_of_scope(current.scope)
            if not found and every_caller:
                return False
            callers.extend(found)
        if not callers:
            return False
        frontier = callers
    return False
