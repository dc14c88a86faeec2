"""TL807 weights-not-updated: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class WeightsNotUpdated(Rule):
    """
    ## What it does
    Reports a step after which the weights did not change: the gradients reached no optimizer, or some variables
    with a non-zero gradient were left out of the update.

    ## Why is this bad?
    If no weight changes, nothing learns, whatever the loss curve printed. `examples/seed1_frozen_vgg_head.py`
    computes gradients and never calls `apply_gradients`. The probe compares every trainable variable before the
    gradient and at the next gradient call (or the end of the script), so it also catches a variable list that
    misses a layer and a learning rate of zero.

    ## Example
    ```python
    grads = tape.gradient(loss, model.trainable_variables)
    losses.append(loss)                         # no optimizer step
    ```

    ## Use instead
    ```python
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Known problems
    Gradients accumulated over several batches before one update are recognised when an op reads them (summed into
    an accumulator): the probe runs on until the update (at most 32 steps more), and steps folded into a later update
    are not reported. Two gradients from one persistent tape before one update are one step. A step that a
    LossScaleOptimizer skipped because its gradients were not finite is not reported (the report says "update
    skipped: gradients not finite"), nor a step that the script's own error cut short.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL807` does. Reported at the creation of the optimizer that was never applied, or at the `tape.gradient` call.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow" (the gradients are computed, `apply_gradients` is never called)
    """

    code = "TL807"
    name = "weights-not-updated"
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
