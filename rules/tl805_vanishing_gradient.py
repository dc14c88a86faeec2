"""TL805 vanishing-gradient: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class VanishingGradient(Rule):
    """
    ## What it does
    Reports a gradient that fades away before it reaches the first layers.

    ## Why is this bad?
    When the first kernel's gradient is a thousandth of the last kernel's and tiny in absolute terms, the first
    layers effectively do not train. Deep stacks of sigmoid or tanh layers without normalization or skip
    connections are the classic cause.

    ## Example
    ```python
    model = keras.Sequential([keras.layers.Dense(32, activation="sigmoid") for _ in range(12)] + [keras.layers.Dense(10)])
    ```

    ## Use instead
    ```python
    model = keras.Sequential([keras.layers.Dense(32, activation="relu") for _ in range(12)] + [keras.layers.Dense(10)])
    ```

    ## Known problems
    Only the first probed step (the initialization) is judged. The first and last kernels are the first and last
    variables with two or more dimensions in the list given to one `tape.gradient` call (a GAN's generator is not
    compared with its discriminator), leaving out kernels whose gradient is None or exactly zero (TL801, TL802). A
    row-sparse gradient (an Embedding's) is averaged over the rows the batch touched.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL805` does. Reported at the first layer's creation, with both mean gradients and their ratio.

    ## Options
    `vanishing-ratio` (default 1e-3, AUTOTRAINER's beta1) and `vanishing-floor` (default 1e-4, AUTOTRAINER's beta2),
    both on the mean absolute gradient, in `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://github.com/shiningrain/AUTOTRAINER
    - https://github.com/thedeepchecker/thedeepchecker (vanishing gradients below 1e-6)
    - https://www.tensorflow.org/api_docs/python/tf/keras/layers/BatchNormalization
    """

    code = "TL805"
    name = "vanishing-gradient"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
