"""TL806 exploding-gradient: a finding of the runtime probe (`tapelint probe`); the static pass never runs it."""

from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Rule


class ExplodingGradient(Rule):
    """
    ## What it does
    Reports a gradient that grows by orders of magnitude towards the first layers.

    ## Why is this bad?
    A first-layer gradient 70 times the last layer's and above 1 makes the first layers take huge steps: the loss
    jumps, and NaN follows. Unscaled inputs and deep stacks without normalization are the usual causes.

    ## Example
    ```python
    x = raw_counts                              # values in the thousands
    loss = loss_fn(y, model(x, training=True))
    ```

    ## Use instead
    ```python
    x = (raw_counts - mean) / std
    loss = loss_fn(y, model(x, training=True))
    ```

    ## Known problems
    Only the first probed step is judged. Convolutional first layers collect gradient over every position, so their
    mean gradient runs higher than a Dense head's; `exploding-floor` keeps that from firing alone.

    Runtime only: the probe reports it while running the script (`tapelint probe SCRIPT` or
    `tapelint PATH --probe SCRIPT`); `# noqa` does not apply, `--ignore TL806` does. Reported at the first layer's creation, with both mean gradients and their ratio.

    ## Options
    `exploding-ratio` (default 70, AUTOTRAINER's beta3) and `exploding-floor` (default 1.0) in
    `[tool.tapelint.probe]`.

    ## Fix safety
    No automatic fix: the finding comes from running the code, not from its text.

    ## References
    - https://github.com/shiningrain/AUTOTRAINER
    - https://www.tensorflow.org/api_docs/python/tf/clip_by_global_norm
    """

    code = "TL806"
    name = "exploding-gradient"
    message = "{details}"
    severity = Severity.WARNING
    runtime_only = True
