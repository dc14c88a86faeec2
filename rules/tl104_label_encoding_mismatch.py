from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import string
from tapelint.analysis.facts import arg_value
from tapelint.analysis.labels import Encoding, LabelInfo, fit_targets, label_reader
from tapelint.analysis.models import Compile, compile_for
from tapelint.analysis.names import dotted
from tapelint.analysis.evaluations import evaluations
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

# Losses and metrics that take integer class ids, and their one-hot twins.
SPARSE_TO_DENSE = {
    "SparseCategoricalCrossentropy": "CategoricalCrossentropy",
    "sparse_categorical_crossentropy": "categorical_crossentropy",
    "SparseCategoricalAccuracy": "CategoricalAccuracy",
    "sparse_categorical_accuracy": "categorical_accuracy",
    "SparseTopKCategoricalAccuracy": "TopKCategoricalAccuracy",
    "sparse_top_k_categorical_accuracy": "top_k_categorical_accuracy",
    "sparse_softmax_cross_entropy_with_logits": "softmax_cross_entropy_with_logits",
}
DENSE_TO_SPARSE = {dense: sparse for sparse, dense in SPARSE_TO_DENSE.items()}
DENSE_TO_SPARSE.update({
    "softmax_cross_entropy_with_logits_v2": "sparse_softmax_cross_entropy_with_logits",
    "CategoricalFocalCrossentropy": "",
    "categorical_focal_crossentropy": "",
    "CategoricalHinge": "",
    "categorical_hinge": "",
})
# Continuous targets are other rules' business: this one compares the two class encodings.
_ENCODED = (Encoding.ONE_HOT, Encoding.INTEGER)


