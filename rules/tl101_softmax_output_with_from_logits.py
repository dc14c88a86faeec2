from __future__ import annotations

import libcst as cst

from tapelint.analysis.keras import Output
from tapelint.analysis.losses import fed_losses, report_node
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid


class SoftmaxOutputWithFromLogits(Rule):
    """
    ## What it does
    Reports a cross-entropy loss built with `from_logits=True` that is fed probabilities: the output of
    a model whose last layer ends in softmax or sigmoid, or a value passed through `tf.nn.softmax` /
    `tf.math.sigmoid` before the loss. The `tf.nn` cross-entropies (`tf.nn.softmax_cross_entropy_with_logits`,
    `tf.nn.sparse_softmax_cross_entropy_with_logits`, `tf.nn.sigmoid_cross_entropy_with_logits`) always
    take logits and are checked the same way. It follows the prediction through assignments, helper
    functions, `model.compile(loss=...)`, subclassed models' `call` and models built by factory functions.

    ## Why is this bad?
    With `from_logits=True` the loss applies softmax (or sigmoid) itself, so the activation runs twice.
    The doubly squashed outputs compress the loss into a narrow band and the gradients shrink by an
    order of magnitude (measured on TF 2.3: |g| 0.054 instead of 1.01), so training crawls or stalls.
    TensorFlow >= 2.4 and Keras 3 detect a *Keras* softmax/sigmoid layer, use its logits and only warn;
    a raw `tf.nn.softmax`, or any probabilities given to a `tf.nn.*_with_logits` op, is double-applied
    silently on every version. Either way the code says the opposite of what it does.

    ## Example
    ```python
    model = tf.keras.Sequential([..., tf.keras.layers.Dense(10, activation="softmax")])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ```

    ## Use instead
    ```python
    model = tf.keras.Sequential([..., tf.keras.layers.Dense(10)])  # logits
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ```

    ## Known problems
    A prediction that comes from outside the file (a model loaded from disk, a function of another
    module) is not followed; nothing is reported then.

    ## Options
    None.

    ## Fix safety
    The fix sets `from_logits=False`, which makes the loss agree with the probabilities it receives. It
    is unsafe: the loss values and gradients change (for the better), and removing the softmax from the
    model instead is often the better change (more stable, see TL107).

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/SparseCategoricalCrossentropy
    - https://github.com/keras-team/keras-io/issues/494 (warning in the official loop guide, tensorflow/tensorflow#50190)
    - https://github.com/keras-team/tf-keras/issues/485 (softmax output with from_logits=True)
    - https://github.com/tensorflow/tensorflow/issues/35585 (maintainer: remove the softmax, use from_logits=True)
    """

    code = "TL101"
    name = "softmax-output-with-from-logits"
    message = "`{loss}` {expects} but receives {what} from {source}: the activation is applied twice"
    severity = Severity.ERROR
    also_severity = {Severity.WARNING: (
        "when the probabilities come from a Keras softmax or sigmoid layer, whose logits Keras "
        "recovers (TF >= 2.4) with only a warning"
    )}
    fixable = True
    triggers = ("from_logits", "_with_logits", ("losses", "softmax_cross_entropy"), ("losses", "sigmoid_cross_entropy"))
    probe = "Confirmed when the predictions given to the loss are in [0, 1] with rows summing to 1 (TL811)."

    def check(self) -> None:
        seen: set[int] = set()
        for fed in fed_losses(self.facts):
            if fed.spec.from_logits is not True or fed.output.kind is not Output.PROBABILITIES:
                continue
            node = report_node(fed)
            if id(node) in seen:
                continue
            seen.add(id(node))
            # Keras losses recover the logits of a Keras softmax/sigmoid layer (TF >= 2.4) and only warn;
            # a raw activation, or any probabilities given to a `tf.nn` op, is squashed twice for real.
            raw = (fed.spec.op or fed.output.description.startswith("`tf.")
                   or fed.output.description.startswith("`keras.ops"))
            self.report(
                node,
                severity=Severity.ERROR if raw else Severity.WARNING,
                confidence=Confidence.HIGH if not fed.via_compile else Confidence.INFERRED,
                fix=self._fix(fed.spec.from_logits_arg),
                loss=fed.spec.written,
                expects="always takes logits" if fed.spec.op else "is built with `from_logits=True`",
                what=f"{fed.output.activation} probabilities",
                source=fed.output.description,
                related=[(fed.output.node, f"the {fed.output.activation or 'activation'}")],
            )

    @staticmethod
    def _fix(arg: cst.Arg | None) -> PendingFix | None:
        if arg is None or not isinstance(arg.value, cst.Name):
            return None
        return PendingFix("Set `from_logits=False` to match the probabilities", False,
                          [(arg.value, cst.Name("False"))])

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

