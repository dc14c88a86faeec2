"""TL801 none-gradient: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class NoneGradient(Rule):
    """
    ## What it does
    Reports trainable variables for which `tape.gradient` returned None during a probed step.

    ## Why is this bad?
    A None gradient means the loss does not depend on the variable: it was computed outside the tape, went through
    NumPy or `model.predict`, used a non-differentiable op, or belongs to a branch the loss never uses. Keras
    3's `apply_gradients` drops None gradients with at most a warning, so those weights silently never train;
    when every gradient is None it fails with "No gradients provided for any variable".

    ## Example
    ```python
    with tf.GradientTape() as tape:
        predictions = model.predict(x)   # NumPy: the tape sees nothing
        loss = loss_fn(y, predictions)
    grads = tape.gradient(loss, model.trainable_variables)   # all None
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_fn(y, predictions)
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Known problems
    Variables that are meant to be unused in this loss (a second head trained by another loss in the same tape) are
    reported too; ignore the code for that script.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL801` does. Reported at the `tape.gradient` call, with the variables that got None.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://www.tensorflow.org/guide/autodiff#cases_where_gradient_returns_none
    - https://www.tensorflow.org/api_docs/python/tf/GradientTape#gradient
    """

    code = "TL801"
    name = "none-gradient"
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
