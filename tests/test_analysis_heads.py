"""heads.py: where a loss meets a model's output. Every spelling of a loss reads as the same loss, a
model's head reads the same whether the loss is given to `compile` or called in a custom loop, and what
cannot be read is unknown (no meeting, or an unknown width or activation), never a guess."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tapelint.analysis.facts import Facts
from tapelint.analysis.evaluations import LossKind, loss_of
from tapelint.analysis.heads import meetings


def _facts(source: str) -> Facts:
    text = textwrap.dedent(source)
    return Facts(cst.parse_module(text), text)


def _probed_losses(source: str) -> list[tuple[str, LossKind, bool | None] | None]:
    facts = _facts(source)
    found = []
    for site in facts.calls_to("probe"):
        loss = loss_of(facts, site.node.args[0].value, site.scope, site.order)
        found.append(None if loss is None else (loss.name, loss.kind, loss.from_logits))
    return found


def test_every_spelling_of_a_loss_is_the_same_loss() -> None:
    answers = _probed_losses("""
        import tensorflow as tf
        from tensorflow import keras
        from tensorflow.keras.losses import MeanSquaredError, mse

        name = "mean_squared_error"
        obj = MeanSquaredError()
        probe("mse")
        probe(name)
        probe(obj)
        probe(mse)
        probe(keras.losses.MeanSquaredError())
        probe(tf.keras.losses.mean_squared_error)
    """)
    assert answers == [("mean_squared_error", LossKind.REGRESSION, False)] * 6


def test_cross_entropies_keep_their_kind_and_from_logits() -> None:
    answers = _probed_losses("""
        import tensorflow as tf

        logits = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        positional = tf.keras.losses.BinaryCrossentropy(True)
        probe(logits)
        probe(positional)
        probe("categorical_crossentropy")
        probe("bce")
        probe(tf.keras.losses.Huber(delta=2.0))
        probe("kld")
    """)
    assert answers == [
        ("sparse_categorical_crossentropy", LossKind.SPARSE, True),
        ("binary_crossentropy", LossKind.BINARY, True),
        ("categorical_crossentropy", LossKind.CATEGORICAL, False),
        ("binary_crossentropy", LossKind.BINARY, False),
        ("huber", LossKind.REGRESSION, False),
        ("kl_divergence", LossKind.OTHER, False),
    ]


def test_a_loss_that_cannot_be_read_is_unknown() -> None:
    answers = _probed_losses("""
        import sys
        import tensorflow as tf

        LOSSES = {"mse": tf.keras.losses.MeanSquaredError(), "mae": tf.keras.losses.MeanAbsoluteError()}
        chosen = LOSSES[sys.argv[1]]
        if sys.argv[2] == "l1":
            either = "mae"
        else:
            either = "mse"

        def my_loss(y_true, y_pred):
            return tf.reduce_mean(tf.abs(y_true - y_pred))

        probe(chosen)
        probe(either)
        probe(my_loss)
        probe("not_a_loss")
    """)
    assert answers == [None, None, None, None]


_COMPILED = """
import tensorflow as tf
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(7, activation="sigmoid")])
model.compile(optimizer="adam", loss="categorical_crossentropy")
model.fit(x, keras.utils.to_categorical(y, 7))
"""
_LOOP = """
import tensorflow as tf
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(7, activation="sigmoid")])
loss_fn = keras.losses.CategoricalCrossentropy()

def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_fn(tf.one_hot(y, 7), predictions)
    return tape.gradient(loss, model.trainable_variables)
"""
_FUNCTIONAL = """
import tensorflow as tf

