"""Whether code runs eagerly or is traced into a graph (`tf.function`, a Keras `train_step`).

Some numerical behaviour differs between the two: in a graph Keras recovers the logits of a
`tf.nn.softmax` by looking at the producing op; eagerly it cannot. Which scopes run traced is answered
once, by `analysis/tracing.py`; this module only says how a rule that must stay silent on traced code
reads it. It lives beside TL107, its one reader.
"""

from __future__ import annotations

from tapelint.analysis.facts import Facts, Scope
from tapelint.analysis.tracing import KERAS_TRACED_STEPS, keras_step_traced, traced_scope


def runs_traced(facts: Facts, scope: Scope) -> bool:
    """True when code in `scope` may run traced: `tracing` sees it reached from a `tf.function` (or a Keras
    step compiled without `run_eagerly`), or it is a Keras step method whose mode this file cannot tell
    (compiled elsewhere: Keras traces it by default). For rules whose finding holds only eagerly, so an
    unknown mode keeps them silent."""
    if scope.is_module:
        return False
    if traced_scope(facts, scope) is not None:
        return True
    for current in scope.chain():
        if current.is_module:
            break
        if current.class_name is not None and current.simple_name in KERAS_TRACED_STEPS:
            return keras_step_traced(facts, current) is not False
    return False
