from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class UnusedNoqa(Rule):
    """
    ## What it does
    Reports a `# noqa` comment, or a tapelint code in one (`# noqa: TL201`), that suppresses nothing
    on its line. Off by default: enable it with `--extend-select TL900` or
    `extend-select = ["TL900"]`.

    ## Why is this bad?
    A suppression outlives the problem it silenced: once the learning rate is lowered or the loss is
    fixed, a leftover `# noqa: TL201` silently hides the next real finding on that line. Cleaning up
    stale suppressions keeps them meaningful.

    ## Example
    ```python
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)  # noqa: TL201
    ```

    ## Use instead
    ```python
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
    ```

    ## Known problems
    Only tapelint's own codes (and rule names) are judged, and only for rules that ran on the file:
    `# noqa: E501` belongs to other linters and is left alone, and a code whose rule is disabled or
    ignored for the file is not called unused. A bare `# noqa` is reported when tapelint finds nothing
    on its line, even if another linter uses it; write codes (`# noqa: E501`) to keep it.

    ## Options
    None.

    ## Fix safety
    Safe: the fix removes the unused codes, or the whole `noqa` comment when nothing is left in it.
    Nothing that is reported today becomes hidden or visible.

    ## References
    - https://docs.astral.sh/ruff/rules/unused-noqa/ (the same check in ruff, RUF100)
    - https://pylint.readthedocs.io/en/latest/user_guide/messages/information/useless-suppression.html
    """

    code = "TL900"
    name = "unused-noqa"
    message = "Unused `noqa` for {codes}: no such finding on this line"
    severity = Severity.WARNING
    default_enabled = False
    fixable = True
    triggers = ("noqa",)
    # The engine does the work: it needs every other rule's findings on the file first.

    VALID = [
        Valid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.001)  # noqa: TL501\n",
            "the suppression hides a real finding",
            config={"select": ["TL900", "TL501"]},
        ),
        Valid(
            "import tensorflow as tf\nx = tf.constant(1.0)  # noqa: E501\n",
            "near miss: another linter's code",
            config={"select": ["TL900", "TL501"]},
        ),
        Valid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.01)  # noqa: TL201\n",
            "near miss: TL201 is not enabled here, so its suppression cannot be judged",
            config={"select": ["TL900", "TL501"]},
        ),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)  # noqa: TL501\n",
            line=2, column=54,
            config={"select": ["TL900", "TL501"]},
            expected_fix="import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)\n",
        ),
        Invalid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)  # noqa: TL501, E501\n",
            config={"select": ["TL900", "TL501"]},
            expected_fix="import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)  # noqa: E501\n",
        ),
        Invalid(
            "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)  # keep it  # noqa\n",
            config={"select": ["TL900", "TL501"]},
            message_contains="Unused `# noqa`",
            expected_fix="import tensorflow as tf\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)  # keep it\n",
        ),
    ]