inputs = tf.keras.Input((16,))
outputs = tf.keras.layers.Dense(7, activation="sigmoid")(tf.keras.layers.Dense(32, activation="relu")(inputs))
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss=tf.keras.losses.categorical_crossentropy)
"""


@pytest.mark.parametrize("source", [_COMPILED, _LOOP, _FUNCTIONAL], ids=["compile", "custom-loop", "functional"])
def test_the_head_reads_the_same_in_compile_and_in_a_custom_loop(source: str) -> None:
    found = meetings(_facts(source))
    assert len(found) == 1
    meeting = found[0]
    assert meeting.loss.kind is LossKind.CATEGORICAL
    assert meeting.head.activation == "sigmoid"
    assert meeting.head.units == 7


def test_a_loss_on_something_else_than_a_model_output_has_an_unknown_head() -> None:
    found = meetings(_facts("""
        import tensorflow as tf

        loss_fn = tf.keras.losses.MeanSquaredError()
        outputs = load_predictions()
        error = loss_fn(targets, outputs)
    """))
    assert len(found) == 1
    assert found[0].head.activation == "<unknown>"
    assert found[0].head.units is None


def test_compile_on_a_model_that_cannot_be_read_has_an_unknown_head() -> None:
    found = meetings(_facts("""
        import tensorflow as tf

        model = tf.keras.models.load_model("saved.keras")
        model.compile(optimizer="adam", loss="mse")
        other = build_somewhere_else()
        other.compile(optimizer="adam", loss="mse")
    """))
    # The loaded model is a model whose output is unknown; `other` is not known to be a model at all.
    assert [(m.head.activation, m.head.units) for m in found] == [("<unknown>", None)]


# ----------------------------------------------------------------------------- widths through width-keeping layers

_SEQUENTIAL_ACTIVATION = """
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(7),
                          keras.layers.Activation("softmax")])
model.compile(optimizer="adam", loss="categorical_crossentropy")
"""
_FUNCTIONAL_ACTIVATION = """
import tensorflow as tf

inputs = tf.keras.Input((16,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
logits = tf.keras.layers.Dense(7)(hidden)
logits = tf.keras.layers.BatchNormalization()(logits)
outputs = tf.keras.layers.Activation("softmax")(logits)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="categorical_crossentropy")
"""
_FUNCTIONAL_DROPOUT_DENSE = """
import tensorflow as tf

inputs = tf.keras.Input((16,))
hidden = tf.keras.layers.Dropout(0.2)(tf.keras.layers.Dense(32, activation="relu")(inputs))
outputs = tf.keras.layers.Dense(7, activation="softmax")(hidden)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="categorical_crossentropy")
"""
_LOOP_HELD_ACTIVATION = """
import tensorflow as tf

inputs = tf.keras.Input((16,))
normalize = tf.keras.layers.Softmax()
outputs = normalize(tf.keras.layers.Dropout(0.5)(tf.keras.layers.Dense(7)(inputs)))
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.CategoricalCrossentropy()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    return tape.gradient(loss, model.trainable_variables)
"""
_SUBCLASS_ACTIVATION = """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.logits = tf.keras.layers.Dense(7)
        self.normalize = tf.keras.layers.Activation("softmax")

    def call(self, x):
        return self.normalize(self.logits(x))

model = Classifier()
model.compile(optimizer="adam", loss="categorical_crossentropy")
"""


@pytest.mark.parametrize("source", [_SEQUENTIAL_ACTIVATION, _FUNCTIONAL_ACTIVATION, _FUNCTIONAL_DROPOUT_DENSE,
                                    _LOOP_HELD_ACTIVATION, _SUBCLASS_ACTIVATION],
                         ids=["sequential-activation", "functional-activation", "functional-dropout-dense",
                              "custom-loop-held-softmax", "subclass-activation"])
def test_a_head_reads_the_same_width_through_width_keeping_layers_however_it_is_written(source: str) -> None:
    found = meetings(_facts(source))
    assert [(m.head.activation, m.head.units) for m in found] == [("softmax", 7)]


def _functional_after(layer: str, header: str = "") -> str:
    return f"""
import tensorflow as tf
{header}
inputs = tf.keras.Input((16,))
logits = tf.keras.layers.Dense(7)(inputs)
outputs = {layer}(logits)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="categorical_crossentropy")
"""


@pytest.mark.parametrize("source", [
    _functional_after("tf.keras.layers.Lambda(lambda t: tf.nn.softmax(t))"),
    _functional_after("Head()", "from mylib import Head"),
    _functional_after("Head()", "class Head(tf.keras.layers.Layer):\n    def call(self, x):\n"
                                "        return tf.nn.softmax(x)\n"),
    _functional_after("tf.keras.layers.Reshape((7, 1))"),
    _functional_after("tf.keras.layers.Flatten()"),
    """
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(7, activation="softmax"), keras.layers.Reshape((7, 1))])
model.compile(optimizer="adam", loss="categorical_crossentropy")
""",
], ids=["lambda", "imported-custom-layer", "local-custom-layer", "reshape", "flatten", "sequential-reshape"])
def test_a_layer_that_may_change_the_width_leaves_the_head_width_unknown(source: str) -> None:
    found = meetings(_facts(source))
    assert len(found) == 1
    assert found[0].head.units is None
