from __future__ import annotations

import libcst as cst

from tapelint.analysis.constants import string
from tapelint.analysis.facts import CallSite, arg_value
from tapelint.analysis.heads import single_unit_multiclass
from tapelint.analysis.keras import ACTIVATION_FUNCTIONS, layer_activation, layer_class
from tapelint.analysis.models import layer_constructions, sequential_constructions, sequential_stack, width_layer_before
from tapelint.analysis.names import dotted
from tapelint.analysis.outputs import UNIT_LAYERS, last_axis_units, layer_units
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid

_SOFTMAX_LAYERS = frozenset({"Softmax", "Activation"})


class SoftmaxOnSingleUnit(Rule):
    """
    ## What it does
    Reports a softmax over a last axis of size one: `Dense(1, activation="softmax")` (or a one-filter
    convolution), a `Softmax()` / `Activation("softmax")` layer after a one-unit layer (in a Sequential's
    list or added with `model.add(...)`, applied to a one-unit output in a functional graph, or held by a
    subclass and called in its `call`; width-keeping layers such as `Dropout` or `BatchNormalization`
    between them are looked through),
    and `tf.nn.softmax(x)` / `keras.activations.softmax(x)` where `x` is the output of a one-unit layer.

    ## Why is this bad?
    Softmax normalises over the last axis. With one unit, every output is exactly `1.0` whatever the
    input: predictions are constant, a cross-entropy on them is constant (zero for a categorical loss,
    `-log(1)` terms for a binary one), and the gradient reaching the model is exactly zero. The model
    "trains" for hours and learns nothing. A binary classifier needs one sigmoid unit (or two softmax
    units with a categorical loss).

    ## Example
    ```python
    outputs = tf.keras.layers.Dense(1, activation="softmax")(x)
    model.compile(loss="binary_crossentropy", optimizer="adam")
    ```

    ## Use instead
    ```python
    outputs = tf.keras.layers.Dense(1, activation="sigmoid")(x)
    model.compile(loss="binary_crossentropy", optimizer="adam")
    ```

    ## Known problems
    The unit count must be a constant visible in this file. A softmax with an explicit `axis=` other
    than the last is not reported.

    ## Options
    None.

    ## Fix safety
    For a string activation the fix writes `"sigmoid"` instead of `"softmax"`. It is unsafe: it is right
    for a binary cross-entropy, but a categorical loss on a single unit must change too.

    ## References
    - https://github.com/keras-team/keras/issues/2975 ("The activation function should be 'sigmoid' and not 'softmax'")
    - https://www.tensorflow.org/api_docs/python/tf/nn/softmax
    - https://keras.io/api/layers/activations/
    """

    code = "TL106"
    name = "softmax-on-single-unit"
    message = "Softmax over a single unit ({where}) always outputs 1.0: the loss is constant and the gradient is zero"
    severity = Severity.ERROR
    fixable = True
    triggers = ("softmax", "Softmax")
    probe = ""

    def check(self) -> None:
        facts = self.facts
        # A one-unit layer whose loss or targets need several classes is TL112's: the missing units are the
        # cause, and a sigmoid would not fix it.
        reported: set[int] = set(single_unit_multiclass(facts))
        for site in facts.calls:
            call = site.node
            cls = layer_class(facts, call)
            if cls in UNIT_LAYERS:
                if layer_activation(facts, call, cls) == "softmax" and layer_units(facts, call) == 1:
                    activation = arg_value(call, 1 if cls == "Dense" else None, "activation")
                    node = activation if activation is not None else call
                    if id(node) not in reported and id(call) not in reported:
                        reported.add(id(node))
                        self.report(node, fix=self._fix(activation),
                                    where=f"`{cls}` with one {'unit' if cls == 'Dense' else 'filter'}")
                continue
            if cls is not None:
                continue
            # A softmax layer applied to a one-unit output: `Softmax()(x)`, `self.softmax(x)`, `act(x)`.
            applied = self._softmax_layer_applied(site)
            if applied is not None:
                inner_cls, layer = applied
                if id(layer) not in reported and last_axis_units(
                        facts, arg_value(call, 0), site.scope, site.order, through_params=True) == 1:
                    reported.add(id(layer))
                    self.report(layer if layer is call.func else call, where=f"`{inner_cls}` on a one-unit output",
                                related=[(layer, f"the `{inner_cls}` layer")])
                continue
            if ACTIVATION_FUNCTIONS.get(site.qualified or "") == "softmax" and id(call) not in reported:
                if self._explicit_other_axis(call) is False and last_axis_units(
                        facts, arg_value(call, 0), site.scope, site.order, through_params=True) == 1:
                    self.report(call, where=f"`{dotted(call.func)}` on a one-unit output")

        # A softmax layer in a Sequential model, after a one-unit layer: its list and its `.add(...)` calls
        # alike, layers between them that keep the width (Dropout, BatchNormalization) skipped.
        # A softmax added under a condition is still wrong whenever it is there; a width layer that may be
        # missing leaves the width unknown.
        for construction in sequential_constructions(facts):
            stack = sequential_stack(facts, construction.node) or ()
            for index, entry in enumerate(stack):
                held = entry.layer if entry is not None else None
                if held is None or held[0] not in _SOFTMAX_LAYERS or id(held[1]) in reported:
                    continue
                if not self._is_softmax_layer(held[1], held[0]) or self._explicit_other_axis(held[1]):
                    continue
                previous = width_layer_before(stack, index)
                if previous is not None and layer_units(facts, previous[1]) == 1:
                    reported.add(id(held[1]))
                    self.report(held[1], where=f"`{held[0]}` after a one-unit `{previous[0]}`",
                                related=[(previous[1], f"the one-unit `{previous[0]}`")])

    def _softmax_layer_applied(self, site: CallSite) -> tuple[str, cst.Call] | None:
        """(class, construction) when the call applies one softmax layer (`Softmax()`, `Activation("softmax")`)."""
        func = site.node.func
        if type(func) is cst.Call:  # (exact type: a failed isinstance costs an ABC check)
            cls = layer_class(self.facts, func)
            found = [(cls, func)] if cls is not None else []
        elif type(func) in (cst.Name, cst.Attribute) and site.qualified is None:
            found = layer_constructions(self.facts, func, site.scope, site.order) or []
        else:
            return None
        if len(found) != 1:
            return None
        cls, layer = found[0]
        if cls not in _SOFTMAX_LAYERS or not self._is_softmax_layer(layer, cls) or self._explicit_other_axis(layer):
            return None
        return cls, layer

    def _is_softmax_layer(self, call: cst.Call, cls: str) -> bool:
        return layer_activation(self.facts, call, cls) == "softmax"

    @staticmethod
    def _explicit_other_axis(call: cst.Call) -> bool:
        axis = arg_value(call, None, "axis")
        if axis is None:
            return False
        if isinstance(axis, cst.UnaryOperation) and isinstance(axis.expression, cst.Integer):
            return axis.expression.value != "1"
        return True

    @staticmethod
    def _fix(activation: cst.BaseExpression | None) -> PendingFix | None:
        if not isinstance(activation, cst.SimpleString) or string(activation) != "softmax":
            return None
        quote = activation.value[-1]
        prefix = activation.prefix
        return PendingFix("Use a sigmoid unit", False, [(activation, f"{prefix}{quote}sigmoid{quote}")])

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
""",
            "a binary classifier with one sigmoid unit",
        ),
        Valid(
            """
