from __future__ import annotations

from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl011_accumulation import accumulators, grows_between_applies


class GradientAccumulatorNeverReset(Rule):
    """
    ## What it does
    Reports a gradient accumulator that is never zeroed after it is applied: the gradients of a
    `tape.gradient` call are added, step after step, into `tf.Variable`s (`acc.assign_add(g)`) or a
    Python list (`accum[i] += g`, `accum = [a + g for a, g in zip(accum, grads)]`) created once before
    the loop, the accumulator is applied (`optimizer.apply_gradients(zip(accum, ...))`), and nothing
    ever resets it or builds it anew.

    ## Why is this bad?
    Gradient accumulation must start each window from zero. Without the reset, every application
    applies the sum of all gradients since training started, not of the last `k` steps: the update
    behaves like momentum with a coefficient of 1, grows with every application and never settles.
    Measured on TF 2.21 with SGD(0.05) on a small regression (`tests/corpus/accum_variables_never_zeroed.py`):
    the applied update's norm grows 0.27, 0.45, 0.58 and stays at 0.63-0.71 while the loss swings
    between 1.6 and 4.4 over 40 applications; with the reset the update shrinks to 0.017 and the loss
    falls to 0.055. In `accum_trainer_attribute_sums.py` (SGD with momentum) the loss diverges from 0.46
    to 81.

    ## Example
    ```python
    accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
    for step, (x, y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        for a, g in zip(accum, grads):
            a.assign_add(g / k)
        if (step + 1) % k == 0:
            optimizer.apply_gradients(zip(accum, model.trainable_variables))
    ```

    ## Use instead
    ```python
        if (step + 1) % k == 0:
            optimizer.apply_gradients(zip(accum, model.trainable_variables))
            for a in accum:
                a.assign(tf.zeros_like(a))
    ```
    or build the list anew for each window (`accum = [tf.zeros_like(v) for v in ...]`), or create it
    inside the step that accumulates over micro-batches.

    ## Known problems
    Only accumulators held by a name or an attribute (`accum`, `self.grad_sums`) are judged. Any other
    write to the accumulator (`.assign`, a store, a rebinding, a method, a call we cannot see into that
    is handed it) counts as a reset, so the rule stays silent whenever a reset may happen. The
    accumulator must be created once, outside the loop (or per-step function) in which it is both
    added to and applied; an apply call inside a nested function that is only handed to `tf.cond` is
    not followed.

    ## Options
    None.

    ## Fix safety
    No fix: where the reset belongs (right after the apply call, inside a `tf.cond` branch, or as a new
    list per window) depends on how the loop is written.

    ## References
    - https://stackoverflow.com/questions/42156957/how-to-update-model-parameters-with-accumulated-gradients/42222976
      ("Accumulators must be zeroed once the accumulated gradient is applied")
    - https://stackoverflow.com/questions/46772685/how-to-accumulate-gradients-in-tensorflow
    - https://github.com/tensorflow/tensorflow/issues/47578 (gradient accumulation in a custom
      `train_step`)
    - https://github.com/tensorflow/tensorflow/issues/3994 (accumulating into variables, with the
      `zero_ops` run before each window)
    """

    code = "TL011"
    name = "gradient-accumulator-never-reset"
    message = ("`{holder}` sums the gradients of every step and `{apply}` applies it, but it is never reset: "
               "each update applies the sum of all gradients since it was created")
    severity = Severity.WARNING
    claims_absence = True
    triggers = (("GradientTape", "assign_add"), ("GradientTape", "+"))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for acc in accumulators(facts):
            apply = grows_between_applies(facts, acc)
            if apply is None:
                continue
            site = apply.site
            name = f"{site.receiver}.{site.method}" if site.receiver else site.method or "the apply call"
            self.report(site.node, holder=acc.holder, apply=name)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
for step, (x, y) in enumerate(batches):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for a, g in zip(accum, grads):
        a.assign_add(g / 4)
    if (step + 1) % 4 == 0:
        optimizer.apply_gradients(zip(accum, model.trainable_variables))
        for a in accum:
            a.assign(tf.zeros_like(a))
""",
            "near miss: the variables are zeroed after each application",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
accum = [tf.zeros_like(v) for v in model.trainable_variables]
for step, (x, y) in enumerate(batches):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    accum = [a + g for a, g in zip(accum, grads)]
    if (step + 1) % 8 == 0:
        optimizer.apply_gradients(zip([a / 8 for a in accum], model.trainable_variables))
        accum = [tf.zeros_like(v) for v in model.trainable_variables]
""",
            "near miss: the list is rebuilt after each application",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)

def train_step(micro_batches):
    accum = [tf.zeros_like(v) for v in model.trainable_variables]
    for x, y in micro_batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        for i, g in enumerate(grads):
            accum[i] += g
    optimizer.apply_gradients(zip(accum, model.trainable_variables))

for micro_batches in dataset:
    train_step(micro_batches)
""",
            "near miss: micro-batch accumulation inside one step, the list is created in the step",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
for epoch in range(10):
    accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        for a, g in zip(accum, grads):
            a.assign_add(g)
    optimizer.apply_gradients(zip(accum, model.trainable_variables))
""",
            "near miss: the accumulator is created inside the epoch loop, once per application",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
for step, (x, y) in enumerate(batches):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for a, g in zip(accum, grads):
        a.assign_add(g / 4)
    if (step + 1) % 4 == 0:
        optimizer.apply_gradients(zip(accum, model.trainable_variables))
""",
            line=14,
            message_contains="`accum` sums the gradients of every step and `optimizer.apply_gradients` applies it",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)
accum = [tf.zeros_like(v) for v in model.trainable_variables]
for step, (x, y) in enumerate(batches):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    accum = [a + g for a, g in zip(accum, grads)]
    if (step + 1) % 8 == 0:
        optimizer.apply_gradients(zip([a / 8 for a in accum], model.trainable_variables))
""",
            line=13,
        ),
        Invalid(
            """
import tensorflow as tf

class Trainer:
    def __init__(self, model, k):
        self.model = model
        self.k = k
        self.optimizer = tf.keras.optimizers.SGD(0.01)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

    @tf.function
    def accumulate(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        for i in range(len(self.sums)):
            self.sums[i].assign_add(grads[i])
        return loss

    def apply(self):
        self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))

    def fit(self, dataset):
        for step, (x, y) in enumerate(dataset):
            self.accumulate(x, y)
            if (step + 1) % self.k == 0:
                self.apply()
""",
            line=21,
            message_contains="`self.sums`",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
accum = [tf.zeros_like(v) for v in model.trainable_variables]
for epoch in range(10):
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        for i in range(len(accum)):
            accum[i] += grads[i]
    optimizer.apply_gradients(zip(accum, model.trainable_variables))
""",
            line=14,
        ),
    ]
