from __future__ import annotations

import libcst as cst

from tapelint.analysis.models import _affine_layer, is_functional, is_sequential, layers_in_order
from tapelint.analysis.outputs import layer_units
from tapelint.analysis.purpose import only_in_unit_tests
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid

# Layers a hidden part may hold and stay one affine map of its input, besides `Dense` without an activation
# (each also has to be affine by `models._affine_layer`). Convolutions and embeddings are left out: their
# widths do not compare with the output's units.
_KEEPS_LINEAR = frozenset({"Dropout", "Flatten", "Reshape", "Normalization", "Rescaling", "Activation"})


class NoHiddenNonlinearity(Rule):
    """
    ## What it does
    Reports a model whose hidden layers apply no nonlinearity at all: every layer before the output layer
    is a `Dense` without an activation (or with `"linear"`), or a layer that keeps the map affine (`Dropout`,
    `Flatten`, `Reshape`, `Normalization`, `Rescaling`, `Activation("linear")`), and each hidden `Dense` is
    at least as wide as the output `Dense`. Sequential models (a list or `.add(...)` calls) and functional
    models built as one chain of layers from a `keras.Input(...)` are read.

    ## Why is this bad?
    A composition of affine maps is one affine map. `Dense(64)` then `Dense(32)` then `Dense(1, "sigmoid")`
    computes exactly what a single `Dense(1, "sigmoid")` (a logistic regression) computes: the hidden
    layers add parameters and training time but no capacity, and the model cannot learn anything that is
    not linearly separable. The missing `activation="relu"` is easy to overlook, because the model trains
    without an error and reaches the accuracy of a linear model. On TF 2.21, on two interleaved half-moons
    (2 000 points), `Dense(64)`, `Dense(32)`, `Dense(1, "sigmoid")` stays at 0.88 accuracy, a logistic
    regression's (0.87); the same layers with `activation="relu"` reach 0.998. On XOR the linear stack stays
    at chance (loss 0.692).

    ## Example
    ```python
    model = keras.Sequential([
        keras.Input((2,)),
        keras.layers.Dense(64),
        keras.layers.Dense(32),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    ```

    ## Use instead
    ```python
    model = keras.Sequential([
        keras.Input((2,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    ```

    ## Known problems
    A linear stack is sometimes meant to be linear: a hidden layer narrower than the output is a low-rank
    bottleneck (a linear autoencoder, PCA: `Dense(2)` then `Dense(784)`), which constrains the map, and is
    not reported; nor is a model whose widths are not constants, whose layers cannot all be read (a custom
    layer, a sub-model, a layer added under a condition), or that applies an activation anywhere before the
    output (an `Activation`, `ReLU` or `LeakyReLU` layer, a function in a functional graph). Subclassed
    models and convolutional stacks are not read. Models built only by unit tests (a tiny network to check
    saving or a callback) are not meant to learn and are not reported.

    ## Options
    None.

    ## Fix safety
    There is no fix: which activation the hidden layers should have is a design choice.

    ## References
    - https://github.com/keras-team/keras/issues/9286 ("Multi dense layers should add activation, otherwise
      one dense layer is enough", on a Keras example)
    - https://github.com/aymericdamien/TensorFlow-Examples/issues/175 ("this example is equal with a
      multinomial logistic regression")
    - https://stats.stackexchange.com/questions/384199/effect-on-a-hidden-layer-without-activation
    - https://github.com/FluxML/model-zoo/issues/339 (the same mistake in another framework's tutorial)
    """

    code = "TL115"
    name = "no-hidden-nonlinearity"
    message = "{layers} {verb} no activation: with the output `{output}` the model is one linear map, and the hidden layers add nothing a single `{output}` could not do"
    severity = Severity.WARNING
    triggers = ("Dense",)
    probe = ""

    def check(self) -> None:
        facts = self.facts
        for site in facts.calls:
            if not (is_sequential(facts, site.node) or is_functional(facts, site.node)):
                continue
            if only_in_unit_tests(facts, site.scope):
                continue  # a test model built to check saving or a callback is not meant to learn
            layers = layers_in_order(facts, site.node)
            if not layers:
                continue
            found = self._linear_hidden(layers)
            if found is None:
                continue
            hidden, output, output_layer = found
            names = [f"`Dense({units})`" for units, _ in hidden]
            text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
            self.report(hidden[0][1], layers=text, verb="has" if len(names) == 1 else "have",
                        output=f"Dense({output})", related=[(output_layer, "the output layer")])

    def _linear_hidden(self, layers: list[tuple[str, cst.Call]]
                       ) -> tuple[list[tuple[int, cst.Call]], int, cst.Call] | None:
        """The hidden `Dense` layers (units, construction), the output's units and its construction, when every layer before
        the last `Dense` is affine and each hidden `Dense` is at least as wide as the output."""
        facts = self.facts
        last = max((i for i, (cls, _) in enumerate(layers) if cls == "Dense"), default=None)
        if last is None:
            return None
        output_units = layer_units(facts, layers[last][1])
        if output_units is None:
            return None
        hidden: list[tuple[int, cst.Call]] = []
        for cls, call in layers[:last]:
            if cls != "Dense" and cls not in _KEEPS_LINEAR or not _affine_layer(facts, cls, call):
                return None
            if cls == "Dense":
                units = layer_units(facts, call)
                if units is None or units < output_units:
                    return None  # a bottleneck narrower than the output constrains the map: maybe meant
                hidden.append((int(units), call))
        if not hidden:
            return None
        return hidden, int(output_units), layers[last][1]

    VALID = [
        Valid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.Input((784,)),
    keras.layers.Dense(2),
    keras.layers.Dense(784),
])
model.compile(optimizer="adam", loss="mse")
""",
            "near miss: a linear autoencoder; the hidden layer is a bottleneck narrower than the output (PCA)",
        ),
        Valid(
            """
