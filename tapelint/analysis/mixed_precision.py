"""Mixed precision: whether a `mixed_float16` policy is set, and how a loop scales its loss.

`mixed_bfloat16` needs no loss scaling and does not count.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.constants import string
from tapelint.analysis.facts import CallSite, Facts, Scope, arg_value
from tapelint.analysis.names import dotted

POLICY_SETTERS = frozenset(
    {
        "keras.mixed_precision.set_global_policy", "keras.mixed_precision.experimental.set_policy",
        "keras.mixed_precision.set_policy", "keras.config.set_dtype_policy", "keras.backend.set_floatx",
    }
)
POLICY_CLASSES = frozenset(
    {
        "keras.mixed_precision.Policy", "keras.mixed_precision.experimental.Policy", "keras.DTypePolicy",
        "keras.dtype_policies.DTypePolicy", "keras.mixed_precision.DTypePolicy",
    }
)
SCALE_METHODS = frozenset({"scale_loss", "get_scaled_loss"})
UNSCALE_METHODS = frozenset({"get_unscaled_gradients"})


def _policy_name(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int, depth: int = 0) -> str | None:
    if expr is None or depth > 4:
        return None
    text = string(expr)
    if text is not None:
        return text
    if isinstance(expr, cst.Call) and facts.resolve(expr.func) in POLICY_CLASSES:
        return _policy_name(facts, arg_value(expr, 0, "name"), scope, order, depth + 1)
    name = dotted(expr)
    if name is not None:
        binding = facts.binding_before(name, scope, order)
        if binding is not None and binding.value is not None and binding.index is None:
            return _policy_name(facts, binding.value, binding.scope, binding.order, depth + 1)
    return None


def float16_policy(facts: Facts) -> CallSite | None:
    """The call that sets a global `mixed_float16` (or `float16`) policy, if any."""

    def compute() -> CallSite | None:
        for site in facts.calls:
            if site.qualified not in POLICY_SETTERS:
                continue
            name = _policy_name(facts, arg_value(site.node, 0), site.scope, site.order)
            if name in ("mixed_float16", "float16"):
                return site
        return None

    return facts.cached("float16_policy", compute)  # type: ignore[return-value]


@dataclass
class ScalingUse:
    scales: list[CallSite]
    unscales: list[CallSite]


def scaling_in(facts: Facts, scope: Scope) -> ScalingUse:
    """`scale_loss`/`get_scaled_loss` and `get_unscaled_gradients` calls in `scope` and the helpers it calls."""
    scopes = [scope]
    for site in facts.calls:
        if site.scope is scope and site.func in facts.functions:
            target = facts.functions[site.func]
            if target not in scopes:
                scopes.append(target)
        elif site.scope is scope and site.func and site.func.startswith("self.") and scope.class_name:
            cls = facts.classes.get(scope.class_name)
            target = cls.methods.get(site.func[5:]) if cls else None
            if target is not None and target not in scopes:
                scopes.append(target)
    scales = [c for c in facts.calls if c.method in SCALE_METHODS and any(c.scope is s for s in scopes)]
    unscales = [c for c in facts.calls if c.method in UNSCALE_METHODS and any(c.scope is s for s in scopes)]
    return ScalingUse(scales, unscales)
