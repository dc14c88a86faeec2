from __future__ import annotations

import libcst as cst

from tapelint.analysis.keras import Output
from tapelint.analysis.losses import fed_losses, report_node
from tapelint.diagnostic import Confidence
from tapelint.rule import Invalid, PendingFix, Rule, Valid
from tapelint.diagnostic import Severity


class LogitsPassedAsProbabilities(Rule):
    """
    ## What it does
    Reports a cross-entropy loss left at `from_logits=False` (the default) that is fed something other
    than probabilities: the raw output of a model whose last layer has no activation (`Dense(10)`,
    `activation=None` or `"linear"`), or the output of an activation that is not a probability (`relu`,
    `tanh`, `elu`, `selu`, `softplus`, `leaky_relu`, `log_softmax`, `exponential`, ...), as a last layer's
    activation, an `Activation`/`ReLU`/`LeakyReLU` layer or a function such as `tf.nn.relu`.

    ## Why is this bad?
    A probability cross-entropy expects values in [0, 1]. Given anything else, Keras rescales each row to
    sum to one (categorical losses) and clips the values to [1e-7, 1 - 1e-7]: every value outside that
    range is clipped away and passes no gradient, and the loss no longer measures what the model
    predicts. Training is slow, unstable or stuck, with no error and no warning. A ReLU output is 0 for
    about half the samples at the start: a positive sample predicted 0 costs -log(1e-7) = 16.1 and sends
    back no gradient, so it never recovers. On TF 2.21, the threshold classifier of the first report below
    (three ReLU layers, `binary_crossentropy`) stays at loss 8.003 and accuracy 0.503 for every epoch,
    every prediction exactly 0; a `tanh` output is clipped the same way for all its negative values.
    For logits, the fix in the official tutorial that shipped this bug was a one-word change:
    `from_logits=True`.

    ## Example
    ```python
    model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
    ```

    ```python
    model.add(Dense(1, activation="relu"))
    model.compile(loss="binary_crossentropy", optimizer="adam")
    ```

    ## Use instead
    ```python
    model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ```
    ```python
    model.add(Dense(1, activation="sigmoid"))
    model.compile(loss="binary_crossentropy", optimizer="adam")
    ```

    ## Known problems
    Only a final layer that is visible in this file counts; a model loaded from disk or built in another
    module is not followed. A prediction passed through `tf.nn.softmax` before the loss is recognised
    as probabilities and stays silent (see TL107 for why that is still fragile). An activation Keras does
    not define (a custom function, a name registered with `get_custom_objects`) is unknown and never
    reported, nor are those that stay in [0, 1] (`hard_sigmoid`, `sparsemax`).

    ## Options
    None.

    ## Fix safety
    For logits, the fix sets `from_logits=True` on the loss. It is unsafe: loss values and gradients
    change, which is the point, but a script that post-processes the loss value will see different
    numbers. For another activation there is no fix: whether the output should become a `sigmoid` or
    `softmax`, or lose its activation and be read as logits (`from_logits=True`), depends on intent.

    ## References
    - https://github.com/tensorflow/docs/pull/1225 ("Add from_logits=True ... The code is broken without it")
    - https://github.com/MITDeepLearning/introtodeeplearning/issues/122
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy
    - https://geeksmental.com/question/why-does-accuracy-remain-the-same (a ReLU output with
      `binary_crossentropy`: accuracy stays at 0.5)
    - https://datascience.stackexchange.com/questions/57738/can-tanh-be-used-as-an-output-for-a-binary-classifier
    - https://stats.stackexchange.com/questions/329821/can-i-use-tanh-activation-function-in-the-output-layer-for-binary-classification
    """

    code = "TL102"
    name = "logits-passed-as-probabilities"
    message = "`{loss}` expects probabilities (`from_logits=False`) but receives {received}; {remedy}"
    severity = Severity.ERROR
    fixable = True
    triggers = ("rossentropy",)
    probe = "Confirmed when the predictions given to the loss fall outside [0, 1] (TL811 evidence, inverted)."

    def check(self) -> None:
        seen: set[int] = set()
        for fed in fed_losses(self.facts):
            if fed.spec.from_logits is not False or fed.output.kind not in (Output.LOGITS, Output.OTHER):
                continue
            node = report_node(fed)
            if id(node) in seen:
                continue
            seen.add(id(node))
            source = fed.output.description or "the model"
            confidence = Confidence.INFERRED if fed.via_compile else Confidence.HIGH
            if fed.output.kind is Output.LOGITS:
                self.report(node, confidence=confidence, fix=self._fix(fed), loss=fed.spec.written,
                            received=f"the raw logits of {source}", remedy="set `from_logits=True`",
                            related=[(fed.output.node, "the output without an activation")])
                continue
            # Another activation: which fix is right depends on what the output is meant to be.
            self.report(node, confidence=confidence, loss=fed.spec.written,
                        received=f"the `{fed.output.activation}` output of {source}, which is not a probability",
                        remedy=("end the model in `sigmoid` (or `softmax`), or drop the activation and set "
                                "`from_logits=True`"),
                        related=[(fed.output.node, f"the `{fed.output.activation}` output")])

    @staticmethod
    def _fix(fed) -> PendingFix | None:  # type: ignore[no-untyped-def]
        arg = fed.spec.from_logits_arg
        if arg is not None:
            if isinstance(arg.value, cst.Name):
                return PendingFix("Set `from_logits=True`", False, [(arg.value, cst.Name("True"))])
            return None
        call = fed.spec.construction
        if call is None:
            return None
        new_arg = cst.Arg(keyword=cst.Name("from_logits"), value=cst.Name("True"),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        args = list(call.args)
        if args:
            last = args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return PendingFix("Set `from_logits=True`", False, [(call, call.with_changes(args=[*args, new_arg]))])

    VALID = [
        Valid(
            """
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

inputs = keras.Input(shape=(784,))
x = layers.Dense(64, activation="relu")(inputs)
x = layers.Dense(10)(x)
outputs = layers.Activation("softmax", dtype="float32")(x)
# The mixed-precision guide's cast: a linear Activation hands the probabilities on unchanged.
outputs = layers.Activation("linear", dtype="float32")(outputs)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(loss="sparse_categorical_crossentropy", optimizer=keras.optimizers.RMSprop())
""",
            "near miss: a linear Activation after the softmax only casts to float32",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
with tf.GradientTape() as tape:
    loss = loss_fn(tf.constant([3]), model(tf.zeros((1, 4)), training=True))
""",
            "logits with from_logits=True",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
with tf.GradientTape() as tape:
    probs = tf.nn.softmax(model(tf.zeros((1, 4)), training=True))
    loss = loss_fn(tf.constant([3]), probs)
""",
            "near miss: softmax applied before a probability loss",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
loss_fn = tf.keras.losses.MeanSquaredError()
with tf.GradientTape() as tape:
    loss = loss_fn(tf.zeros((1, 1)), model(tf.zeros((1, 4)), training=True))
""",
            "a regression head: linear output and MSE",
        ),
        Valid(
            """
import tensorflow as tf

class TemperatureSoftmax(tf.keras.layers.Layer):
    def call(self, x):
        return tf.nn.softmax(x / 2.0)

model = tf.keras.Sequential([tf.keras.layers.Dense(10), TemperatureSoftmax()])
loss_fn = tf.keras.losses.CategoricalCrossentropy()
with tf.GradientTape() as tape:
    loss = loss_fn(tf.one_hot([3], 10), model(tf.zeros((1, 4)), training=True))
""",
            "near miss: a custom last layer; the Dense before it is not the output",
        ),
        Valid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.Input((20,)),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
""",
            "near miss: ReLU hidden layers, a sigmoid output",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1, activation="tanh")])
