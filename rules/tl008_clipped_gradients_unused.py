from __future__ import annotations

from tapelint.analysis.facts import arg_value
from tapelint.analysis.optimizers import applies_gradients_of
from tapelint.analysis.reads import value_kept
from tapelint.analysis.values import Kind, flatten, values_of
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

# The clipping functions return new tensors; none of them changes its argument.
CLIPS = {
    "tensorflow.clip_by_global_norm": 0,  # returns (clipped list, global norm): element 0 matters
    "tensorflow.clip_by_norm": None,
    "tensorflow.clip_by_value": None,
    "tensorflow.math.clip_by_norm": None,
    "tensorflow.math.clip_by_value": None,
    "keras.ops.clip": None,
}


class ClippedGradientsUnused(Rule):
    """
    ## What it does
    Reports `tf.clip_by_global_norm`, `tf.clip_by_norm` or `tf.clip_by_value` applied to the gradients
    of a `tape.gradient` call when the clipped result is thrown away: the call is a bare statement, or its
    result is bound to a name that is never read (`clipped, _ = tf.clip_by_global_norm(grads, 1.0)`
    followed by `apply_gradients(zip(grads, ...))`).

    ## Why is this bad?
    Clipping returns new tensors; it never changes the gradients in place. The optimizer then applies the
    unclipped gradients, and the loop runs exactly as if there were no clipping, so the exploding
    gradients the clipping was written for still blow the weights up (NaN losses in RNNs and RL, the
    usual reasons for clipping). Nothing warns: the clip runs and its result is dropped. Measured on
    TF 2.21: in `tests/corpus/clip_global_norm_discarded.py` the applied gradients keep a global norm of
    7-8 while the clip asked for 1.0, and in `clip_result_never_applied.py` of 246, 114, 87 against 5.0.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Use instead
    ```python
    grads = tape.gradient(loss, model.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```
    or `keras.optimizers.Adam(..., global_clipnorm=1.0)`.

    ## Known problems
    Only clipping of gradients that the value model traces back to a `tape.gradient` call is judged, and
    only a result that is visibly dropped: one passed on to code we cannot see counts as used.

    ## Options
    None.

    ## Fix safety
    No fix: which name should hold the clipped gradients is the author's choice.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/clip_by_global_norm (returns the clipped list and the
      global norm)
    - https://github.com/tensorflow/tensorflow/issues/28707 (how to clip gradients in a TF2 custom loop)
    - https://github.com/microsoft/tf2-gnn/pull/23 ("Fix gradient clipping": the existing clipping was
      never applied)
    """

    code = "TL008"
    name = "clipped-gradients-unused"
    message = "`{call}` returns the clipped gradients, but the result is never used: {what} the unclipped ones"
    severity = Severity.WARNING
    claims_absence = True
    triggers = (("clip_by", "GradientTape"), ("ops.clip", "GradientTape"))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for site in facts.calls:
            if site.qualified not in CLIPS:
                continue
            argument = arg_value(site.node, 0, "t_list" if site.qualified.endswith("global_norm") else "t")
            gradients = [v for v in flatten(values_of(facts, argument, site.scope, site.order))
                         if v.kind is Kind.GRADIENTS]
            if not gradients:
                continue
            if value_kept(facts, site, CLIPS[site.qualified]) is not False:
                continue
            element = CLIPS[site.qualified]
            if any(b.target == "_" and b.index == element for b in facts.bindings_of_value(site.node)):
                continue  # `_, norm = tf.clip_by_global_norm(...)`: the clipped list is dropped on purpose
            applies = [a for g in gradients if g.node is not None for a in applies_gradients_of(facts, g.node)]
            what = (f"`{applies[0].site.receiver}.{applies[0].site.method}` applies"
                    if applies and applies[0].site.receiver else "the optimizer applies")
            self.report(site.node, call=site.func or site.qualified, what=what)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    grads, norm = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "the clipped list replaces the gradients",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip([tf.clip_by_norm(g, 0.5) for g in grads], model.trainable_variables))
""",
            "near miss: clipped inside the apply call",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    _, norm = tf.clip_by_global_norm(grads, 1.0)
    tf.print("gradient norm", norm)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: only the global norm is wanted, for logging, and it is read",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=10,
            message_contains="`optimizer.apply_gradients` applies the unclipped ones",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    clipped, global_norm = tf.clip_by_global_norm(gradients, 5.0)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, global_norm
""",
            line=12,
        ),
    ]
