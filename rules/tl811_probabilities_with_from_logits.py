"""TL811 probabilities-with-from-logits: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class ProbabilitiesWithFromLogits(Rule):
    """
    ## What it does
    Reports a loss built with `from_logits=True` that receives probabilities: values in [0, 1] whose rows sum to 1,
    or the output of a Keras softmax or sigmoid.

    ## Why is this bad?
    The loss applies a softmax to values that already went through one: the predictions are squashed towards uniform
    and the gradients shrink, so the model learns slowly or not at all. Keras 3 recovers the logits of its own
    softmax layer and only warns, but a raw `tf.nn.softmax` (and tf_keras before 2.6) does not.

    ## Example
    ```python
    model = keras.Sequential([..., keras.layers.Dense(10, activation="softmax")])
    loss_fn = keras.losses.CategoricalCrossentropy(from_logits=True)
    ```

    ## Use instead
    ```python
    model = keras.Sequential([..., keras.layers.Dense(10)])
    loss_fn = keras.losses.CategoricalCrossentropy(from_logits=True)
    ```

    ## Known problems
    Binary outputs of one column are reported only when Keras marks them as a sigmoid's output.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL811` does. Reported at the loss's creation, with the range of the values it received.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy
    - https://github.com/tensorflow/tensorflow/issues/35585 (remove the softmax, use from_logits=True)
    """

    code = "TL811"
    name = "probabilities-with-from-logits"
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