import tensorflow as tf

normalizer = tf.keras.layers.Normalization()
model = tf.keras.Sequential([normalizer, tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
""",
            "a linear regression: one Dense layer, nothing hidden",
        ),
        Valid(
            """
import tensorflow as tf
from tensorflow.keras.layers import Activation, Dense, LeakyReLU

model = tf.keras.Sequential()
model.add(Dense(64, input_shape=(20,)))
model.add(Activation("relu"))
model.add(Dense(32))
model.add(LeakyReLU(0.1))
model.add(Dense(1, activation="sigmoid"))
""",
            "near miss: the Dense layers have no activation argument, but activation layers follow them",
        ),
        Valid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(16,))
x = tf.keras.layers.Dense(64)(inputs)
x = tf.nn.relu(x)
outputs = tf.keras.layers.Dense(3, activation="softmax")(x)
model = tf.keras.Model(inputs, outputs)
""",
            "near miss: an activation function applied in the functional graph",
        ),
        Valid(
            """
import tensorflow as tf

def build(width, hidden_config):
    first = tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(10, activation="softmax")])
    second = tf.keras.Sequential([tf.keras.layers.Dense(64, **hidden_config), tf.keras.layers.Dense(10)])
    return first, second
""",
            "a width that is not a constant, an activation that may come in `**hidden_config`: unknown",
        ),
    ]
    INVALID = [
        Invalid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.Input((2,)),
    keras.layers.Dense(64),
    keras.layers.Dense(32),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy")
""",
            line=6, column=5,
            message_contains="`Dense(64)` and `Dense(32)` have no activation",
        ),
        Invalid(
            """
import tensorflow as tf
from tensorflow.keras.layers import Dense, Dropout

model = tf.keras.Sequential()
model.add(Dense(128, input_shape=(784,)))
model.add(Dropout(0.2))
model.add(Dense(10, activation="softmax"))
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
            line=6,
            message_contains="`Dense(128)` has no activation",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(8,))
hidden = tf.keras.layers.Dense(32, activation="linear")(inputs)
hidden = tf.keras.layers.Dense(16)(hidden)
outputs = tf.keras.layers.Dense(2, activation="softmax")(hidden)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
""",
            message_contains="`Dense(32)` and `Dense(16)` have no activation",
        ),
    ]