model.compile(optimizer="adam", loss="mse")
""",
            "near miss: a tanh output trained with MSE, not a cross-entropy",
        ),
        Valid(
            """
import tensorflow as tf

def scaled_sigmoid(x):
    return 0.5 * (tf.tanh(x) + 1.0)

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1, activation=scaled_sigmoid)])
model.compile(optimizer="adam", loss="binary_crossentropy")
other = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1, activation="hard_sigmoid")])
other.compile(optimizer="adam", loss="binary_crossentropy")
""",
            "a custom activation is unknown; hard_sigmoid stays in [0, 1]",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
val_loss_metric = tf.keras.metrics.SparseCategoricalCrossentropy()

@tf.function
def test_step(x, y):
    logits = model(x, training=False)
    val_loss_metric.update_state(y, logits)
""",
            line=6,
            message_contains="SparseCategoricalCrossentropy metric",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    return tape.gradient(loss, model.trainable_variables)
""",
            line=8, column=11,
            expected_fix="""
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    return tape.gradient(loss, model.trainable_variables)
""",
        ),
        Invalid(
            """
from tensorflow import keras

def build():
    inputs = keras.Input(shape=(20,))
    hidden = keras.layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(hidden))

model = build()
bce = keras.losses.BinaryCrossentropy(from_logits=False)
for step in range(3):
    import tensorflow as tf
    with tf.GradientTape() as tape:
        loss = bce(tf.zeros((4, 1)), model(tf.zeros((4, 20)), training=True))
""",
            message_contains="`BinaryCrossentropy`",
        ),
        Invalid(
            """
import keras

model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
        ),
        Invalid(
            """
from keras import Sequential
from keras.layers import Dense

model = Sequential()
model.add(Dense(3, input_dim=1, activation="relu"))
model.add(Dense(5, activation="relu"))
model.add(Dense(1, activation="relu"))
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
""",
            line=9, column=1,
            message_contains="receives the `relu` output of `Dense` layer, which is not a probability",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1, activation="tanh")])
bce = tf.keras.losses.BinaryCrossentropy()
with tf.GradientTape() as tape:
    loss = bce(tf.ones((8, 1)), model(tf.zeros((8, 4)), training=True))
""",
            message_contains="`tanh` output",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

def train_step(x, y):
    with tf.GradientTape() as tape:
        log_probs = tf.nn.log_softmax(model(x, training=True))
        loss = loss_fn(y, log_probs)
    return tape.gradient(loss, model.trainable_variables)
""",
            message_contains="`log_softmax` output of `tf.nn.log_softmax`",
        ),
        Invalid(
            """
from tensorflow import keras

discriminator = keras.Sequential([keras.layers.Dense(64), keras.layers.Dense(1), keras.layers.LeakyReLU(0.2)])
discriminator.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy())
""",
            message_contains="`leaky_relu` output of `LeakyReLU` layer",
        ),
    ]
