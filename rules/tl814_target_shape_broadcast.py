"""TL814 target-shape-broadcast-at-runtime: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class TargetShapeBroadcast(Rule):
    """
    ## What it does
    Reports targets and predictions whose shapes broadcast inside the loss, such as (B,) against (B, 1), which gives
    a (B, B) loss.

    ## Why is this bad?
    Every target is compared with every prediction: the loss is the distance to the batch mean, and the model learns
    to predict it. `fit` reshapes the targets; a hand-written loop does not.

    ## Example
    ```python
    loss = tf.reduce_mean(tf.square(y - model(x, training=True)))   # y: (B,), output: (B, 1)
    ```

    ## Use instead
    ```python
    loss = keras.losses.MeanSquaredError()(y, model(x, training=True))   # Keras aligns the ranks
    ```

    ## Known problems
    Seen through Keras `Loss` subclasses that do not align ranks themselves, through a non-scalar loss of shape
    (B, B) given to `tape.gradient`, and in a hand-written loss through a TensorFlow op callback that runs only
    during the probed steps, from the model's call to `tape.gradient`: an element-wise op whose operands are (B,)
    and (B, 1), B > 1, whose output is (B, B), and exactly one of whose operands was computed from the model's
    output. A deliberate pairwise difference of two model outputs (RankNet's `s_i - s_j`) is not reported.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL814` does. Reported at the loss call, with both shapes.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/MeanSquaredError
    - https://numpy.org/doc/stable/user/basics.broadcasting.html
    """

    code = "TL814"
    name = "target-shape-broadcast-at-runtime"  # TL110 (its static twin) has the plain name (issue 9)
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
