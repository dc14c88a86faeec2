"""Which variables a gradient call differentiates and which ones an apply call steps, as ordered lists.

`apply_gradients` pairs gradients and variables by position, so "the same variables" means the same
weight collections or named variables in the same order. The value model answers "what may this be"
as sets; this module keeps the order: `zipped_lists` finds the two lists zipped into an apply call,
`gradient_origin` follows a gradient list back (through names, clipping and comprehensions) to the
`tape.gradient` call that computed it, and `variable_list` reads a list of variables part by part.
Names are followed with the value model's `reaching`; anything it cannot pin down is None.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.gradients import gradient_calls
from tapelint.analysis.names import dotted
from tapelint.analysis.optimizers import ApplySite, apply_sites
from tapelint.analysis.values import Kind, values

# Weight attributes and what they hold.
WEIGHT_COLLECTIONS = {"trainable_variables": "trainable", "trainable_weights": "trainable",
                      "variables": "all", "weights": "all"}
# Calls whose first result is their first argument, transformed element by element.
_CLIPPING = frozenset({"tensorflow.clip_by_global_norm"})
# Names followed in one question: a chain longer than this is not read.
_STEPS = 32


@dataclass(frozen=True)
class Part:
    """One run of a variable list: a model's weight collection, or one named variable."""

    key: str  # the owner as written (`model`, `self.generator`), or `name#<its bindings>` for a variable
    kind: str  # "trainable", "all" (non-trainable included) or "variable"
    node: cst.BaseExpression  # the owner expression, or the variable's name

    @property
    def owner(self) -> str:
        return self.key.split("#")[0]


@dataclass(frozen=True)
class VariableList:
    parts: tuple[Part, ...]
    expr: cst.BaseExpression


@dataclass(frozen=True)
class ZippedLists:
    """`apply_gradients(zip(grads, variables))`: the two lists, read where `zip` is called."""

    apply: ApplySite
    grads: cst.BaseExpression
    variables: cst.BaseExpression
    scope: Scope
    order: int


def holders(facts: Facts, name: str, scope: Scope, order: int) -> list[Binding]:
    """The bindings of a name or attribute chain that a read at (`scope`, `order`) may see:
    the value model's `reaching`, and for `self.x` the assignments of the reading method's class."""
    if name.startswith("self.") and scope.class_name is not None:
        return [b for b in facts.bindings_of(name) if b.scope.class_name == scope.class_name]
    return values(facts).reaching(name, scope, order)


def _single(facts: Facts, name: str, scope: Scope, order: int) -> Binding | None:
    """The one plain assignment (`x = expr`, not unpacked, augmented or a loop target) a read sees."""
    found = holders(facts, name, scope, order)
    if len(found) != 1:
        return None
    binding = found[0]
    if binding.value is None or binding.index is not None or binding.path or binding.augmented:
        return None
    return binding


def zipped_lists(facts: Facts) -> list[ZippedLists]:
    """Every `opt.apply_gradients(zip(grads, variables))` whose argument is a builtin `zip` of two
    lists (directly, through `list(...)` or a name)."""

    def compute() -> list[ZippedLists]:
        resolver = values(facts)
        found = []
        for apply in apply_sites(facts):
            site = apply.site
            if site.method != "apply_gradients":
                continue
            pairs = resolver.of(arg_value(site.node, 0, "grads_and_vars"), site.scope, site.order)
            if len(pairs) != 1:
                continue
            (pair,) = pairs
            call = pair.node
            if pair.kind is not Kind.CONTAINER or not isinstance(call, cst.Call):
                continue
            if not isinstance(call.func, cst.Name) or call.func.value != "zip":
                continue
            zip_site = facts.call_site(call)
            if zip_site is None or resolver.reaching("zip", zip_site.scope, zip_site.order) \
                    or "zip" in facts.functions:
                continue  # a `zip` of the user's own
            args = [a.value for a in call.args if a.keyword is None and not a.star]
            if len(args) != 2 or len(call.args) != 2:
                continue
            found.append(ZippedLists(apply, args[0], args[1], zip_site.scope, zip_site.order))
        return found

    return facts.cached("zipped_lists", compute)


def gradient_origin(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> CallSite | None:
    """The `tape.gradient(...)` call a list of gradients comes from: directly, through names, clipping
    comprehensions (`[tf.clip_by_norm(g, 1.0) for g in grads]`) and `tf.clip_by_global_norm`."""
    grads = {id(g.site.node): g.site for g in gradient_calls(facts)}
    for _ in range(_STEPS):
        if expr is None:
            return None
        if isinstance(expr, cst.Call):
            site = grads.get(id(expr))
            return site if site is not None and site.method == "gradient" else None
        if type(expr) is cst.ListComp or type(expr) is cst.GeneratorExp:
            expr = expr.for_in.iter
            continue
        if not isinstance(expr, cst.Name):
            return None
        found = holders(facts, expr.value, scope, order)
        if len(found) != 1:
            return None
        binding = found[0]
        if binding.value is None or binding.augmented:
            return None
        value = binding.value
        scope, order = binding.scope, binding.order
        if binding.index is not None:
            # `grads, _ = tf.clip_by_global_norm(grads, 5.0)`
            if isinstance(value, cst.Call) and facts.resolve(value.func) in _CLIPPING and binding.index == 0:
                expr = arg_value(value, 0, "t_list")
                continue
            return None
        expr = value
    return None


def variable_list(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int) -> VariableList | None:
    """The variables `expr` lists, in order: weight collections (`model.trainable_variables`), sums of
    them, and list literals of named variables (starred collections spread in). None when any part
    cannot be read."""
    if expr is None:
        return None
    budget = [_STEPS]
    parts = _parts(facts, expr, scope, order, budget)
    return VariableList(tuple(parts), expr) if parts is not None else None


def _parts(facts: Facts, expr: cst.BaseExpression, scope: Scope, order: int, budget: list[int]) -> list[Part] | None:
    # Each call spends the shared budget, so sums and names that refer to each other end.
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if isinstance(expr, cst.Attribute) and expr.attr.value in WEIGHT_COLLECTIONS:
        owner = dotted(expr.value)
        return [Part(owner, WEIGHT_COLLECTIONS[expr.attr.value], expr.value)] if owner else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left = _parts(facts, expr.left, scope, order, budget)
        right = _parts(facts, expr.right, scope, order, budget) if left is not None else None
        return left + right if left is not None and right is not None else None
    if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
        parts: list[Part] = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                inner = _parts(facts, element.value, scope, order, budget)
                if inner is None:
                    return None
                parts.extend(inner)
                continue
            name = dotted(element.value)
            if name is None:
                return None
            identity = ",".join(str(id(b)) for b in holders(facts, name, scope, order))
            parts.append(Part(f"{name}#{identity}", "variable", element.value))
        return parts
    name = dotted(expr)
    if name is None:
        return None
    binding = _single(facts, name, scope, order)
    if binding is None:
        return None
    return _parts(facts, binding.value, binding.scope, binding.order, budget)  # type: ignore[arg-type]
