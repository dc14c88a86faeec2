"""Whether code runs eagerly or is traced into a graph (`tf.function`, a Keras `train_step`).

Some numerical behaviour differs between the two: in a graph Keras recovers the logits of a
`tf.nn.softmax` by looking at the producing op; eagerly it cannot.
"""

from __future__ import annotations

from tapelint.analysis.facts import TF_FUNCTION, Facts, Scope
from tapelint.analysis.names import dotted

# Methods Keras itself wraps in a tf.function (unless `run_eagerly=True`).
KERAS_TRACED_METHODS = frozenset({"train_step", "test_step", "predict_step"})


def _wrapped_by_tf_function(facts: Facts, name: str) -> bool:
    for site in facts.calls:
        if site.qualified in TF_FUNCTION:
            for arg in site.node.args:
                if dotted(arg.value) == name:
                    return True
    return False


def runs_traced(facts: Facts, scope: Scope, depth: int = 0) -> bool:
    """True when code in `scope` runs inside a `tf.function` (or Keras' traced step) on every path seen."""
    if depth > 4 or scope.is_module:
        return False
    for current in scope.chain():
        if current.is_module:
            break
        if current.is_tf_function:
            return True
        if current.class_name is not None and current.simple_name in KERAS_TRACED_METHODS:
            return not facts.cached("mentions_run_eagerly", lambda: "run_eagerly" in facts.module.code)
        name = current.simple_name if current.class_name is None else f"self.{current.simple_name}"
        if current.parent is not None and current.parent.is_module and _wrapped_by_tf_function(facts, name):
            return True
    callers = [site.scope for site in facts.call_sites_of_scope(scope)]
    if scope.class_name is None and not callers:
        # Passed on rather than called: `strategy.run(train_step, args=...)` inside a tf.function.
        callers = [use.scope for use in facts.name_uses
                   if use.name == scope.simple_name and not (scope.parent and use.scope is scope)]
    return bool(callers) and all(runs_traced(facts, caller, depth + 1) for caller in callers)
