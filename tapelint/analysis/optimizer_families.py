"""Optimizer families: how an optimizer's step depends on its learning rate and on the gradient's scale.

One home for the two questions rules ask about an optimizer's arithmetic, answered from the class that
was constructed (`optimizer_creations`, which resolves the class through the imports), never from a
variable's name:
- how far does one of its first steps move a weight, for a given learning rate (`first_step`)?
- does its step grow when every gradient is multiplied by a constant (`gradient_scaling`), as the
  gradients of a per-replica mean under a multi-replica strategy are?

A `LossScaleOptimizer` wrapper has no arithmetic of its own: it is answered by the optimizer it wraps.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import boolean, number
from tapelint.analysis.facts import Facts, arg_value
from tapelint.analysis.optimizers import OptimizerCreation, applies_gradients_of, optimizer_creations
from tapelint.analysis.values import Kind, flatten, is_unknown, values
from tapelint.analysis.vocabulary import LOSS_SCALE_WRAPPERS


class Family(str, enum.Enum):
    """What an optimizer's update is made of."""

    SGD = "plain SGD"  # lr * gradient (momentum and Nesterov sum such steps)
    ADAPTIVE = "adaptive"  # lr * (running mean of g) / (running RMS of g): about lr per weight
    SIGN = "sign-based"  # lr * sign(...): exactly lr per weight
    ACCUMULATING = "accumulating"  # divides by the sum of all squared gradients so far, from a start value
    RELATIVE = "relative"  # the step is set relative to each weight's (or layer's) own norm


class GradientScaling(str, enum.Enum):
    """What happens to the step when every gradient is N times larger."""

    PROPORTIONAL = "proportional"  # N times larger
    PARTLY = "partly"  # up to N times larger, while a constant in the denominator outweighs the gradients
    INVARIANT = "invariant"  # unchanged


@dataclass(frozen=True)
class FamilyInfo:
    family: Family
    scaling: GradientScaling
    # What keeps a PARTLY optimizer from dividing the scale away (for messages), else "".
    offset: str = ""


# Keras class name (as `optimizer_class` spells it) -> its arithmetic. Sources: the update rules in
# keras/src/optimizers/*.py (Keras 3) and tf_keras' optimizers, which agree on all of this.
FAMILIES: dict[str, FamilyInfo] = {
    "SGD": FamilyInfo(Family.SGD, GradientScaling.PROPORTIONAL),
    # m / (sqrt(v) + epsilon): epsilon (1e-7) is outside the root, so any gradient above ~1e-7 is divided away.
    "Adam": FamilyInfo(Family.ADAPTIVE, GradientScaling.INVARIANT),
    "AdamW": FamilyInfo(Family.ADAPTIVE, GradientScaling.INVARIANT),
    "Nadam": FamilyInfo(Family.ADAPTIVE, GradientScaling.INVARIANT),
    "Adamax": FamilyInfo(Family.ADAPTIVE, GradientScaling.INVARIANT),  # m / (max |g| + epsilon)
    # g / sqrt(v + epsilon): epsilon (1e-7) is inside the root, so a weight whose squared gradients are not
    # well above it (RMS gradient below ~3e-4) is stepped in proportion to its gradient.
    "RMSprop": FamilyInfo(Family.ADAPTIVE, GradientScaling.PARTLY, "its `epsilon` (1e-7, inside the square root)"),
    "Lion": FamilyInfo(Family.SIGN, GradientScaling.INVARIANT),
    # g / sqrt(0.1 + sum g^2): the initial accumulator (0.1) outweighs small gradients for thousands of steps.
    "Adagrad": FamilyInfo(Family.ACCUMULATING, GradientScaling.PARTLY, "its initial accumulator (0.1)"),
    "Ftrl": FamilyInfo(Family.ACCUMULATING, GradientScaling.PARTLY, "its initial accumulator (0.1)"),
    # sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g: both roots hold epsilon (1e-7).
    "Adadelta": FamilyInfo(Family.ACCUMULATING, GradientScaling.PARTLY, "its `epsilon` (1e-7, inside the square root)"),
    # Adam's direction scaled by a per-layer trust ratio ||w|| / ||update||.
    "Lamb": FamilyInfo(Family.RELATIVE, GradientScaling.INVARIANT),
    # A step relative to each weight's RMS, on a normalised gradient.
    "Adafactor": FamilyInfo(Family.RELATIVE, GradientScaling.INVARIANT),
    # An orthogonalised (unit-scale) momentum for matrices, AdamW for the rest.
    "Muon": FamilyInfo(Family.RELATIVE, GradientScaling.INVARIANT),
}

# The positional index of `epsilon` in each constructor (Keras 3 and tf_keras agree).
_EPSILON_POSITION = {"Adam": 3, "Adamax": 3, "Nadam": 3, "RMSprop": 3, "AdamW": 4}
# Above this, epsilon and not the gradient's scale sets the step (outside the root for the Adam family,
# inside it, so squared, for RMSprop): the step is no longer "about lr per weight".
_EPSILON_LIMIT = {"Adam": 1e-3, "AdamW": 1e-3, "Adamax": 1e-3, "Nadam": 1e-3, "RMSprop": 1e-6}


