"""TL808 update-too-large: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class UpdateTooLarge(Rule):
    """
    ## What it does
    Reports an update that moves a kernel by more than a tenth of its norm in one step.

    ## Why is this bad?
    A healthy update is about 1e-3 of the weights. One that moves a kernel by a tenth or more overshoots: ReLU units
    die, softmax outputs saturate, the loss jumps. Adam moves every weight by about the learning rate in its
    first step whatever the gradient, so Adam(0.01) on a fresh head is the usual cause.

    ## Example
    ```python
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    ```

    ## Use instead
    ```python
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    ```

    ## Known problems
    Only kernels (variables with two or more dimensions) whose norm is not zero are judged; biases start at zero.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL808` does. Reported at the optimizer's creation, with the largest ratios and the learning rate.

    ## Options
    `update-ratio-max` (default 0.1, TheDeepChecker's upper bound of -1 on log10 |dw|/|w|) in
    `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://cs231n.github.io/neural-networks-3/#ratio (update/weight ratio around 1e-3)
    - https://github.com/thedeepchecker/thedeepchecker
    """

    code = "TL808"
    name = "update-too-large"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
