from __future__ import annotations

import re

from tapelint.analysis.blocks import blocks
from tapelint.analysis.facts import CallSite, Facts
from tapelint.analysis.keras import WEIGHTED_LAYERS, application_name, layer_class
from tapelint.analysis.run_counts import creation_count
from tapelint.analysis.vocabulary import APPLICATIONS_PREFIX
from tapelint.analysis.values import values
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

VARIABLE_MAKERS = frozenset({"tensorflow.Variable", "keras.Variable"})
# Layers with weights beyond WEIGHTED_LAYERS' list (any convolution, recurrent or attention layer).
_WEIGHTED_WORDS = ("Conv", "LSTM", "GRU", "RNN", "Dense", "Embedding", "Attention", "Normalization", "PReLU")
# What a file must say for anything here to be reported: the last part of a name `_construction` accepts
# (a weighted layer's class, or a word such a class holds; `Variable`; `applications`). Resolving a name
# rewrites its prefix (`tf.keras.` -> `keras.`), never its last part, so that part is in the text.
_CONSTRUCTED = re.compile("|".join(re.escape(word) for word in sorted(
    {*WEIGHTED_LAYERS, *_WEIGHTED_WORDS, *(name.rsplit(".", 1)[-1] for name in VARIABLE_MAKERS),
     APPLICATIONS_PREFIX.rstrip(".").rsplit(".", 1)[-1]})))


def _weighted(cls: str) -> bool:
    return cls in WEIGHTED_LAYERS or any(word in cls for word in _WEIGHTED_WORDS)


def _framework_class(facts: Facts, name: str | None) -> bool:
    """Is the class a Keras layer or model, or a `tf.Module` (directly or through classes of this file)?"""
    return any(base.startswith(("keras.", "tensorflow.")) for base in values(facts).library_bases(name))


class LayerCreatedInCall(Rule):
    """
    ## What it does
    Reports a Keras layer with weights (Dense, Conv*, LSTM, Embedding, BatchNormalization, ...), a
    `keras.applications` model or a `tf.Variable` constructed where it runs on every step: in the
    `call` method of a layer or model, inside the tape block, inside the step function, or inside the
    loop that runs the steps. Lazy creation guarded by an `if` (`if self.dense is None:`) is not
    reported.

    ## Why is this bad?
    Each call builds a new layer with freshly initialised weights. They are not the ones in
    `model.trainable_variables`, so no optimizer ever updates them: the part of the network they form
    stays random, the loss plateaus, and the optimizer warns that gradients do not exist for some
    variables (or none of the variables it knows get a gradient). Inside `tf.function`, creating a
    variable after the first call raises "tf.function-decorated function tried to create variables on
    non-first call".

    ## Example
    ```python
    class Head(tf.keras.layers.Layer):
        def call(self, x):
            return tf.keras.layers.Dense(10)(x)
    ```

    ## Use instead
    ```python
    class Head(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(10)

        def call(self, x):
            return self.dense(x)
    ```

    ## Known problems
    Only constructions written in these places are seen, not those in helper functions they call.
    Layers without weights (Dropout, Flatten, Activation, pooling) are not reported: re-creating them
    costs time but trains nothing wrong.

    ## Options
    None.

    ## Fix safety
    No fix: the layer must move to `__init__` or `build`, which changes the class.

    ## References
    - https://www.tensorflow.org/guide/keras/making_new_layers_and_models_via_subclassing
    - https://www.tensorflow.org/guide/function#creating_tfvariables
    - https://github.com/keras-team/keras/issues/11736 (Dense created inside `call` is not trained)
    - https://github.com/tensorflow/tensorflow/issues/32729
    """

    code = "TL304"
    name = "layer-created-in-call"
    message = "`{what}` is created {where}: every step gets new, randomly initialised weights that no optimizer trains"
    severity = Severity.ERROR
    triggers = (("def call", "layers", _CONSTRUCTED), ("def call", "Variable"), ("def __call__", "layers", _CONSTRUCTED),
                ("def __call__", "Variable"), ("GradientTape", _CONSTRUCTED), ("apply_gradients", _CONSTRUCTED))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        spans = blocks(facts)
        for site in facts.calls:
            what = self._construction(facts, site)
            if what is None:
                continue
            count = creation_count(facts, site)
            if count.kind != "per-step" or count.step is None:
                continue  # once, per call, or per trace (TensorFlow raises on the first call: TL403's finding)
            where = count.step
            if where.kind == "call" and not _framework_class(facts, site.scope.class_name):
                continue
            if spans.guards(site.order) and (where.kind == "call" or self._stored_on_self(facts, site)):
                continue  # lazily built once
            if where.kind == "call" and site.scope.simple_name != "call" and self._stored_on_self(facts, site):
                continue
            self.report(site.node, what=what, where=where.label)

    @staticmethod
    def _construction(facts: Facts, site: CallSite) -> str | None:
        qualified = site.qualified
        if qualified in VARIABLE_MAKERS:
            return "tf.Variable(...)"
        cls = layer_class(facts, site.node)
        if cls is not None and _weighted(cls):
            return f"{cls}(...)"
        app = application_name(facts, site.node)
        if app is not None:
            return f"{app}(...)"
        return None

    @staticmethod
    def _stored_on_self(facts: Facts, site: CallSite) -> bool:
        return any(b.target.startswith("self.") for b in facts.bindings_of_value(site.node))

    VALID = [
        Valid(
            """
import tensorflow as tf

backbone = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu")])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = tf.keras.layers.Dense(10)(backbone(x, training=True))
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, backbone.trainable_variables)
    optimizer.apply_gradients(zip(grads, backbone.trainable_variables))
""",
            "inside a tf.function the first call raises instead (TL403 variable-created-in-tf-function reports it)",
        ),
        Valid(
            """
import tensorflow as tf

class Block(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.dense = tf.keras.layers.Dense(units)
        self.proj = None

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(self.units,), initializer="ones")

    def call(self, x, training=False):
        if self.proj is None:
            self.proj = tf.keras.layers.Dense(self.units)
        h = tf.keras.layers.Dropout(0.1)(self.dense(x), training=training)
        return self.proj(h) * self.scale
""",
            "layers made in __init__/build, a lazily built projection, a weightless Dropout in call",
        ),
        Valid(
            """
import tensorflow as tf

def make_model():
    inputs = tf.keras.Input(shape=(8,))
    outputs = tf.keras.layers.Dense(1)(tf.keras.layers.Dense(16, activation="relu")(inputs))
    return tf.keras.Model(inputs, outputs)

model = make_model()
optimizer = tf.keras.optimizers.Adam()
x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x * x
dy_dx = tape.gradient(y, x)
""",
            "near miss: a functional model built once, a variable created before the tape",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

class Head(tf.keras.layers.Layer):
    def call(self, x):
        h = tf.keras.layers.Dense(64, activation="relu")(x)
        return tf.keras.layers.Dense(10)(h)
""",
            line=6,
            column=13,
            count=2,
            message_contains="`Dense(...)` is created in `Head.call`",
        ),
        Invalid(
            """
import tensorflow as tf

backbone = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu")])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = tf.keras.layers.Dense(10)(backbone(x, training=True))
        loss = loss_fn(y, logits)
    variables = backbone.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
""",
            line=10,
            message_contains="inside the `with tape` block",
        ),
    ]