def family_info(cls: str) -> FamilyInfo | None:
    """The arithmetic of an optimizer class (`Adam`), or None for a wrapper or an unknown class."""
    return FAMILIES.get(cls)


def unwrapped(facts: Facts, creation: OptimizerCreation) -> OptimizerCreation | None:
    """The optimizer that does the arithmetic: `creation` itself, or for a `LossScaleOptimizer` the
    optimizer it wraps (when the value model can tell which one it is); None when that cannot be told."""
    seen = 0
    while creation.cls in LOSS_SCALE_WRAPPERS:
        seen += 1
        if seen > 4:
            return None
        inner = arg_value(creation.node, 0, "inner_optimizer")
        if inner is None:
            inner = arg_value(creation.node, None, "optimizer")
        found = values(facts).of(inner, creation.site.scope, creation.site.order)
        made = [v for v in found if v.kind is Kind.OPTIMIZER and isinstance(v.node, cst.Call)]
        if len(made) != 1 or len(found) != 1:
            return None
        node = made[0].node
        wrapped = _creation_of(facts, node) if isinstance(node, cst.Call) else None
        if wrapped is None:
            return None
        creation = wrapped
    return creation


def wrappers_of(facts: Facts, creation: OptimizerCreation) -> list[OptimizerCreation]:
    """The `LossScaleOptimizer`s made around this optimizer (their apply calls step with its arithmetic)."""
    return [c for c in optimizer_creations(facts) if c.cls in LOSS_SCALE_WRAPPERS and c is not creation
            and unwrapped(facts, c) is creation]


def _creation_of(facts: Facts, node: cst.Call) -> OptimizerCreation | None:
    by_node = facts.cached("optimizer_families.by_node",
                           lambda: {id(c.node): c for c in optimizer_creations(facts)})
    return by_node.get(id(node))


def first_step(facts: Facts, creation: OptimizerCreation, rate: float) -> float | None:
    """How far one of the first updates of an ADAPTIVE or SIGN optimizer moves each weight, at learning
    rate `rate`, whatever the gradient's scale; None for the other families and when a setting that
    changes it (`epsilon`, `rho`, `centered`) cannot be read.

    Adam, AdamW, Adamax and Nadam correct their moments' start bias, so their first step is `rate` per
    weight; Lion's every step is `rate`. Keras' RMSprop has no bias correction: its squared-gradient
    average starts at `(1 - rho) * g^2`, so its first step is `rate / sqrt(1 - rho)` (3.2 times the rate at
    the default rho of 0.9; `rate / sqrt(rho * (1 - rho))` when centered) and it stays above the rate for
    the first tens of steps. A large `epsilon` makes the step smaller and dependent on the gradient: then
    there is no answer."""
    info = family_info(creation.cls)
    if info is None or info.family not in (Family.ADAPTIVE, Family.SIGN):
        return None
    node, site = creation.node, creation.site
    position = _EPSILON_POSITION.get(creation.cls)
    if position is not None:
        given = arg_value(node, position, "epsilon")
        if given is not None:
            epsilon = number(facts, given, site.scope, site.order)
            if epsilon is None or epsilon > _EPSILON_LIMIT[creation.cls]:
                return None
    if creation.cls != "RMSprop":
        return rate
    rho_expr = arg_value(node, 1, "rho")
    rho = 0.9 if rho_expr is None else number(facts, rho_expr, site.scope, site.order)
    centered_expr = arg_value(node, 4, "centered")
    centered = False if centered_expr is None else boolean(centered_expr)
    if rho is None or centered is None or not 0.0 <= rho < 1.0:
        return None
    spread = rho * (1.0 - rho) if centered else 1.0 - rho
    return rate / math.sqrt(spread) if spread > 0 else None


def momentum(facts: Facts, creation: OptimizerCreation) -> float | None:
    """SGD's momentum (0.0 when not given), or None when it cannot be read."""
    given = arg_value(creation.node, 1, "momentum")
    if given is None:
        return 0.0
    return number(facts, given, creation.site.scope, creation.site.order)


@dataclass(frozen=True)
class Applier:
    """An optimizer that applies a gradient call's gradients, with the arithmetic that does the work."""

    creation: OptimizerCreation  # the optimizer whose arithmetic applies (inside any LossScaleOptimizer)
    info: FamilyInfo


def optimizers_applying(facts: Facts, gradient_call: cst.Call) -> list[Applier] | None:
    """The optimizers whose apply calls (`apply_gradients`, `apply`) apply what `gradient_call` returned,
    followed through names, `zip`, clipping and parameters. None when that cannot be told: no apply call
    is found, or one's receiver may be something the value model cannot pin to an optimizer made here."""
    applies = applies_gradients_of(facts, gradient_call)
    if not applies:
        return None
    found: list[Applier] = []
    for apply in applies:
        held = set(flatten(apply.optimizers))
        if not held or is_unknown(held):
            return None
        for value in held:
            if value.kind is not Kind.OPTIMIZER or not isinstance(value.node, cst.Call):
                return None
            creation = _creation_of(facts, value.node)
            inner = unwrapped(facts, creation) if creation is not None else None
            info = family_info(inner.cls) if inner is not None else None
            if inner is None or info is None:
                return None
            if all(a.creation is not inner for a in found):
                found.append(Applier(inner, info))
    return found
