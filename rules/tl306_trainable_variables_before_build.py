from __future__ import annotations

from tapelint.analysis.names import dotted
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl306_model_build import weights_read_before_build


class TrainableVariablesBeforeBuild(Rule):
    """
    ## What it does
    Reports `variables = model.trainable_variables` (or `trainable_weights`, `weights`, `variables`) read
    into a name before the model is built, when that saved list is what a later `tape.gradient` call
    differentiates or an apply call steps. The model must be one that has no weights until its first
    call: a `Sequential` with no `keras.Input` and no `input_shape=`, or a subclassed `Model`; and nothing
    that could build it (calling it, `build()`, `fit`, handing it to a function) may come between its
    creation and the read.

    ## Why is this bad?
    Before the first call the list is empty, and Keras 3 returns a new list on every read, so the saved
    one stays empty after the model is built. Measured on TF 2.21 / Keras 3.15: the list has 0 entries
    (4 once the model has run), `tape.gradient(loss, [])` returns `[]`, and
    `optimizer.apply_gradients(zip([], []))` raises `ValueError: not enough values to unpack (expected 2,
    got 0)`, eagerly and in `tf.function`; `optimizer.apply([], [])` and a hand-written
    `for g, v in zip(grads, variables): v.assign_sub(lr * g)` do nothing at all, so the loss never moves.

    ## Example
    ```python
    model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    variables = model.trainable_variables  # [] : the model has no weights yet

    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
    ```

    ## Use instead
    Read `model.trainable_variables` where it is used, after the forward pass; or give the model its
    input shape (`keras.Input((8,))` first in the Sequential, or `model.build((None, 8))` on a Sequential)
    before the read. For a subclassed model, call it once on a batch: on Keras 3.15
    `model.build((None, 8))` of a subclass that does not define `build` sets `built` and creates no
    variables (measured on TF 2.21: still 0), so such a `build` call does not count as building.

    ## Known problems
    Only a read bound once to a name or a `self.` attribute in the scope that obtains the model, and
    only models created in this file, are judged. A read inside a loop after the model has run in an
    earlier iteration is not told apart from one before.

    ## Options
    None.

    ## Fix safety
    No fix: moving the read past the first call, or adding an input shape, changes code the rule cannot
    see all of.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/26948 ("why do i get empty array at
      tf.keras.Sequential(layers).trainable_variables?": "The Layers aren't built yet. You can either pass
      an input_shape to Sequential ... or you can call build() explicitly")
    - https://github.com/LaurentMazare/tch-rs/issues/106 (the same trap in another library: the optimizer
      kept the variables that existed when it was set up, an empty list)
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch (the gradients are taken
      for `model.trainable_weights` read in the step, after the forward pass)
    """

    code = "TL306"
    name = "trainable-variables-before-build"
    message = ("`{target}` holds `{read}` read before `{model}` is built: the list is empty and stays empty, "
               "so {use} at {where} trains nothing; read it after the model's first call, or give the model an input shape first")
    severity = Severity.ERROR
    # The stale list must reach a tape or an apply call.
    triggers = tuple((attr, use, model) for attr in ("variables", "weights")
                     for use in ("GradientTape", "apply_gradients", ".apply(") for model in ("Sequential", "Model"))

    def check(self) -> None:
        for found in weights_read_before_build(self.facts):
            read = found.binding.value
            if read is None:
                continue  # (never: the binding is `x = model.trainable_variables`)
            text = dotted(read) or "the weight list"
            model = text.rsplit(".", 1)[0]
            used = found.used_at
            use = f"`{used.func}`" if used.func else "the update"
            self.report(read, target=found.binding.target, read=text, model=model, use=use,
                        where=self.location(used.node) or "its use")

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
variables = model.trainable_variables
optimizer = tf.keras.optimizers.Adam(1e-3)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
""",
            "near miss: an Input makes the Sequential model built at construction",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
model.build((None, 8))
variables = model.trainable_variables
optimizer = tf.keras.optimizers.Adam(1e-3)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
""",
            "near miss: built before the read",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss
""",
            "near miss: read inside the step, after the forward pass",
        ),
        Valid(
            """
import tensorflow as tf

inputs = tf.keras.Input((8,))
outputs = tf.keras.layers.Dense(1)(tf.keras.layers.Dense(16, activation="relu")(inputs))
model = tf.keras.Model(inputs, outputs)
variables = model.trainable_variables
optimizer = tf.keras.optimizers.Adam(1e-3)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
""",
            "near miss: a functional model is built at construction",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
variables = model.trainable_variables
optimizer = tf.keras.optimizers.Adam(1e-3)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
""",
            line=5,
            message_contains="`variables` holds `model.trainable_variables` read before `model` is built",
        ),
        Invalid(
            """
import tensorflow as tf

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.out = tf.keras.layers.Dense(4)

    def call(self, x):
        return self.out(self.hidden(x))

class Agent:
    def __init__(self):
        self.net = Net()
        self.params = self.net.trainable_variables
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def learn(self, states, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.net(states) - targets))
        grads = tape.gradient(loss, self.params)
        self.optimizer.apply_gradients(zip(grads, self.params))
""",
            line=16,
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential()
model.add(tf.keras.layers.Dense(16, activation="tanh"))
model.add(tf.keras.layers.Dense(1))
weights = model.trainable_weights

def sgd_step(x, y, lr=0.01):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    for g, w in zip(tape.gradient(loss, weights), weights):
        w.assign_sub(lr * g)
    return loss
""",
            line=7,
        ),
        Invalid(
            """
import keras
import tensorflow as tf

class Critic(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(64, activation="relu")
        self.value = keras.layers.Dense(1)

    def call(self, x):
        return self.value(self.hidden(x))

critic = Critic()
critic.build((None, 8))
critic_vars = critic.trainable_variables
optimizer = keras.optimizers.Adam(1e-3)

def update(states, returns):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(returns - critic(states)))
    optimizer.apply_gradients(zip(tape.gradient(loss, critic_vars), critic_vars))
""",
            line=16,
        ),
    ]
