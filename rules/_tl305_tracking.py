"""Which variables a Keras 3 layer or model does not track: raw `tf.Variable`s kept on `self`.

Keras 3 collects a layer's weights from `keras.Variable`s (what `add_weight` makes) and from the layers
it holds; a `tf.Variable` stored as an attribute is not among `trainable_variables`, `weights` or what
`save_weights` writes. `untracked_variables` finds `self.x = tf.Variable(...)` in the methods of local
subclasses of Keras layers and models, and says whether the variable still reaches a gradient or an
apply call by another way (`tape.gradient(loss, [layer.w])`), which is what trains it then.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import Binding, CallSite, Facts, arg_value
from tapelint.analysis.optimizers import apply_sites
from tapelint.analysis.values import Kind, Value, flatten, values

# The one class whose instances Keras 3 does not track when kept on a layer.
_RAW_VARIABLE = "tensorflow.Variable"
# Properties that a class may override to hand its own variables to the training loop.
_WEIGHT_PROPERTIES = frozenset({"trainable_variables", "trainable_weights", "variables", "weights"})


@dataclass(eq=False)
class UntrackedVariable:
    binding: Binding  # `self.w = tf.Variable(...)`
    site: CallSite  # the `tf.Variable(...)` call
    cls: str  # the local class whose method stores it
    kind: Kind  # MODEL or LAYER
    trainable: bool  # False for `trainable=False`
    differentiated: bool  # reaches a `tape.gradient` source or an apply call directly
    fitted: bool = False  # an instance of the class (a model) is trained with `fit`/`train_on_batch`

    @property
    def attribute(self) -> str:
        return self.binding.target[len("self."):]


def untracked_variables(facts: Facts) -> list[UntrackedVariable]:
    """`self.<attr> = tf.Variable(...)` in local Keras layer/model subclasses (any method)."""

    def compute() -> list[UntrackedVariable]:
        resolver = values(facts)
        found: list[UntrackedVariable] = []
        for binding in facts.bindings:
            cls = binding.scope.class_name
            if cls is None or binding.index is not None or binding.path:
                continue
            target = binding.target
            if not target.startswith("self.") or target.count(".") != 1:
                continue
            value = binding.value
            if not isinstance(value, cst.Call):
                continue
            site = facts.call_site(value)
            if site is None or site.qualified != _RAW_VARIABLE:
                continue
            kind = resolver.class_kind(cls)
            if kind not in (Kind.MODEL, Kind.LAYER):
                continue
            if not any(base.startswith("keras.") for base in resolver.library_bases(cls)):
                continue
            if _overrides_weights(facts, cls):
                continue
            found.append(UntrackedVariable(binding, site, cls, kind, _trainable(value),
                                           _differentiated(facts, value), _fitted(facts, cls)))
        return found

    return facts.cached("untracked_variables", compute)


def _trainable(call: cst.Call) -> bool:
    arg = arg_value(call, 1, "trainable")
    return not (isinstance(arg, cst.Name) and arg.value == "False")


def _overrides_weights(facts: Facts, cls: str) -> bool:
    """Does the class (or a local base) define `trainable_variables` & co. itself?"""
    seen: set[str] = set()
    current: str | None = cls
    while current is not None and current in facts.classes and current not in seen:
        seen.add(current)
        info = facts.classes[current]
        if _WEIGHT_PROPERTIES & set(info.methods):
            return True
        current = next((b for b in info.bases if b in facts.classes), None)
    return False


_FIT_METHODS = frozenset({"fit", "train_on_batch", "fit_generator"})


def _fitted(facts: Facts, cls: str) -> bool:
    """Is a model of this class trained by Keras itself (`model.fit(...)`), which steps only the
    tracked weights, whatever a hand-written loop elsewhere does with the attribute?"""
    resolver = values(facts)
    for site in facts.calls:
        if site.method not in _FIT_METHODS or not isinstance(site.node.func, cst.Attribute):
            continue
        receiver = resolver.of(site.node.func.value, site.scope, site.order)
        if any(v.kind is Kind.MODEL and v.cls == cls for v in receiver):
            return True
    return False


def _differentiated(facts: Facts, call: cst.Call) -> bool:
    """Is the variable made by `call` handed to `tape.gradient` as a source, or stepped by an apply
    call, other than through the layer's weight lists? Unknown sources count as yes."""
    resolver = values(facts)

    def holds(found: frozenset[Value]) -> bool:
        flat = list(flatten(found))
        return any(v.kind is Kind.VARIABLE and v.node is call for v in flat) or any(
            v.kind is Kind.UNKNOWN for v in flat)

    for site in facts.gradient_calls():
        if holds(resolver.of(arg_value(site.node, 1, "sources"), site.scope, site.order)):
            return True
    for apply in apply_sites(facts):
        if holds(apply.variables):
            return True
    return False
