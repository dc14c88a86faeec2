"""TL812 training-flag-not-set: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class TrainingFlagNotSet(Rule):
    """
    ## What it does
    Reports a model with Dropout or trainable BatchNormalization layers called inside the tape without
    `training=True`.

    ## Why is this bad?
    Without the flag, Dropout is off and BatchNormalization uses (and does not update) its moving statistics: the
    loop trains a different model from the one `fit` trains, one of the two usual reasons why `fit` learns and a
    hand-written loop does not.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    ```

    ## Known problems
    An explicit `training=False` is taken as intended (a frozen backbone with BatchNormalization) and not reported.
    BatchNormalization layers with `trainable=False` run in inference mode anyway and do not count.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL812` does. Reported at the model call, with the layers that change behaviour.

    ## Options
    None.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://keras.io/guides/transfer_learning/ (training=False for a frozen BatchNormalization)
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
    - `examples/seed2_vgg_cifar_loop.py`, a reproduction of the Stack Overflow question "Tensorflow 2
      Gradient Tape not working as expected" (the loop calls `model(x)` without `training=True`)
    - https://github.com/keras-team/keras/issues/15306 (a CIFAR-10 GradientTape loop that does not learn
      while `fit` does)
    """

    code = "TL812"
    name = "training-flag-not-set"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
