"""Which `tape.gradient` calls are training steps (their gradients are for weights an optimizer steps).

A gradient penalty's inner tape, a saliency map or a physics residual also call `tape.gradient`,
but their "loss" is not the training loss; rules about the training loss skip them. The answer comes
from the value model, never from the names or the text of the code.
"""

from __future__ import annotations

from tapelint.analysis.facts import CallSite, Facts, arg_value
from tapelint.analysis.optimizers import applies_gradients_of
from tapelint.analysis.values import Kind, flatten, values_of


def is_training_gradient(facts: Facts, call: CallSite) -> bool:
    """The sources are a model's weights or trainable variables, or the result reaches an apply call."""
    sources = arg_value(call.node, 1, "sources")
    if sources is None:
        return False
    found = values_of(facts, sources, call.scope, call.order)
    if any(v.kind is Kind.WEIGHTS or (v.kind is Kind.VARIABLE and v.owner) for v in flatten(found)):
        return True  # a model's weights (a bare variable counts only if an optimizer steps it)
    return bool(applies_gradients_of(facts, call.node))
