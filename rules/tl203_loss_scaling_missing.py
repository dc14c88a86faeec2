from __future__ import annotations

from tapelint.analysis.purpose import only_in_unit_tests
from tapelint.analysis.training_steps import is_training_gradient
from tapelint.analysis.vocabulary import LOSS_SCALE_WRAPPERS
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl203_mixed_precision import float16_policy, policy_at, scaling_in


class LossScalingMissing(Rule):
    """
    ## What it does
    Reports a custom training step under a global `mixed_float16` policy whose loss is never scaled
    before `tape.gradient`: no `optimizer.scale_loss(loss)` (Keras 3) and no
    `optimizer.get_scaled_loss(loss)` (tf_keras / TF <= 2.15) in the step or the helpers it calls. Also
    reports `get_unscaled_gradients` on gradients whose loss was never scaled.

    ## Why is this bad?
    In float16, gradients smaller than about 6e-8 underflow to exactly zero, so much of the model stops
    learning without an error. `fit` scales the loss for you; a custom loop must do it itself: scale the
    loss before `tape.gradient` and unscale the gradients after. Unscaling gradients that were never
    scaled is worse: they are divided by the loss scale (2**15 at the start), and training effectively
    stops. Keras 3's `LossScaleOptimizer.apply_gradients` unscales on its own, so with it, forgetting
    `scale_loss` is exactly that case.

    ## Example
    ```python
    keras.mixed_precision.set_global_policy("mixed_float16")
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
        scaled_loss = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```
    With tf_keras: `scaled = optimizer.get_scaled_loss(loss)`, then
    `grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, vars))`.

    ## Known problems
    Only a policy set in the same file is seen. A `mixed_bfloat16` policy needs no loss scaling and is
    not reported.

    A global policy holds only where it is in force when the step runs (`rules/_tl203_mixed_precision.py`):
    after a setter at module level, or earlier in the same function, or in a function of the file called
    before the step (`configure()` at the top of `main()`), until another setter changes it. A policy set
    and restored inside another function (an export helper, a benchmark) does not reach the step, nor does
    one set in another unit-test method (the runner runs each test on its own; `setUp` and module level do
    count). A setter whose policy cannot be read (`set_global_policy(previous)`) ends what can be said.
    Comments, docstrings and strings that mention `set_global_policy("mixed_float16")` are not code and
    set nothing, and neither does a function that sets the policy when nothing runs it (its call commented
    out). Code that runs only in unit tests is not reported: a test that runs a float16 step to see
    that it works does not train long enough for underflow to matter.

    ## Options
    None.

    ## Fix safety
    No fix.

    ## References
    - https://www.tensorflow.org/guide/mixed_precision (training the model with a custom training loop)
    - https://keras.io/api/mixed_precision/loss_scale_optimizer/
    - https://github.com/tensorflow/tensorflow/issues/48662 ("the loss must be scaled and after each call the gradients must be unscaled")
    - https://github.com/keras-team/keras/issues/19479
    """

    code = "TL203"
    name = "loss-scaling-missing"
    message = "`{tape}.gradient` runs under the `mixed_float16` policy ({where}) but the loss is never scaled: {why}"
    severity = Severity.ERROR
    triggers = (("float16", "GradientTape"),)
    probe = ""

    def check(self) -> None:
        facts = self.facts
        policy = float16_policy(facts)
        if policy is None or not facts.uses_gradient_tape:
            return
        wrapped = any((c.qualified or "").rsplit(".", 1)[-1] in LOSS_SCALE_WRAPPERS for c in facts.calls)
        reported: set[int] = set()
        for call in facts.gradient_calls():
            if not is_training_gradient(facts, call):
                continue  # gradients for inputs (saliency, a gradient penalty): no optimizer to feed
            policy = policy_at(facts, call.scope, call.order)
            if policy is None:
                continue  # no float16 policy holds where this step runs (set elsewhere, or undone before it)
            if only_in_unit_tests(facts, call.scope):
                continue  # a unit test runs the step to check it works; underflow is a matter of long training
            scaling = scaling_in(facts, call.scope)
            if scaling.scales:
                continue
            if scaling.unscales:
                for unscale in scaling.unscales:
                    if id(unscale.node) not in reported:
                        reported.add(id(unscale.node))
                        self.report(
                            unscale.node,
                            "`get_unscaled_gradients` divides by the loss scale, but the loss was never scaled "
                            "with `get_scaled_loss`: the gradients shrink by 2**15 and training stalls",
                        )
                continue
            if wrapped:
                why = ("`LossScaleOptimizer` unscales gradients that were never scaled; call "
                       "`optimizer.scale_loss(loss)` (tf_keras: `get_scaled_loss`) before `tape.gradient`")
            else:
                why = ("small float16 gradients underflow to zero; wrap the optimizer in `LossScaleOptimizer` "
                       "and scale the loss before `tape.gradient`")
            self.report(call.node, tape=call.receiver or "tape", where=self.location(policy.node) or "line ?",
                        why=why)

    VALID = [
        Valid(
            """
import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10, dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
        scaled_loss = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
""",
            "Keras 3 done right: LossScaleOptimizer and scale_loss",
        ),
        Valid(
            """
import tensorflow as tf
from tensorflow.keras import mixed_precision

mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.layers.Dense(10, dtype="float32")])
optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)
    grads = optimizer.get_unscaled_gradients(scaled_grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "tf_keras done right: get_scaled_loss and get_unscaled_gradients",
        ),
        Valid(
            """
import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_bfloat16")
model = keras.Sequential([keras.layers.Dense(10)])
optimizer = keras.optimizers.Adam()
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(tf.zeros((2, 3)), training=True))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: bfloat16 needs no loss scaling",
        ),
        Valid(
            """
import keras
import tensorflow as tf

# keras.mixed_precision.set_global_policy("mixed_float16")  # faster on tensor cores
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def export_float16(path):
    keras.mixed_precision.set_global_policy("mixed_float16")
    half = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10, dtype="float32")])
    half.build((None, 32))
    half.set_weights(model.get_weights())
    half.save(path)
    keras.mixed_precision.set_global_policy("float32")

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

for step in range(100):
    train_step(tf.zeros((8, 32)), tf.zeros((8,), tf.int32))
export_float16("model_fp16.keras")
""",
            "near miss: the policy is only in a comment, and set and restored in an export helper run after training",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=13, column=13,
            message_contains="wrap the optimizer in `LossScaleOptimizer`",
        ),
        Invalid(
            """
import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.layers.Dense(10, dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.01))

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = keras.losses.mean_squared_error(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="unscales gradients that were never scaled",
        ),
        Invalid(
            """
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.layers.Dense(10, dtype="float32")])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = optimizer.get_unscaled_gradients(tape.gradient(loss, model.trainable_variables))
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="never scaled with `get_scaled_loss`",
        ),
        Invalid(
            """
import tensorflow as tf

def configure():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")

def main():
    configure()
    model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])
    optimizer = tf.keras.optimizers.Adam(1e-3)
    for step in range(100):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(tf.zeros((8, 32)), training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

main()
""",
            line=14,
            message_contains="policy (line 5)",
        ),
    ]