import tensorflow as tf

num_classes = 2
inputs = tf.keras.Input(shape=(8,))
hidden = tf.keras.layers.Dense(1, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(num_classes, activation="softmax")(hidden)
model = tf.keras.Model(inputs, outputs)
""",
            "near miss: the one-unit layer is a hidden layer; the softmax has two units",
        ),
        Valid(
            """
import tensorflow as tf

scores = tf.keras.layers.Dense(1)(tf.zeros((4, 10, 32)))
weights = tf.nn.softmax(scores, axis=1)
""",
            "attention weights: softmax over the time axis, not the unit axis",
        ),
        Valid(
            """
import tensorflow as tf
from tensorflow.keras.layers import Activation, Dense, Dropout

model = tf.keras.Sequential()
model.add(Dense(64, activation="relu", input_shape=(20,)))
model.add(Dense(1))
model.add(Dense(3))
model.add(Dropout(0.2))
model.add(Activation("softmax"))
""",
            "near miss: the one-unit layer is hidden; the softmax follows a three-unit layer",
        ),
        Valid(
            """
import tensorflow as tf

first = tf.keras.Sequential([tf.keras.layers.Dense(1)])
second = tf.keras.Sequential([tf.keras.layers.Dense(4)])
second.add(tf.keras.layers.Softmax())
first.add(tf.keras.layers.Dense(4, activation="relu"))
""",
            "near miss: the softmax is added to the model whose last layer has four units",
        ),
        Valid(
            """
import tensorflow as tf

class Ranker(tf.keras.Model):
    def __init__(self, candidates):
        super().__init__()
        self.score = tf.keras.layers.Dense(candidates)
        self.normalize = tf.keras.layers.Activation("softmax")

    def call(self, x):
        return self.normalize(self.score(x))
""",
            "near miss: a subclass whose softmax spans a width known only at run time",
        ),
        Valid(
            """
import tensorflow as tf

def make(head):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.add(head)
    model.add(tf.keras.layers.Softmax())
    return model
""",
            "near miss: a layer handed in between the one-unit layer and the softmax cannot be read",
        ),
        Valid(
            """
import tensorflow as tf

def make(bottleneck):
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu")])
    model.add(tf.keras.layers.Dense(1))
    if not bottleneck:
        model.add(tf.keras.layers.Dense(4))
    model.add(tf.keras.layers.Softmax())
    return model
""",
            "near miss: the layer before the softmax may be the one-unit one or a four-unit one: unknown",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

critic = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])

def policy(logits):
    return tf.nn.softmax(logits)

probs = policy(critic(tf.zeros((4, 16))))
""",
            line=7,
            message_contains="Softmax over a single unit",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", input_shape=(20,)),
    tf.keras.layers.Dense(1, activation='softmax'),
])
model.compile(optimizer="adam", loss="binary_crossentropy")
""",
            line=6, column=41,
            expected_fix="""
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", input_shape=(20,)),
    tf.keras.layers.Dense(1, activation='sigmoid'),
])
model.compile(optimizer="adam", loss="binary_crossentropy")
""",
        ),
        Invalid(
            """
