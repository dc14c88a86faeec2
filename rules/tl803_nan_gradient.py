"""TL803 nan-gradient: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class NanGradient(Rule):
    """
    ## What it does
    Reports NaN or Inf in a gradient or in the loss at a probed step.

    ## Why is this bad?
    One non-finite gradient turns every weight it reaches into NaN at the next update, and training is over. Usual
    causes: `log(0)` in a hand-written cross-entropy, a division by a zero norm, an exploding learning rate,
    float16 overflow without loss scaling.

    ## Example
    ```python
    loss = -tf.reduce_mean(y * tf.math.log(tf.nn.softmax(logits)))   # log(0) -> -inf
    ```

    ## Use instead
    ```python
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))
    ```

    ## Known problems
    The probe reports the first step with a non-finite value; to find the op that produced it, run the script with
    `tf.debugging.enable_check_numerics()`.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL803` does. Reported at the `tape.gradient` call, with the variables and the loss value.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/debugging/enable_check_numerics
    - https://stackoverflow.com/questions/33712178/tensorflow-nan-bug
    """

    code = "TL803"
    name = "nan-gradient"
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
