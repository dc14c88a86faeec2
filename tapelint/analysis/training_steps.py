"""Which `tape.gradient` calls are training steps (their gradients reach an optimizer).

A gradient penalty's inner tape, a saliency map or a physics residual also call `tape.gradient`,
but their "loss" is not the training loss; rules about the training loss skip them.
"""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import CallSite, Facts, arg_value
from tapelint.analysis.keras import APPLY_METHODS
from tapelint.analysis.names import dotted

_PARAMETER_WORDS = ("trainable", "variables", "weights", "params")


def _text(facts: Facts, node: cst.CSTNode | None) -> str:
    return facts.module.code_for_node(node) if node is not None else ""


def is_training_gradient(facts: Facts, call: CallSite) -> bool:
    sources = arg_value(call.node, 1, "sources")
    if sources is None:
        return False
    text = _text(facts, sources)
    if any(word in text for word in _PARAMETER_WORDS):
        return True
    name = dotted(sources)
    if name is not None:
        binding = facts.binding_before(name, call.scope, call.order)
        if binding is not None and binding.value is not None:
            bound = _text(facts, binding.value)
            if any(word in bound for word in _PARAMETER_WORDS):
                return True
    # `grads = tape.gradient(loss, vs)` ... `opt.apply_gradients(zip(grads, vs))`
    holders = [b.target for b in facts.bindings if b.value is call.node]
    for site in facts.calls:
        if site.method in APPLY_METHODS and site.scope is call.scope and site.order > call.order:
            args = _text(facts, site.node)
            if any(h and h in args for h in holders) or _text(facts, call.node) in args:
                return True
    return False