with tf.GradientTape() as tape:
    logits = model(tf.zeros((2, 4)), training=True)
    loss = loss_fn(tf.constant([1, 2]), logits)
""",
            "logits head with from_logits=True",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

with tf.GradientTape() as tape:
    probs = model(tf.zeros((2, 4)), training=True)
    loss = loss_fn(tf.constant([1, 2]), probs)
""",
            "softmax head with the default from_logits=False",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)

with tf.GradientTape() as tape:
    logits = model(tf.zeros((2, 4)), training=True)
    probs = tf.nn.softmax(logits)
    loss = loss_fn(tf.one_hot([1, 2], 10), logits)
""",
            "near miss: softmax computed for display, the loss still gets the logits",
        ),
        Valid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.scores = tf.keras.layers.Dense(4)

    def call(self, x):
        return self.scores(self.hidden(x))

net = Classifier()

def xent(scores, targets):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=scores))

with tf.GradientTape() as tape:
    loss = xent(net(tf.zeros((2, 8))), tf.constant([0, 3]))
""",
            "near miss: a `tf.nn` cross-entropy given the raw scores of a linear head",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow.compat.v1 as tf

def create_model():
    return tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"),
                                tf.keras.layers.Dense(10, activation=tf.nn.softmax)])

model = create_model()
logits = model(images)
loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
""",
            message_contains="softmax probabilities",
        ),
        Invalid(
            """
import tensorflow as tf

tagger = tf.keras.Sequential([
    tf.keras.layers.Embedding(1000, 32),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(32, return_sequences=True)),
    tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(5, activation="softmax")),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()
for tokens, tags in batches:
    with tf.GradientTape() as tape:
        loss = loss_fn(tags, tagger(tokens, training=True))
    grads = tape.gradient(loss, tagger.trainable_variables)
    optimizer.apply_gradients(zip(grads, tagger.trainable_variables))
""",
            message_contains="`TimeDistributed(Dense)` layer",
            expected_fix=None,
        ),
        Invalid(
            """
import tensorflow as tf

head = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), head])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="softmax probabilities",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(32,))
x = tf.keras.layers.Dense(64, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(10, activation="softmax")(x)
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_fn(y, predictions)
    return tape.gradient(loss, model.trainable_variables)
""",
            line=8, column=57,
            message_contains="softmax probabilities",
            expected_fix="""
import tensorflow as tf

inputs = tf.keras.Input(shape=(32,))
x = tf.keras.layers.Dense(64, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(10, activation="softmax")(x)
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=False)

def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_fn(y, predictions)
    return tape.gradient(loss, model.trainable_variables)
""",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.out = tf.keras.layers.Dense(3)

    def call(self, x):
        return tf.nn.softmax(self.out(self.hidden(x)))

model = Classifier()
with tf.GradientTape() as tape:
    loss = tf.keras.losses.categorical_crossentropy(tf.one_hot([0], 3), model(tf.zeros((1, 5))), from_logits=True)
""",
            message_contains="`tf.nn.softmax`",
        ),
        Invalid(
            """
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
""",
            message_contains="sigmoid probabilities",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation=tf.nn.relu)
        self.scores = tf.keras.layers.Dense(4, activation=tf.nn.softmax)

    def call(self, x):
        return self.scores(self.hidden(x))

net = Classifier()

def xent(scores, targets):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=scores))

with tf.GradientTape() as tape:
    loss = xent(net(tf.zeros((2, 8))), tf.constant([0, 3]))
""",
            line=16, column=27,
            message_contains="`tf.nn.sparse_softmax_cross_entropy_with_logits` always takes logits",
        ),
    ]