class LabelEncodingMismatch(Rule):
    """
    ## What it does
    Reports a sparse categorical loss or metric (`SparseCategoricalCrossentropy`,
    `SparseCategoricalAccuracy`, `tf.nn.sparse_softmax_cross_entropy_with_logits`) fed one-hot labels,
    and a categorical one (`CategoricalCrossentropy`, `CategoricalAccuracy`,
    `tf.nn.softmax_cross_entropy_with_logits`) fed integer class ids. The labels are followed to where
    they are made: `to_categorical`/`tf.one_hot`/`np.eye(K)[y]`, `pd.get_dummies` of a column (one-hot);
    `keras.datasets.mnist`/`cifar10`/... `load_data()`, scikit-learn's `make_classification`,
    `make_blobs`, `make_moons` and toy loaders (`load_iris`, ...), `np.argmax`/`tf.argmax`, `LabelEncoder`,
    pandas category codes, integer literals, `np.random.randint` (integer ids), through assignments,
    `train_test_split`, helper functions, `tf.data` pipelines (`from_tensor_slices`, `batch`, `shuffle`,
    `map`) and `for x, y in dataset` loops. Both custom loops and `compile(loss=...)` + `fit(x, y)` are
    checked.

    ## Why is this bad?
    The two encodings are not interchangeable. The loss usually fails with a shape error ("Shapes (32, 1)
    and (32, 10) are incompatible", "logits and labels must have the same first dimension"), which is
    at least loud, but after a `squeeze` or with a batch size that happens to match the number of classes
    it can run and train on nonsense. Metrics are worse: `CategoricalAccuracy` given integer ids takes
    an `argmax` over a single column and silently reports a meaningless number.

    ## Example
    ```python
    y_train = tf.keras.utils.to_categorical(y_train, 10)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ```

    ## Use instead
    ```python
    y_train = tf.keras.utils.to_categorical(y_train, 10)
    loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    ```

    ## Known problems
    Labels read from files, generators or datasets built in other modules are not followed, and a
    `Dataset.map` with a named function (not a lambda) is not read; nothing is reported then. A column
    of a data frame is not known (`df["label"].values` may hold ids or text), and `pd.get_dummies` of a
    whole frame passes its number columns through, so neither is reported.

    ## Options
    None.

    ## Fix safety
    The fix renames the loss or metric class to its twin (`SparseCategoricalCrossentropy` <->
    `CategoricalCrossentropy`). It is unsafe: the same object may be used elsewhere with other labels,
    and changing the labels instead may be what you want.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/losses/SparseCategoricalCrossentropy
    - https://github.com/keras-team/keras/issues/7339
    - https://github.com/tensorflow/tensorflow/issues/32333
    - https://github.com/tensorflow/tensorflow/issues/46953 (`CategoricalAccuracy` silently accepts integer labels)
    - https://github.com/DeepLearningSandbox/DeepLearningSandbox/issues/3 (integer targets given to
      `categorical_crossentropy`)
    """

    code = "TL104"
    name = "label-encoding-mismatch"
    message = "`{callee}` expects {expected} but `{label}` holds {actual} (from {evidence})"
    severity = Severity.ERROR
    fixable = True
    triggers = (("ategorical", "rossentropy"), ("ategorical", "ccuracy"), "cross_entropy_with_logits")
    probe = ""

    def check(self) -> None:
        facts = self.facts
        reader = label_reader(facts)
        for ev in evaluations(facts):
            if ev.y_true is None:
                continue
            wanted = self._wanted(ev.name)
            if wanted is None:
                continue
            info = reader.encoding(ev.y_true, ev.site.scope, ev.site.order)
            if info.encoding not in _ENCODED or info.encoding is wanted:
                continue
            fix = None
            if ev.construction is not None:
                fix = self._rename_fix(ev.construction.func, ev.name)
            elif ev.role != "op":
                fix = self._rename_fix(ev.site.node.func, ev.name)
            self._report(ev.y_true, dotted(ev.site.node.func) or ev.name, wanted, info, fix)
        self._check_fit()

    @staticmethod
    def _wanted(name: str) -> Encoding | None:
        if name in SPARSE_TO_DENSE:
            return Encoding.INTEGER
        if name in DENSE_TO_SPARSE:
            return Encoding.ONE_HOT
        return None

    def _report(self, node: cst.CSTNode, callee: str, wanted: Encoding, info: LabelInfo,
                fix: PendingFix | None, confidence: Confidence = Confidence.HIGH) -> None:
        expected = "integer class ids" if wanted is Encoding.INTEGER else "one-hot labels"
        actual = "one-hot labels" if info.encoding is Encoding.ONE_HOT else "integer class ids"
        label = cst.Module([]).code_for_node(node) if isinstance(node, cst.BaseExpression) else "labels"
        self.report(node, fix=fix, confidence=confidence, callee=callee, expected=expected, label=label,
                    actual=actual, evidence=info.evidence, related=[(info.node, f"the {actual} made")])

    @staticmethod
    def _rename_fix(func: cst.BaseExpression, name: str) -> PendingFix | None:
        twin = SPARSE_TO_DENSE.get(name) or DENSE_TO_SPARSE.get(name)
        if not twin:
            return None
        target = func.attr if isinstance(func, cst.Attribute) else func
        if not isinstance(target, cst.Name) or target.value != name:
            return None
        return PendingFix(f"Use `{twin}`", False, [(target, cst.Name(twin))])

    # --- compile(loss=...) + fit(x, y)
    def _check_fit(self) -> None:
        facts = self.facts
        for fit in facts.calls:
            if fit.method != "fit" or fit.receiver is None:
                continue
            compiled = compile_for(facts, fit)
            if compiled is None:
                continue
            info: LabelInfo | None = None
            for role, name, node in self._compiled_names(compiled):
                wanted = self._wanted(name)
                if wanted is None:
                    continue
                if info is None:
                    info = fit_targets(facts, fit)
                if info.encoding not in _ENCODED or info.encoding is wanted:
                    continue
                # Where the targets are given: `y`, else the dataset or generator `x` that yields them.
                where = arg_value(fit.node, 1, "y") or arg_value(fit.node, 0, "x")
                if where is None:
                    continue
                fix = None
                if isinstance(node, cst.SimpleString):
                    twin = SPARSE_TO_DENSE.get(name) or DENSE_TO_SPARSE.get(name)
                    if twin:
                        quote = node.value[-1]
                        fix = PendingFix(f"Use `{twin}`", False, [(node, f"{node.prefix}{quote}{twin}{quote}")])
                elif isinstance(node, cst.Call):
                    fix = self._rename_fix(node.func, name)
                self._report(where, f"{fit.receiver}.compile({role}={name})", wanted, info, fix,
                             Confidence.INFERRED)
                break

    def _compiled_names(self, compiled: Compile) -> list[tuple[str, str, cst.CSTNode]]:
        found: list[tuple[str, str, cst.CSTNode]] = []
        values: list[tuple[str, cst.BaseExpression]] = []
        loss = compiled.loss
        if loss is not None:
            values.append(("loss", loss))
        metrics = compiled.metrics
        if isinstance(metrics, (cst.List, cst.Tuple)):
            values.extend(("metrics", e.value) for e in metrics.elements)
        for role, value in values:
            text = string(value)
            if text is not None:
                found.append((role, text, value))
                continue
            target = value.func if isinstance(value, cst.Call) else value
            qualified = self.facts.resolve(target) or ""
            if qualified.startswith(("keras.losses.", "keras.metrics.")):
                found.append((role, qualified.rsplit(".", 1)[-1], value))
        return found

    VALID = [
        Valid(
            """
import tensorflow as tf

(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
dataset = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_train)).shuffle(1000).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
acc = tf.keras.metrics.SparseCategoricalAccuracy()

for x_batch, y_batch in dataset:
    with tf.GradientTape() as tape:
        logits = model(x_batch, training=True)
        loss = loss_fn(y_batch, logits)
    acc.update_state(y_batch, logits)
""",
            "integer MNIST labels with the sparse loss and metric",
        ),
        Valid(
            """
import tensorflow as tf

(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).map(
    lambda x, y: (tf.cast(x, tf.float32) / 255.0, tf.one_hot(tf.squeeze(y), 10))).batch(64)
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10, activation="softmax")])
loss_fn = tf.keras.losses.CategoricalCrossentropy()

for step, (images, labels) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
""",
            "near miss: integer CIFAR labels one-hot encoded in the pipeline, then a categorical loss",
        ),
        Valid(
            """
import tensorflow as tf
from sklearn.datasets import make_blobs
from sklearn.model_selection import train_test_split

X, y = make_blobs(n_samples=1000, centers=2, random_state=0)
y = tf.keras.utils.to_categorical(y)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.33)
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
model.fit(X_train, y_train, epochs=5)
""",
            "near miss: sklearn class ids one-hot encoded before the split, then the categorical loss",
        ),
        Valid(
            """
import pandas as pd
from sklearn.preprocessing import LabelEncoder
from tensorflow import keras

df = pd.read_csv("iris.csv")
encoder = LabelEncoder()
y = encoder.fit_transform(df["species"])
X = df.drop(columns=["species"]).values
model = keras.Sequential([keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(X, y, epochs=10)
""",
            "LabelEncoder gives integer ids: the sparse loss is right",
        ),
        Valid(
            """
import pandas as pd
from tensorflow import keras

df = pd.read_csv("labels.csv")
y = pd.get_dummies(df[["label"]]).values
model = keras.Sequential([keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(features, y)
""",
            "near miss: get_dummies of a frame passes a number column through unchanged: not known to be one-hot",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
y_train = tf.keras.utils.to_categorical(y_train, 10)
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    return tape.gradient(loss, model.trainable_variables)

for x_batch, y_batch in train_ds:
    train_step(x_batch, y_batch)
""",
            line=13, column=24,
            message_contains="holds one-hot labels (from `tf.keras.utils.to_categorical`)",
            expected_fix="""
import tensorflow as tf

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
y_train = tf.keras.utils.to_categorical(y_train, 10)
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    return tape.gradient(loss, model.trainable_variables)

for x_batch, y_batch in train_ds:
    train_step(x_batch, y_batch)
""",
        ),
        Invalid(
            """
import tensorflow as tf

acc = tf.keras.metrics.CategoricalAccuracy()
labels = tf.constant([0, 3, 1])
acc.update_state(labels, tf.random.uniform((3, 4)))
""",
            message_contains="expects one-hot labels",
        ),
        Invalid(
            """
from tensorflow import keras

(x_train, y_train), _ = keras.datasets.fashion_mnist.load_data()
model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, epochs=5)
""",
            message_contains="integer class ids (from `fashion_mnist.load_data()`)",
        ),
        Invalid(
            """
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from tensorflow import keras

X, y = make_classification(n_samples=600, n_features=20, n_informative=6, n_classes=3)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2)
model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
model.fit(X_train, y_train, epochs=5)
""",
            line=10, column=20,
            message_contains="`y_train` holds integer class ids (from `make_classification()`)",
            expected_fix="""
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from tensorflow import keras

