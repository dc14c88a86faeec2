"""TL813 saturated-output: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class SaturatedOutput(Rule):
    """
    ## What it does
    Reports probability outputs saturated at exactly 0 or 1 in float32 and fed to a probability cross-entropy, so
    that those samples pass no gradient, on either side of the clip.

    ## Why is this bad?
    Keras clips the probabilities to [1e-7, 1 - 1e-7] and a clip passes no gradient. Once a wrong sample's true-
    class probability is below 1e-7, it adds about 16.1 to the loss and nothing to the gradient: the gradients
    are exactly zero and the loss is stuck. This is the signature of both reproductions in `examples/`
    (`seed1_frozen_vgg_head.py`, `seed2_vgg_cifar_loop.py`, from two Stack Overflow questions). Keras 3
    avoids it for its own softmax layer by using the logits; a raw `tf.nn.softmax` still takes the clipped path.

    ## Example
    ```python
    probabilities = tf.nn.softmax(model(x))
    loss = keras.losses.CategoricalCrossentropy()(y, probabilities)
    ```

    ## Use instead
    ```python
    logits = model(x, training=True)
    loss = keras.losses.CategoricalCrossentropy(from_logits=True)(y, logits)
    ```

    ## Known problems
    Outputs that Keras marks as coming from its own softmax or sigmoid are not reported, since Keras then uses the
    logits. Functional losses (`keras.losses.categorical_crossentropy`) are not seen. Reported when at least
    `saturated-fraction` of the samples are clipped (true-class probability below 1e-7 or above 1 - 1e-7) and a
    step's gradients are all exactly zero; batches below `dead-relu-min-batch` are pooled over steps first. It is
    reported from the first step where it occurs: the first clipped sample starts the window, and the all-zero
    gradient may come in the saturated steps right after it.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL813` does. Reported at the loss call, with the saturated share, the largest probability and the loss.

    ## Options
    `saturated-fraction` (default 0.5, DeepDiagnosis's saturation share) in `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/34221
    - https://github.com/tensorflow/tensorflow/issues/32869 (softmax layer logits not used)
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow"
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected"
    - https://github.com/tensorflow/tensorflow/issues/52175 ("gradients are zero except the first time")
    - https://github.com/keras-team/keras/issues/15306 (a CIFAR-10 GradientTape loop that does not learn
      while `fit` does)
    """

    code = "TL813"
    name = "saturated-output"
    message = "{details}"
    severity = Severity.ERROR
    runtime_only = True
