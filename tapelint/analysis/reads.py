"""Is a value ever read? The one answer for rules that report work whose result is thrown away."""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Binding, CallSite, Facts, arg_value
from tapelint.analysis.values import Kind, flatten, values


def binding_read(facts: Facts, binding: Binding, _seen: set[int] | None = None) -> bool:
    """Is the name bound here read anywhere after the binding (in its scope or the functions inside)?
    A read that only returns the value to callers counts only if a caller reads what it gets."""
    seen = _seen if _seen is not None else set()
    if id(binding) in seen:
        return False
    seen.add(id(binding))
    for use in facts.uses_after(binding.target, binding.scope, binding.order):
        index = _returned_at(facts, use.node, use.scope)
        if index is False:
            return True
        if _callers_read(facts, use.scope, index, seen):
            return True
    return False


def _returned_at(facts: Facts, node: cst.CSTNode, scope) -> int | None | bool:  # type: ignore[no-untyped-def]
    """None when `node` is the whole return value of its function, its index when it is an element of
    a returned tuple, False when it is used in any other way."""
    if scope.is_module:
        return False
    for ret in facts.returns_of(scope):
        value = ret.value
        if value is node:
            return None
        if isinstance(value, cst.Tuple):
            for i, element in enumerate(value.elements):
                if element.value is node:
                    return i
    return False


def _callers_read(facts: Facts, function, index: int | None, seen: set[int]) -> bool:  # type: ignore[no-untyped-def]
    callers = facts.call_sites_of_scope(function)
    if not callers:
        return True  # called from code we cannot see
    for caller in callers:
        targets = [b for b in facts.bindings_of_value(caller.node) if b.index == index]
        if not targets:
            return True  # used directly (`print(step())`), or unpacked in a way we do not follow
        if any(binding_read(facts, target, seen) for target in targets):
            return True
    return False


def result_discarded(facts: Facts, site: CallSite) -> bool:
    """Is the result of this call never read: bound to a name nobody reads, or returned to callers
    that bind it to names nobody reads? False whenever the result goes somewhere we cannot follow."""
    holders = facts.bindings_of_value(site.node)
    if holders:
        return not any(binding_read(facts, b) for b in holders)
    index = _returned_at(facts, site.node, site.scope)
    if index is False:
        return False
    return not _callers_read(facts, site.scope, index, set())


def dropped_weight_gradients(facts: Facts) -> list[CallSite]:
    """`tape.gradient(loss, <a model's weights>)` calls whose result is never read: the gradients are
    computed and no optimizer can apply them."""

    def compute() -> list[CallSite]:
        from_values = values(facts)
        found = []
        for site in facts.gradient_calls():
            if site.method != "gradient":
                continue
            sources = from_values.of(arg_value(site.node, 1, "sources"), site.scope, site.order)
            if not any(v.kind is Kind.WEIGHTS for v in flatten(sources)):
                continue
            if result_discarded(facts, site):
                found.append(site)
        return found

    return facts.cached("dropped_weight_gradients", compute)


def value_kept(facts: Facts, site: CallSite, element: int | None = None) -> bool | None:
    """Is the call's value kept and read (`element`: only that element of a returned tuple counts)?
    False when it is thrown away (a bare statement, or bound to names nobody reads, also as the element
    of a comprehension that is); None when it goes somewhere we cannot follow (an argument, a
    container, a return to unseen callers)."""
    node: cst.CSTNode = site.node
    for _ in range(8):
        if id(node) in facts.statement_values:
            return False
        holders = [b for b in facts.bindings_of_value(node) if element is None or b.index in (None, element)]
        if holders:
            return any(binding_read(facts, b) for b in holders)
        if facts.bindings_of_value(node):
            return False  # unpacked, and the element asked about is bound to nothing
        outer = facts.comprehension_of_element.get(id(node))
        if outer is None:
            return None
        node, element = outer, None  # `[clip(g) for g in grads]`: what becomes of the list
    return None
