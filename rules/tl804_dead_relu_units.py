"""TL804 dead-relu-units: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class DeadReluUnits(Rule):
    """
    ## What it does
    Reports ReLU layers in which too many units get an all-zero gradient for the whole batch.

    ## Why is this bad?
    A unit whose kernel column has an all-zero gradient did not fire for any sample of the batch: it is dead and
    will stay dead, since nothing pushes its weights back. In `examples/seed1_frozen_vgg_head.py`, Adam at 0.01 on
    unnormalized 0..255 images takes the share of dead Dense(64, relu) units from 48% to 98% in five steps, and the
    head stops learning.

    ## Example
    ```python
    model = keras.Sequential([..., keras.layers.Dense(64, activation="relu"), keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam(learning_rate=0.01)    # on 0..255 inputs
    ```

    ## Use instead
    ```python
    inputs = images / 255.0                                    # or a Rescaling(1/255) layer
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    ```

    ## Known problems
    Only Dense and Conv layers whose own activation is relu or relu6 are judged; a separate `ReLU()` layer after a
    linear one is not. Batches smaller than `dead-relu-min-batch` are pooled: the units that got a gradient from any
    sample are collected over consecutive steps until a window holds that many samples (the probe runs past `--steps`
    until it has two windows, at most 32 steps more). A sample whose gradient to the whole kernel is exactly zero
    while the loss still passed one back (the next layer got one) counts: every unit is dead for it. A sample for
    which every gradient is zero (the loss passed nothing back: TL802, TL813) says nothing about units and is left
    out. A pooled window is reported at 90% dead, or at the threshold when it grew by 20 points since the first
    window; with too few samples the report says "not judged (batch 1, N samples ...)".

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL804` does. Reported at the layer's creation, with the dead share at every probed step.

    ## Options
    `dead-relu-fraction` (default 0.7: AUTOTRAINER's dying-ReLU threshold and DeepDiagnosis's dead-node threshold)
    and `dead-relu-min-batch` (default 8) in `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://github.com/keras-team/keras/issues/7057 (dying ReLU with a high learning rate)
    - https://github.com/shiningrain/AUTOTRAINER (dying ReLU at 70% zero gradients)
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow" (Adam at 0.01 on 0..255 images kills the Dense(64, relu) head)
    - https://github.com/tensorflow/tensorflow/issues/52175 ("gradients are zero except the first time")
    """

    code = "TL804"
    name = "dead-relu-units"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
