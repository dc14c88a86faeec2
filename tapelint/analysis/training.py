"""Which models does this module train with a tape, and which models are built from which?

A model is trained when the gradients of its weights are taken with `tape.gradient` (or stepped by an
apply call). A frozen backbone matters to a training loop only if it is, or is part of, such a model.
Answers come from the value model; "unknown" is reported as such.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import boolean
from tapelint.analysis.dataflow import names_in_order
from tapelint.analysis.facts import CallSite, Facts, arg_value
from tapelint.analysis.keras import WEIGHTED_LAYERS, layer_class
from tapelint.analysis.models import is_functional, is_sequential, sequential_stack
from tapelint.analysis.vocabulary import FUNCTIONAL_CLASSES, SEQUENTIAL_CLASSES
from tapelint.analysis.names import dotted
from tapelint.analysis.optimizers import apply_sites
from tapelint.analysis.values import Kind, Value, flatten, is_unknown, reaching_assignments, values

_MODEL_KINDS = (Kind.MODEL, Kind.LAYER)


@dataclass(frozen=True)
class Trained:
    models: frozenset[Value]  # models and layers whose weights get a training gradient
    unknown: bool  # some training gradient is taken for sources we cannot read


def weight_owners(found: frozenset[Value]) -> tuple[set[Value], bool]:
    """The models and layers whose weights are among `found` (to any container depth), and whether some
    of it cannot be read."""
    owners: set[Value] = set()
    unknown = False
    for value in flatten(found):
        if value.kind is Kind.VARIABLE and value.owner:
            value = next(iter(value.owner))
        if value.kind is Kind.WEIGHTS:
            for owner in flatten(value.owner):
                if owner.kind in _MODEL_KINDS:
                    owners.add(owner)
                elif owner.kind is not Kind.CONTAINER:
                    unknown = True
        elif value.kind is Kind.UNKNOWN:
            unknown = True
    return owners, unknown


def trained(facts: Facts) -> Trained:
    def compute() -> Trained:
        resolver = values(facts)
        models: set[Value] = set()
        unknown = False
        for site in facts.gradient_calls():
            found = resolver.of(arg_value(site.node, 1, "sources"), site.scope, site.order)
            owners, lost = weight_owners(found)
            models |= owners
            unknown = unknown or lost and not _only_inputs(found)
        for apply in apply_sites(facts):
            owners, lost = weight_owners(apply.variables)
            models |= owners
            unknown = unknown or lost
        return Trained(frozenset(models), unknown)

    return facts.cached("trained", compute)


def _only_inputs(found: frozenset[Value]) -> bool:
    """Sources that are plain tensors or bare variables (saliency, pixels, a latent): not weights."""
    return all(v.kind in (Kind.VARIABLE, Kind.CONTAINER, Kind.EXTERNAL) and not v.owner for v in flatten(found))


def parts(facts: Facts, model: Value) -> frozenset[Value] | None:
    """The models and layers a model is built from, to any depth (itself included), or None when its
    construction cannot be read. One answer per model, kept: rules ask it for every gradient call."""

    def compute() -> frozenset[Value] | None:
        found = _parts(facts, model, 0)
        return frozenset(found) if found is not None else None

    return facts.cached(("training.parts", model), compute)


def _parts(facts: Facts, model: Value, depth: int) -> set[Value] | None:
    # One answer per (model, depth): a functional model asks about every model used before it, and a
    # long module of such programs would otherwise ask the same questions again at every level.
    memo: dict[tuple[Value, int], frozenset[Value] | None] = facts.cached("training._parts", dict)
    key = (model, depth)
    if key not in memo:
        computed = _parts_once(facts, model, depth)
        memo[key] = frozenset(computed) if computed is not None else None
    known = memo[key]
    return set(known) if known is not None else None


def _parts_once(facts: Facts, model: Value, depth: int) -> set[Value] | None:
    out = {model}
    if depth > 6 or model.node is None:
        return out
    resolver = values(facts)
    node = model.node
    if is_sequential(facts, node):
        # Its layers, those of the list and of later `.add(...)` calls alike.
        stack = sequential_stack(facts, node)
        if stack is None:
            return None
        for entry in stack:
            if entry is None or is_unknown(entry.held):
                return None
            for element in entry.held:
                inner = _parts(facts, element, depth + 1)
                if inner is None:
                    return None
                out |= inner
        return out
    if is_functional(facts, node) and isinstance(node, cst.Call):
        # A functional model: every model or layer called in the scope that builds it, before it.
        site = facts.call_site(node)
        if site is None:
            return None
        # Every model or layer its graph is computed from (`base(x)`, `base.get_layer("pool").output`,
        # `base.output`): the names its inputs and outputs read, followed back through the assignments of
        # the scope that builds it. Models used elsewhere in that scope are no part of it.
        reads = _graph_reads(facts, node, site)
        if reads is None:
            return None
        for name, order in reads:
            for element in resolver.of(name, site.scope, order):
                if element.kind in _MODEL_KINDS and element != model:
                    out |= _parts(facts, element, depth + 1) or {element}
        return out
    if model.cls is not None and model.cls in facts.classes:
        # A subclass: what its methods store on `self`.
        for binding in facts.bindings_in_class(model.cls):
            if binding.target.startswith("self."):
                for element in flatten(resolver.binding_values(binding)):
                    if element.kind in _MODEL_KINDS and element != model:
                        out |= _parts(facts, element, depth + 1) or {element}
        return out
    return out


def _graph_reads(facts: Facts, construction: cst.Call, site: CallSite) -> list[tuple[cst.Name, int]] | None:
    """The names a functional model's graph reads, each with the point it is read at: those of the
    `Model(...)` call and, through every assignment of the building scope that may reach a read, those of
    the expressions assigned. None when the graph is larger than this walk follows."""
    found: list[tuple[cst.Name, int]] = []
    pending: list[tuple[cst.CSTNode, int]] = [(arg.value, site.order) for arg in construction.args]
    followed: set[int] = set()
    while pending:
        node, order = pending.pop()
        if len(found) > _GRAPH_READS:
            return None
        # The names it reads (dataflow's reading: not attribute tails, keyword names or lambdas), each
        # asked about by its root: `base` of `base.get_layer("pool").output`.
        for name in names_in_order(node):
            if "." in name:
                continue
            found.append((cst.Name(name), order))
            for binding in reaching_assignments(facts, name, site.scope, order):
                if binding.scope is not site.scope or id(binding) in followed:
                    continue
                followed.add(id(binding))
                value = binding.value if binding.value is not None else facts.loop_bindings.get(id(binding))
                if value is not None:
                    pending.append((value, binding.order))
    return found


_GRAPH_READS = 5000


def trains_model(facts: Facts, model: Value) -> bool | None:
    """True when a tape of this module trains `model` or a model built from it, False when every
    training gradient is read and none does, None when that cannot be told."""
    state = trained(facts)
    for candidate in state.models:
        found = parts(facts, candidate)
        if found is None:
            continue
        if model in found:
            return True
    if state.unknown or any(parts(facts, c) is None for c in state.models):
        return None
    return False


def runs_in_tape(facts: Facts, model: Value) -> bool:
    """Is `model` called inside a `with tf.GradientTape()` block (`features = backbone(x)`)?"""
    resolver = values(facts)
    for site in facts.calls:
        if site.tapes and model in resolver.of(site.node.func, site.scope, site.order):
            return True
    return False


def frozen_values(facts: Facts, expr: cst.BaseExpression, scope, order: int) -> frozenset[Value]:  # type: ignore[no-untyped-def]
    """What a `X.trainable = False` target may be (models and layers only)."""
    found = values(facts).of(expr, scope, order)
    if is_unknown(found):
        return found
    return frozenset(v for v in found if v.kind in _MODEL_KINDS)


def frozen_models(facts: Facts) -> frozenset[Value]:
    """The models (and layers) that some `X.trainable = False` in this module freezes."""

    def compute() -> frozenset[Value]:
        found: set[Value] = set()
        for binding in facts.bindings:
            target = binding.target_node
            if binding.augmented or type(target) is not cst.Attribute or target.attr.value != "trainable":
                continue
            if boolean(binding.value) is False:
                frozen = frozen_values(facts, target.value, binding.scope, binding.order)
                found |= {v for v in frozen if v.kind in _MODEL_KINDS}
        return frozenset(found)

    return facts.cached("training.frozen_models", compute)


def head_weighted_layers(facts: Facts, holder: str) -> int | None:
    """How many weighted layers sit between the model held in `holder` and the output of a model built
    on it in this module (a Sequential list, or a functional graph read back from its outputs), or
    None when no such model is found."""
    for site in facts.calls:
        if site.qualified in FUNCTIONAL_CLASSES:
            count = _layers_back(facts, arg_value(site.node, 1, "outputs"), site.scope, site.order, holder)
            if count is not None:
                return count
        elif site.qualified in SEQUENTIAL_CLASSES:
            # The layers after it, those of the list and of later `.add(...)` calls alike.
            stack = sequential_stack(facts, site.node) or ()
            names = [dotted(entry.node) if entry is not None else None for entry in stack]
            if holder in names:
                after = stack[names.index(holder) + 1:]
                return sum(1 for entry in after
                           if entry is not None and entry.layer is not None and entry.layer[0] in WEIGHTED_LAYERS)
    return None


def _layers_back(facts: Facts, expr: cst.BaseExpression | None, scope, order: int,  # type: ignore[no-untyped-def]
                 holder: str) -> int | None:
    """Walk a functional graph back from `expr` to a call (or attribute) of `holder`, counting the
    weighted layers applied on the way. Iterative; names are read with the value model's bindings."""
    resolver = values(facts)
    count = 0
    for _ in range(200):
        if expr is None:
            return None
        root = dotted(expr)
        if root is not None and (root == holder or root.startswith(holder + ".")):
            return count
        if isinstance(expr, cst.Attribute):
            inner = expr.value
            while isinstance(inner, (cst.Attribute, cst.Call, cst.Subscript)):
                inner = inner.func if isinstance(inner, cst.Call) else inner.value
            return count if dotted(inner) == holder else None
        if isinstance(expr, cst.Call):
            if dotted(expr.func) == holder:
                return count
            if not isinstance(expr.func, cst.Call):
                return None
            if layer_class(facts, expr.func) in WEIGHTED_LAYERS:
                count += 1
            expr = arg_value(expr, 0)
            continue
        if isinstance(expr, cst.Name):
            reaching = resolver.reaching(expr.value, scope, order)
            if len(reaching) != 1 or reaching[0].value is None:
                return None
            binding = reaching[0]
            expr, scope, order = binding.value, binding.scope, binding.order
            continue
        return None
    return None
