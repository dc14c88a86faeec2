from __future__ import annotations

from tapelint.analysis.evaluations import LossKind
from tapelint.analysis.heads import meetings
from tapelint.analysis.labels import Encoding
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._heads_family import causes, head_where, replace_string


class BinaryLossOnTwoUnitSoftmax(Rule):
    """
    ## What it does
    Reports a binary cross-entropy (`binary_crossentropy`, `BinaryCrossentropy`, the focal variant) on a
    two-unit `softmax` output when the targets are proved to be integer class ids (0 or 1 per sample), in
    `compile(loss=...)` with the targets of `fit` and in custom loops.

    ## Why is this bad?
    A binary cross-entropy compares each output unit with the target element at the same place. Two softmax
    units against one id per sample do not line up: Keras 3 stops at the first batch ("Arguments `target` and
    `output` must have the same shape. Received: target.shape=(None, 1), output.shape=(None, 2)"), and Keras 2
    (`tf_keras`) broadcasts the id against both units, asking both probabilities to equal the label while
    softmax makes them sum to one: the loss cannot go down for either class, and the model learns nothing.
    Either keep two units and use a categorical loss, or use one sigmoid unit with the binary loss.

    A binary cross-entropy on a two-unit softmax with one-hot targets (`to_categorical(y, 2)`) lines up and
    trains; it is not reported.

    ## Example
    ```python
    model.add(keras.layers.Dense(2, activation="softmax"))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(x, y)  # y: 0/1 per sample
    ```

    ## Use instead
    ```python
    model.add(keras.layers.Dense(2, activation="softmax"))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y)
    ```

    ## Known problems
    The targets must be proved to be class ids in this file; otherwise nothing is reported.

    ## Options
    None.

    ## Fix safety
    For a string loss the fix writes `"sparse_categorical_crossentropy"`. It is unsafe: metrics such as
    `binary_accuracy` must change with it.

    ## References
    - https://boohere.com/it/detail/80265.html (two classes: softmax needs a categorical loss over two units,
      a sigmoid unit the binary one)
    - https://wiki.keldo.uk/content/ai.stackexchange.com_en_all_2023-10/questions/26849/is-it-appropriate-to-use-a-softmax-activation-with-a-categorical-crossentropy-
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/BinaryCrossentropy
    """

    code = "TL117"
    name = "binary-loss-on-two-unit-softmax"
    message = ("`{loss}` on the two-unit `softmax` output ({where}) with class ids (from {evidence}): each id is "
               "compared with both units; use `sparse_categorical_crossentropy`, or one `sigmoid` unit")
    severity = Severity.ERROR
    fixable = True
    triggers = ("softmax", "inary")
    probe = ""

    def check(self) -> None:
        seen: set[int] = set()
        for meeting in meetings(self.facts):
            head, targets = meeting.head, meeting.targets
            if meeting.loss.kind is not LossKind.BINARY or meeting.loss.from_logits is not False:
                continue
            if head.activation != "softmax" or head.units != 2 or targets.encoding is not Encoding.INTEGER:
                continue
            node = meeting.loss.node
            if id(node) in seen:
                continue
            seen.add(id(node))
            fix = replace_string(node, None, "sparse_categorical_crossentropy", "Use `sparse_categorical_crossentropy`")
            self.report(node, fix=fix, loss=meeting.loss.written, evidence=targets.evidence or "the targets",
                        where=head_where(self, head), related=causes(meeting, head=True, targets=True))

    VALID = [
        Valid(
            """
from sklearn.datasets import make_classification
from tensorflow import keras

x, y = make_classification(n_samples=400, n_features=8)
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x, y)
""",
            "two softmax units with a sparse categorical loss",
        ),
        Valid(
            """
from sklearn.datasets import make_classification
from tensorflow import keras

x, y = make_classification(n_samples=400, n_features=8)
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x, keras.utils.to_categorical(y, 2))
""",
            "near miss: one-hot targets line up with the two units",
        ),
        Valid(
            """
from sklearn.datasets import make_classification
from tensorflow import keras

x, y = make_classification(n_samples=400, n_features=8)
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x, y)
""",
            "near miss: one sigmoid unit with the binary loss",
        ),
    ]
    INVALID = [
        Invalid(
            """
from sklearn.datasets import make_classification
from tensorflow import keras

x, y = make_classification(n_samples=400, n_features=8)
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(x, y.reshape(-1, 1))
""",
            line=7, column=38,
            message_contains="`binary_crossentropy` on the two-unit `softmax` output",
            expected_fix="""
from sklearn.datasets import make_classification
from tensorflow import keras

x, y = make_classification(n_samples=400, n_features=8)
model = keras.Sequential([keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x, y.reshape(-1, 1))
""",
        ),
        Invalid(
            """
import tensorflow as tf

(x_train, y_train), _ = tf.keras.datasets.imdb.load_data(num_words=10000)
model = tf.keras.Sequential([
    tf.keras.layers.Embedding(10000, 16),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(2, activation="softmax"),
])
model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
model.fit(tf.keras.utils.pad_sequences(x_train, 200), y_train)
""",
            line=10,
            message_contains="`BinaryCrossentropy` on the two-unit `softmax` output",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

labels = np.random.randint(0, 2, size=(256, 1))
model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(2, activation="softmax")])
bce = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam()

def train_step(x):
    with tf.GradientTape() as tape:
        loss = bce(labels, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=7,
            message_contains="with class ids (from `np.random.randint`)",
        ),
    ]