X, y = make_classification(n_samples=600, n_features=20, n_informative=6, n_classes=3)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2)
model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(X_train, y_train, epochs=5)
""",
        ),
        Invalid(
            """
import numpy as np
import tensorflow as tf

(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
y_onehot = tf.keras.utils.to_categorical(y_train, 10)
y_ids = np.argmax(y_onehot, axis=1)
dataset = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_ids)).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10, activation="softmax")])
loss_fn = tf.keras.losses.CategoricalCrossentropy()

for images, labels in dataset:
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
""",
            message_contains="holds integer class ids (from `np.argmax`)",
        ),
        Invalid(
            """
import pandas as pd
from tensorflow import keras

df = pd.read_csv("iris.csv")
y = pd.get_dummies(df["species"]).values
X = df.drop(columns=["species"]).values
model = keras.Sequential([keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy())
model.fit(X, y, epochs=10)
""",
            message_contains="holds one-hot labels (from `pd.get_dummies`)",
        ),
        Invalid(
            """
import tensorflow as tf
from sklearn.datasets import make_blobs
from sklearn.model_selection import train_test_split

X, y = make_blobs(n_samples=500, centers=4)
X_train, X_test, y_train, y_test = train_test_split(X, tf.keras.utils.to_categorical(y, 4))
train_ds = tf.data.Dataset.from_tensor_slices((X_train, y_train)).shuffle(500).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(train_ds, epochs=5)
""",
            message_contains="holds one-hot labels (from `tf.keras.utils.to_categorical`)",
        ),
    ]
