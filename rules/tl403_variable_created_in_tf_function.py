from __future__ import annotations

from tapelint.analysis.run_counts import creation_count
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

_ERROR = "ValueError: tf.function only supports singleton tf.Variables created on the first call"


# `tf.function` needs the `tf` alias; TensorFlow's own modules only name it in docstrings.
_TF = "import tensorflow as tf"


class VariableCreatedInTfFunction(Rule):
    """
    ## What it does
    Reports a `tf.Variable`, a Keras optimizer, a Keras metric, or a Keras layer with weights / a model
    that is called right there, constructed inside the body of a `tf.function` (decorated, wrapped with
    `tf.function(f)`, or a Keras `train_step` that `fit` traces), or in a helper that body calls.
    Creation guarded by an `if` (the documented `if self.v is None: self.v = tf.Variable(...)` singleton
    pattern) and creation in `__init__` / `build` are not reported.

    ## Why is this bad?
    A `tf.function` may create variables only on its first trace, and only once. When the first trace
    creates variables, TF traces the function a second time to check that it no longer does; an
    unconditional construction creates them again, and the very first call fails. Measured on TF 2.21
    (CPU) and Keras 3.15: `tf.Variable(1.0)`, `keras.optimizers.Adam(1e-3)`, `keras.metrics.Mean()`, a
    `keras.layers.Dense(2)` that is called, and a `keras.Sequential` that is called, each inside a
    `@tf.function`, all raise on the first call
    `ValueError: tf.function only supports singleton tf.Variables created on the first call`; the same
    happens inside a `train_step` run by `model.fit`. A loss object (`keras.losses.MeanSquaredError()`)
    holds no variables and is fine. A program that "only" wanted a fresh metric per batch, or an
    optimizer per step, never trains at all.

    ## Example
    ```python
    @tf.function
    def train_step(x, y):
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        accuracy.update_state(y, logits)
        return loss, accuracy.result()
    ```

    ## Use instead
    ```python
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        ...
        accuracy.update_state(y, logits)
        return loss, accuracy.result()
    ```
    Create variables, optimizers, metrics and layers once, outside the traced function (or in
    `__init__`/`build`), and reset metrics with `reset_state()`.

    ## Known problems
    Only constructions the value model identifies are seen (not a local factory function that returns
    a layer). Creation under any `if` is taken to be a singleton guard, even when it is not. A Keras
    `train_step` counts only when this file compiles the model without `run_eagerly=True`. Where
    TL304 (`layer-created-in-call`) or TL202 (`optimizer-created-in-loop`) also see a construction in a
    step function, both report it.

    ## Options
    None.

    ## Fix safety
    No fix: the object must move out of the function, which changes what the code refers to.

    ## References
    - https://www.tensorflow.org/guide/function#creating_tfvariables
    - https://github.com/tensorflow/tensorflow/issues/27120 ("tf.function-decorated function tried to
      create variables on non-first call")
    - https://github.com/tensorflow/tensorflow/issues/26812 (a Keras optimizer created inside
      `tf.function`)
    """

    code = "TL403"
    name = "variable-created-in-tf-function"
    message = "`{what}` is created inside the traced function `{function}`{via}: the first call raises `{error}`"
    severity = Severity.ERROR
    triggers = (("@tf.function", "Variable(", _TF), ("tf.function(", "Variable(", _TF), ("@tf.function", "metrics.", _TF),
                ("tf.function(", "metrics.", _TF), ("@tf.function", "optimizers.", _TF), ("tf.function(", "optimizers.", _TF),
                ("@tf.function", "layers.", _TF), ("tf.function(", "layers.", _TF), ("def train_step", "compile("),
                ("def test_step", "compile("))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for site in facts.calls:
            count = creation_count(facts, site)
            if count.trace is None:
                continue
            traced, what = count.trace
            via = f" (through `{traced.via[0].func}`)" if traced.via and traced.via[0].func else ""
            self.report(site.node, what=what, function=traced.entry.scope.simple_name, via=via, error=_ERROR)

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, logits)
    return loss
""",
            "everything with variables is created once, outside the traced step",
        ),
        Valid(
            """
import tensorflow as tf

class Counter(tf.Module):
    def __init__(self):
        self.count = None

    @tf.function
    def __call__(self, x):
        if self.count is None:
            self.count = tf.Variable(0)
        self.count.assign_add(1)
        return x
""",
            "near miss: the documented singleton pattern, created on the first trace only",
        ),
        Valid(
            """
import tensorflow as tf

@tf.function
def mse(y, p):
    loss_fn = tf.keras.losses.MeanSquaredError()
    return loss_fn(y, p)
""",
            "near miss: a loss object holds no variables",
        ),
        Valid(
            """
import tensorflow as tf

def make_counter():
    return tf.Variable(0)

counter = make_counter()

@tf.function
def step(x):
    counter.assign_add(1)
    return x * 2
""",
            "near miss: the helper that creates the variable runs eagerly, once",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, logits)
    return loss, accuracy.result()
""",
            line=10,
            message_contains="singleton tf.Variables",
        ),
        Invalid(
            """
import tensorflow as tf

def scaled(x):
    scale = tf.Variable(2.0)
    return x * scale

@tf.function
def forward(x):
    return scaled(x) + 1.0
""",
            line=5,
            message_contains="through `scaled`",
        ),
        Invalid(
            """
import tensorflow as tf

class Trainer:
    def __init__(self, model):
        self.model = model
        self.train = tf.function(self.step)

    def step(self, x, y):
        optimizer = tf.keras.optimizers.SGD(0.01)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
""",
            line=10,
        ),
        Invalid(
            """
import keras
import tensorflow as tf

class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(10)

    def call(self, x):
        return self.body(x)

    def train_step(self, data):
        x, y = data
        tracker = keras.metrics.Mean(name="loss")
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        tracker.update_state(loss)
        return {"loss": tracker.result()}

model = Classifier()
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
            line=15,
        ),
    ]
