from __future__ import annotations

from tapelint.analysis.values import Kind
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl305_tracking import untracked_variables


class TfVariableNotTracked(Rule):
    """
    ## What it does
    Reports a raw `tf.Variable` stored as an attribute (`self.w = tf.Variable(...)`, in `__init__`,
    `build` or any other method) of a subclass of a Keras 3 `Layer` or `Model`. On TF 2.16 and later
    `tf.keras.layers.Layer` *is* the Keras 3 class (`keras.src.layers.layer.Layer`, checked on TF 2.21),
    unless `TF_USE_LEGACY_KERAS=1` selects `tf_keras`; files that use `tf_keras` (or set that variable)
    are not checked, since `tf_keras` layers do track `tf.Variable` attributes.

    ## Why is this bad?
    Keras 3 tracks only `keras.Variable`s (what `add_weight` creates) and sub-layers. The `tf.Variable` is
    missing from `trainable_variables`, `trainable_weights` and `weights`, so neither `fit` nor a loop
    over `model.trainable_variables` ever updates it, and `save_weights`/`model.save` do not write it.
    Measured on TF 2.21 / Keras 3.15 with a linear layer `y = x @ w + b` of two `tf.Variable`s:
    `trainable_variables` is `[]`, `fit` prints only "The model does not have any trainable weights" and
    the loss stays at 43.0 for every epoch, while the same layer with `add_weight` falls to 24.8 (the
    `MyModelKeras` of the TF guide "Basic training loops", fitted the same way, stays at 11.068 with `w`
    at its initial 5.0); a custom loop over `layer.trainable_variables` fails in
    `apply_gradients` with `ValueError: not enough values to unpack (expected 2, got 0)`. A
    `trainable=False` variable (a counter, a KL weight or schedule value set with `assign`, as the
    `tf.function` guide recommends) works while the program runs; it is only left out of
    `save_weights` (a call counter at 2.0 reloads as 0.0), which rarely matters for such state, so it
    is not reported. `tf.train.Checkpoint` still saves both kinds.

    ## Example
    ```python
    class Linear(keras.layers.Layer):
        def build(self, input_shape):
            self.w = tf.Variable(tf.random.normal((input_shape[-1], 1)))
            self.b = tf.Variable(0.0)

        def call(self, x):
            return tf.matmul(x, self.w) + self.b
    ```

    ## Use instead
    ```python
    class Linear(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 1), initializer="random_normal")
            self.b = self.add_weight(shape=(), initializer="zeros")
    ```
    or `keras.Variable(...)` in place of `tf.Variable(...)`.

    ## Known problems
    Silent when the variable reaches a `tape.gradient` source list or an apply call directly
    (`tape.gradient(loss, [layer.w, layer.b])` trains it: measured, the loss falls to 0.0005), or when
    some gradient source cannot be read, unless a model of that class is also trained with `fit` or
    `train_on_batch` (which steps only the tracked weights); silent for classes that define `trainable_variables` or
    `trainable_weights` themselves, and for `trainable=False` variables (see above: a running statistic
    kept that way is not restored by `load_weights`, and is missed). A `tf.Variable` held in a list or dict attribute is not looked at.

    ## Options
    None.

    ## Fix safety
    No fix: `add_weight` takes a shape and an initializer, not an initial value, and `keras.Variable`
    orders its positional arguments differently (`shape` second, where `tf.Variable` has `trainable`);
    the rewrite is the author's.

    ## References
    - https://github.com/keras-team/keras/issues/16797 ("untracked variables are not trained"; with
      `self.add_weight` it works in every case)
    - https://github.com/tensorflow/tensorflow/issues/38211 (`tf.Variable` attributes of a
      `tf.keras.layers.Layer` missing from `model.trainable_variables`)
    - https://github.com/tensorflow/tensorflow/issues/46325 (non-trainable `tf.Variable`s of a custom
      layer missing from `Model.variables`)
    - https://keras.io/guides/making_new_layers_and_models_via_subclassing (weights are created with
      `add_weight`)
    - https://discuss.ai.google.dev/t/keras-newsletter-december-1-2023/28008 (TF 2.16+ installs Keras 3
      as `tf.keras`; `tf_keras` with `TF_USE_LEGACY_KERAS=1` keeps Keras 2)
    """

    code = "TL305"
    name = "tf-variable-not-tracked"
    message = ("`{target}` is a raw `tf.Variable` on the Keras 3 {kind} `{cls}`: Keras 3 does not track it, "
               "so it is missing from `trainable_variables` and never trains (`fit` and loops over the weight lists skip it); use `self.add_weight(...)` or `keras.Variable(...)`")
    severity = Severity.ERROR
    triggers = (("Variable(", "Layer"), ("Variable(", "Model"), ("Variable(", "(layers."))

    def check(self) -> None:
        if self.context.keras_version == 2:
            return  # tf_keras layers track tf.Variable attributes
        for found in untracked_variables(self.facts):
            if not found.trainable or (found.differentiated and not found.fitted):
                continue
            kind = "model" if found.kind is Kind.MODEL else "layer"
            self.report(found.site.node, target=found.binding.target, kind=kind, cls=found.cls)

    VALID = [
        Valid(
            """
import tensorflow as tf

class Linear(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 1), initializer="random_normal")
        self.b = self.add_weight(shape=(1,), initializer="zeros")

    def call(self, x):
        return tf.matmul(x, self.w) + self.b
""",
            "near miss: add_weight creates tracked Keras variables",
        ),
        Valid(
            """
import keras
import numpy as np
import tensorflow as tf

class Linear(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.w = keras.Variable(np.random.normal(size=(3, units)).astype("float32"))

    def call(self, x):
        return tf.matmul(x, self.w)
""",
            "near miss: keras.Variable is tracked",
        ),
        Valid(
            """
import tensorflow as tf

class Linear(tf.Module):
    def __init__(self):
        self.w = tf.Variable(tf.zeros((3, 1)))
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b

model = Linear()
opt = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: tf.Module tracks tf.Variable attributes",
        ),
        Valid(
            """
import tensorflow as tf

class Linear(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.zeros((3, 1)))
        self.b = tf.Variable(0.0)

    def call(self, x):
        return tf.matmul(x, self.w) + self.b

layer = Linear()
opt = tf.keras.optimizers.SGD(0.1)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(layer(x) - y))
    grads = tape.gradient(loss, [layer.w, layer.b])
    opt.apply_gradients(zip(grads, [layer.w, layer.b]))
""",
            "near miss: the loop differentiates the attributes themselves, so they train",
        ),
        Valid(
            """
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tf_keras

class Linear(tf_keras.layers.Layer):
    def build(self, input_shape):
        self.w = tf.Variable(tf.zeros((input_shape[-1], 1)))
""",
            "tf_keras layers track tf.Variable attributes",
        ),
        Valid(
            """
import tensorflow as tf

class CountingDense(tf.keras.layers.Dense):
    def __init__(self, units):
        super().__init__(units)
        self.calls = tf.Variable(0, trainable=False)

    def call(self, x):
        self.calls.assign_add(1)
        return super().call(x)
""",
            "near miss: a non-trainable counter; it works, only save_weights leaves it out",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

class Linear(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w = tf.Variable(tf.random.normal((input_shape[-1], 1)))
        self.b = tf.Variable(0.0)

    def call(self, x):
        return tf.matmul(x, self.w) + self.b

inputs = tf.keras.Input((3,))
model = tf.keras.Model(inputs, Linear()(inputs))
model.compile(optimizer="sgd", loss="mse")
model.fit(x_train, y_train, epochs=10)
""",
            line=6,
            count=2,
            message_contains="`self.w` is a raw `tf.Variable` on the Keras 3 layer `Linear`",
        ),
        Invalid(
            """
import keras
import tensorflow as tf

class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.temperature = tf.Variable(1.0, name="temperature")

    def call(self, x):
        return self.hidden(x) / self.temperature

model = Regressor()
optimizer = keras.optimizers.Adam(1e-3)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=9,
            message_contains="the Keras 3 model `Regressor`",
        ),
        Invalid(
            """
from tensorflow import keras
import tensorflow as tf

class LearnedLeakyReLU(keras.layers.Layer):
    def build(self, input_shape):
        self.alpha = tf.Variable(0.25, name="alpha")

    def call(self, x):
        return tf.maximum(x, 0.0) + self.alpha * tf.minimum(x, 0.0)

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16), LearnedLeakyReLU(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(x_train, y_train, epochs=5)
""",
            line=7,
        ),
    ]