import tensorflow as tf

class Scorer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.score = tf.keras.layers.Dense(1)

    def call(self, x):
        logit = self.score(self.hidden(x))
        return tf.nn.softmax(logit)
""",
            message_contains="`tf.nn.softmax` on a one-unit output",
        ),
        Invalid(
            """
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1), keras.layers.Softmax()])
""",
            message_contains="after a one-unit `Dense`",
        ),
        Invalid(
            """
import tensorflow as tf
from tensorflow.keras.layers import Activation, Dense, Dropout

model = tf.keras.Sequential()
model.add(Dense(64, activation="relu", input_shape=(20,)))
model.add(Dense(1))
model.add(Dropout(0.2))
model.add(Activation("softmax"))
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
""",
            line=9,
            message_contains="`Activation` after a one-unit `Dense`",
        ),
        Invalid(
            """
import tensorflow as tf

class Classifier:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu")])
        self.build_head()

    def build_head(self):
        self.model.add(tf.keras.layers.Dense(1))
        self.model.add(tf.keras.layers.Softmax())
""",
            line=11,
            message_contains="`Softmax` after a one-unit `Dense`",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(16,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
score = tf.keras.layers.Dense(1)(hidden)
outputs = tf.keras.layers.Softmax()(score)
model = tf.keras.Model(inputs, outputs)
""",
            line=7,
            message_contains="`Softmax` on a one-unit output",
        ),
        Invalid(
            """
import tensorflow as tf

class Ranker(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.score = tf.keras.layers.Dense(1)
        self.normalize = tf.keras.layers.Activation("softmax")

    def call(self, x):
        return self.normalize(self.score(self.hidden(x)))
""",
            line=12,
            message_contains="`Activation` on a one-unit output",
        ),
        Invalid(
            """
import tensorflow as tf

def make(normalize):
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu")])
    model.add(tf.keras.layers.Dense(1))
    if normalize:
        model.add(tf.keras.layers.Softmax())
    return model
""",
            line=8,
            message_contains="`Softmax` after a one-unit `Dense`",
        ),
    ]
