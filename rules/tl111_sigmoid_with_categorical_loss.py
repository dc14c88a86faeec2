from __future__ import annotations

import libcst as cst

from tapelint.analysis.evaluations import LossKind
from tapelint.analysis.heads import Meeting, activation_argument, meetings
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid
from tapelint.rules._heads_family import causes, replace_string


class SigmoidWithCategoricalLoss(Rule):
    """
    ## What it does
    Reports a model whose output layer has two or more `sigmoid` units and whose loss is a categorical
    cross-entropy (`categorical_crossentropy`, `sparse_categorical_crossentropy`, their classes, and the
    focal variant), in `compile(loss=...)` and in a custom loop's `loss_fn(y, model(x))`. The width of the
    output must be a constant this file shows.

    ## Why is this bad?
    A categorical cross-entropy treats the outputs of one sample as one probability distribution over the
    classes. `sigmoid` scores every class on its own, so the outputs do not sum to one, and what the model
    outputs is not what the loss trained:
    - With `activation="sigmoid"` on the layer, Keras 3 keeps the layer's logits and the categorical loss
      reads them as softmax logits, so training is a softmax's; but `predict`, a saved model and every
      metric see the sigmoid scores. On TF 2.21, a 10-class MLP trained this way on separable synthetic
      data had the softmax's argmax accuracy, yet its outputs summed to 3.3 per sample (1.00 with softmax):
      several classes at a "probability" near 1 at once, so thresholds, scores and calibration are wrong.
    - With `tf.nn.sigmoid(...)` (no cached logits) or Keras 2, the loss divides the scores by their sum,
      only ever rewards the true class's share, and trains worse: in our corpus program the top score
      reached 0.46 where softmax reached 0.88.
    The one-word fix is `softmax`.

    ## Example
    ```python
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    ```

    ## Use instead
    ```python
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    ```

    A multi-label problem (several classes true at once) keeps `sigmoid` and uses `binary_crossentropy`;
    that pairing is not reported.

    ## Known problems
    The output layer and the loss must both be read in this file (a model loaded from disk, or a width
    computed at run time, leaves the rule silent). A loss given `from_logits=True` is left to TL101.

    ## Options
    None.

    ## Fix safety
    For a string `activation="sigmoid"` on the output layer the fix writes `"softmax"`. It is unsafe: a
    multi-label model given a categorical loss by mistake needs the loss changed instead.

    ## References
    - https://datascience.stackexchange.com/questions/91069/the-sum-of-multi-class-prediction-is-not-1-using-tensorflow-and-keras
      (`Dense(4, activation='sigmoid')` with `categorical_crossentropy`: "the sum of them is not 1")
    - https://stackoverflow.com/questions/49990816/sigmoid-activation-for-multi-class-classification
    - https://github.com/MTG/MIRCourse/issues/2 (a course notebook's sigmoid multi-class output, fixed to softmax)
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/CategoricalCrossentropy
    """

    code = "TL111"
    name = "sigmoid-with-categorical-loss"
    message = ("`{loss}` treats the {units} outputs as one distribution, but the `sigmoid` output ({where}) "
               "scores each one on its own: use `softmax` for one class per sample, or a binary cross-entropy when "
               "several outputs can be on at once")
    severity = Severity.WARNING
    fixable = True
    triggers = ("sigmoid", ("ategorical", "rossentropy"))
    probe = ""

    def check(self) -> None:
        seen: set[int] = set()
        for meeting in meetings(self.facts):
            head = meeting.head
            if meeting.loss.kind not in (LossKind.CATEGORICAL, LossKind.SPARSE) or meeting.loss.from_logits is not False:
                continue
            if head.activation != "sigmoid" or head.units is None or head.units < 2 or head.node is None:
                continue
            if id(head.node) in seen:
                continue
            seen.add(id(head.node))
            node, fix = self._where(head.node)
            self.report(node, fix=fix, loss=meeting.loss.written, units=int(head.units),
                        where=self._description(meeting), related=causes(meeting, loss=True))

    def _description(self, meeting: Meeting) -> str:
        where = self.location(meeting.site.node)
        text = meeting.head.output.description or "the output layer"
        return f"{text}; the loss at {where}" if where else text

    def _where(self, node: cst.CSTNode) -> tuple[cst.CSTNode, PendingFix | None]:
        """The `activation=` argument of the output layer (fixable when the string "sigmoid"), else the layer."""
        activation = activation_argument(self.facts, node)
        if activation is None:
            return node, None
        return activation, replace_string(activation, "sigmoid", "softmax", "Use `softmax`")

    VALID = [
        Valid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="categorical_crossentropy")
""",
            "softmax with a categorical loss",
        ),
        Valid(
            """
from tensorflow import keras

NUM_TAGS = 20
model = keras.Sequential([
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dense(NUM_TAGS, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["binary_accuracy"])
""",
            "near miss: a multi-label tagger, sigmoid with a binary cross-entropy",
        ),
        Valid(
            """
import tensorflow as tf

def build(classes):
    return tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"),
                                tf.keras.layers.Dense(classes, activation="sigmoid")])

model = build(int(input()))
model.compile(optimizer="adam", loss="categorical_crossentropy")
""",
            "near miss: the width is read at run time; one unit would be TL112's case",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(5)])
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "a linear head with from_logits=True",
        ),
        Valid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(100,))
logits = tf.keras.layers.Dense(6)(inputs)
outputs = tf.keras.layers.Activation("sigmoid")(tf.keras.layers.Lambda(lambda t: t[:, :1])(logits))
model = tf.keras.Model(inputs, outputs)
model.compile(loss="categorical_crossentropy", optimizer="rmsprop")
""",
            "near miss: a `Lambda` between the six units and the sigmoid may change the width: unknown",
        ),
    ]
    INVALID = [
        Invalid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(10, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="categorical_crossentropy")
""",
            line=6, column=39,
            message_contains="`categorical_crossentropy` treats the 10 outputs as one distribution",
            expected_fix="""
from tensorflow import keras

model = keras.Sequential([
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="categorical_crossentropy")
""",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(32,))
hidden = tf.keras.layers.Dense(64, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(4, activation="sigmoid")(hidden)
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
""",
            line=6,
            message_contains="`SparseCategoricalCrossentropy` treats the 4 outputs",
        ),
        Invalid(
            """
from tensorflow.keras.layers import Activation, Dense
from tensorflow.keras.models import Sequential

model = Sequential()
model.add(Dense(256, input_dim=100, activation="relu"))
model.add(Dense(6))
model.add(Activation("sigmoid"))
model.compile(loss="categorical_crossentropy", optimizer="rmsprop", metrics=["accuracy"])
""",
            line=8,
            message_contains="the 6 outputs",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(100,))
logits = tf.keras.layers.Dense(6)(tf.keras.layers.Dense(256, activation="relu")(inputs))
outputs = tf.keras.layers.Activation("sigmoid")(tf.keras.layers.BatchNormalization()(logits))
model = tf.keras.Model(inputs, outputs)
model.compile(loss="categorical_crossentropy", optimizer="rmsprop")
""",
            line=6, column=38,
            message_contains="the 6 outputs",
        ),
    ]
