"""TL810 initial-loss-mismatch: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class InitialLossMismatch(Rule):
    """
    ## What it does
    Reports a first loss far from ln(classes), the loss of a classifier that has learned nothing.

    ## Why is this bad?
    A fresh classifier should be unsure: its cross-entropy starts near ln(C). Far above it, the outputs are already
    confident and wrong (unscaled inputs, a bad initialization), or the loss is summed instead of averaged, or
    the labels do not match the outputs.

    ## Example
    ```python
    loss_fn = keras.losses.CategoricalCrossentropy(reduction="sum")
    ```

    ## Use instead
    ```python
    loss_fn = keras.losses.CategoricalCrossentropy()
    ```

    ## Known problems
    A model with pretrained weights for this task can start lower; only losses above the band are likely. Only the
    first Keras probability loss called in the tape is judged, and only on a batch of at least
    `dead-relu-min-batch` samples (the mean loss of one or two samples strays from ln(classes) by chance).

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL810` does. Reported at the loss call, with the loss and ln(classes).

    ## Options
    `initial-loss-ratio` (default 1.0, TheDeepChecker's dev_ratio) in `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://karpathy.github.io/2019/04/25/recipe/ (verify loss at init)
    - https://github.com/thedeepchecker/thedeepchecker
    """

    code = "TL810"
    name = "initial-loss-mismatch"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
