"""TL802 zero-gradient: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class ZeroGradient(Rule):
    """
    ## What it does
    Reports trainable variables whose gradient is exactly zero (every element) at a probed step, including the
    gradient measured after the last probed update.

    ## Why is this bad?
    An all-zero gradient teaches nothing. It is the symptom of both seed reports: a softmax saturated at exactly 0/1
    and fed to a probability cross-entropy, whose clip passes no gradient, and a ReLU layer whose units are all
    dead. "Gradients are zero except on the first iteration" is this finding at the second step.

    ## Example
    ```python
    outputs = tf.nn.softmax(model(x))           # saturates after one large Adam step
    loss = tf.keras.losses.CategoricalCrossentropy()(y, outputs)
    ```

    ## Use instead
    ```python
    logits = model(x, training=True)            # a Dense(classes) head without softmax
    loss = tf.keras.losses.CategoricalCrossentropy(from_logits=True)(y, logits)
    ```

    ## Known problems
    A variable whose gradient is legitimately zero for this batch (an embedding row that no sample uses is not all
    zero, but a whole unused sub-model is) is reported too. A bias whose gradient is exactly zero while its own
    layer's kernel gets one cancels by construction (a loss of differences between outputs, `s_i - s_j`, as in
    RankNet): that is reported at info level, with the cause, and the difference's line when the probe saw it.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL802` does. Reported at the `tape.gradient` call, with the step and the variables.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/52175 ("Gradients are zero")
    - https://github.com/tensorflow/tensorflow/issues/34221 (eager loss clips, graph loss uses logits)
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy
    """

    code = "TL802"
    name = "zero-gradient"
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
