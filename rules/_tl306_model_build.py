"""When a Keras model has weights: built at construction, or only at its first call or `build()`.

A Sequential model with no `Input` (and no `input_shape=` on a layer) and a subclassed `Model` create
their variables on the first call. Until then `model.trainable_variables` is an empty list, and a list
read then stays empty: Keras 3 hands out a new list on each read. `weights_read_before_build` finds a
name bound to such a read before anything could have built the model, whose stale list is then what a
`tape.gradient` call differentiates or an apply call steps.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, CallSite, Facts, Scope, arg_value
from tapelint.analysis.models import sequential_stack
from tapelint.analysis.optimizers import apply_sites
from tapelint.analysis.values import Kind, Value, flatten, values
from tapelint.analysis.vocabulary import WEIGHT_ATTRIBUTES

_INPUTS = frozenset({"keras.Input", "keras.layers.Input", "keras.layers.InputLayer", "keras.InputLayer"})
# Layer arguments that give a Sequential model its input shape at construction.
_SHAPE_KEYWORDS = frozenset({"input_shape", "input_dim", "batch_input_shape", "batch_shape"})
# Methods that do not build a model (everything else called on it might).
# (`add` builds only when it adds an input shape, which `unbuilt_at_creation` already ruled out: it reads
# every `.add(...)` of the model's stack.)
_NOT_BUILDING = frozenset({"compile", "add"})


@dataclass(eq=False)
class EarlyWeightsRead:
    binding: Binding  # `variables = model.trainable_variables`
    model: Value  # the model, not built yet at that point
    used_at: CallSite  # a `tape.gradient` or apply call that gets the stale (empty) list


def unbuilt_at_creation(facts: Facts, model: Value) -> bool:
    """Is this model created without weights (they appear at its first call or `build()`)? False when
    that cannot be told."""
    if model.kind is not Kind.MODEL or not isinstance(model.node, cst.Call):
        return False
    call = model.node
    stack = sequential_stack(facts, call)
    if stack is not None:
        # Unbuilt when no layer, of its list or of a later `.add(...)`, gives it an input shape; a layer
        # that cannot be read might.
        listed = arg_value(call, 0, "layers")
        if listed is not None and not any(entry is not None and entry.added is None for entry in stack):
            return False
        for entry in stack:
            layer = entry.layer if entry is not None else None
            if layer is None or facts.resolve(layer[1].func) in _INPUTS:
                return False
            if any(a.keyword is not None and a.keyword.value in _SHAPE_KEYWORDS for a in layer[1].args):
                return False
        return True
    if model.cls is not None and model.cls in facts.classes:
        return values(facts).class_kind(model.cls) is Kind.MODEL and not _init_builds(facts, model.cls)
    return False


def _init_builds(facts: Facts, cls: str) -> bool:
    """Does the class's `__init__` (or a local base's) build the model: `self.build(...)`, `self(...)`,
    a functional `super().__init__(inputs, outputs)`, a `keras.Input`?"""
    seen: set[str] = set()
    current: str | None = cls
    while current is not None and current in facts.classes and current not in seen:
        seen.add(current)
        info = facts.classes[current]
        init = info.methods.get("__init__")
        if init is not None:
            for site in facts.calls:
                if site.scope is not init:
                    continue
                if site.func in ("self", "self.build", "self.call", "self.__call__") or site.qualified in _INPUTS:
                    return True
                if site.method == "__init__" and (site.node.args and any(
                        a.keyword is None or a.keyword.value in ("inputs", "outputs") for a in site.node.args)):
                    return True
        current = next((b for b in info.bases if b in facts.classes), None)
    return False


def weights_read_before_build(facts: Facts) -> list[EarlyWeightsRead]:
    def compute() -> list[EarlyWeightsRead]:
        resolver = values(facts)
        found: list[EarlyWeightsRead] = []
        for binding in facts.bindings:
            value = binding.value
            if (type(value) is not cst.Attribute or value.attr.value not in WEIGHT_ATTRIBUTES
                    or binding.index is not None or binding.path or binding.augmented or binding.class_body
                    or binding.comprehension is not None):
                continue
            if not _bound_once(facts, binding):
                continue
            owners = resolver.of(value.value, binding.scope, binding.order)
            if len(owners) != 1:
                continue
            model = next(iter(owners))
            if not unbuilt_at_creation(facts, model) or _maybe_built(facts, model, binding):
                continue
            used = _stale_use(facts, value)
            if used is not None:
                found.append(EarlyWeightsRead(binding, model, used))
        return found

    return facts.cached("weights_read_before_build", compute)


def _bound_once(facts: Facts, binding: Binding) -> bool:
    """The name (or `self.` attribute) is bound only here, so every later read sees this list."""
    target = binding.target
    if target.startswith("self."):
        cls = binding.scope.class_name
        return cls is not None and len([b for b in facts.bindings_of(target) if b.scope.class_name == cls]) == 1
    if "." in target:
        return False
    return len([b for b in facts.bindings_of(target) if b.scope is binding.scope]) == 1


def _maybe_built(facts: Facts, model: Value, read: Binding) -> bool:
    """Could something build the model before `read`: a call of it, a method call on it (other than
    `compile`), handing it to any call, or a call of a local function, between where the reading scope
    gets the model and the read; or any of that in the function that creates it, when that is another
    scope (a factory)?"""
    resolver = values(facts)
    scope = read.scope
    start = _obtained_at(facts, model, read)
    if start is None:
        return True
    creation = facts.call_site(model.node) if isinstance(model.node, cst.Call) else None
    factory = creation.scope if creation is not None and creation.scope is not scope else None
    for site in facts.calls:
        if site.scope is scope and start < site.order < read.order:
            if _builds(facts, resolver, site, model):
                return True
        elif factory is not None and site.scope is factory and site.order > creation.order:  # type: ignore[union-attr]
            if _builds(facts, resolver, site, model):
                return True
    return False


def _obtained_at(facts: Facts, model: Value, read: Binding) -> int | None:
    """The order, in the reading scope, of the last binding before the read that holds the model."""
    resolver = values(facts)
    best = None
    for binding in facts.bindings:
        if binding.scope is not read.scope or binding.order >= read.order or binding is read:
            continue
        if binding.target == read.target:
            continue
        if model in set(flatten(resolver.binding_values(binding))):
            best = binding.ready if best is None else max(best, binding.ready)
    return best


def _builds(facts: Facts, resolver, site: CallSite, model: Value) -> bool:  # type: ignore[no-untyped-def]
    scope: Scope = site.scope
    callee = resolver.of(site.node.func, scope, site.order)
    if model in callee:
        return True  # `model(x)`
    builtin = isinstance(site.node.func, cst.Name) and hasattr(builtins, site.node.func.value) and all(
        v.kind is Kind.UNKNOWN for v in callee)
    if not builtin and not isinstance(site.node.func, cst.Attribute) and any(
            v.kind in (Kind.FUNCTION, Kind.CLASS, Kind.UNKNOWN) for v in callee):
        return True  # a local helper (or something unknown) might call or build it
    if isinstance(site.node.func, cst.Attribute) and site.method not in _NOT_BUILDING:
        if model in resolver.of(site.node.func.value, scope, site.order):
            if site.method == "build" and _build_is_a_no_op(facts, model) and not site.node.args[1:]:
                pass  # Keras 3: a subclass without its own `build` gets no weights from `build(shape)`
            else:
                return True  # `model.build(...)`, `model.fit(...)`, `model.predict(...)`
    for arg in site.node.args:
        if model in set(flatten(resolver.of(arg.value, scope, site.order))):
            return True
    return False


def _build_is_a_no_op(facts: Facts, model: Value) -> bool:
    """A local `keras.Model` subclass that defines no `build` (nor does a local base): on Keras 3.15
    `model.build((None, 4))` then marks it built and creates no variables (measured on TF 2.21)."""
    cls = model.cls
    if cls is None or cls not in facts.classes:
        return False
    seen: set[str] = set()
    current: str | None = cls
    while current is not None and current in facts.classes and current not in seen:
        seen.add(current)
        if "build" in facts.classes[current].methods:
            return False
        current = next((b for b in facts.classes[current].bases if b in facts.classes), None)
    return True


def _stale_use(facts: Facts, read: cst.Attribute) -> CallSite | None:
    """A `tape.gradient` call whose sources, or an apply call whose variables, are the list read at
    `read`."""
    resolver = values(facts)

    def is_stale(found: frozenset[Value]) -> bool:
        for v in flatten(found):
            if v.kind is Kind.WEIGHTS and v.node is read:
                return True
            if v.kind is Kind.VARIABLE and any(o.kind is Kind.WEIGHTS and o.node is read for o in v.owner):
                return True
        return False

    for site in facts.gradient_calls():
        if is_stale(resolver.of(arg_value(site.node, 1, "sources"), site.scope, site.order)):
            return site
    for apply in apply_sites(facts):
        if is_stale(apply.variables):
            return apply.site
    return None
