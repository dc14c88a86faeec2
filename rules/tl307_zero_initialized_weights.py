from __future__ import annotations

from tapelint.analysis.constants import boolean
from tapelint.analysis.facts import keyword_arg
from tapelint.analysis.unit_tests import in_unit_test
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl307_layer_graph import NOISE, ConstantInit, Successor, layer_initializer, successors

# Activations whose slope at 0 is 0 in TensorFlow: a unit that outputs exactly 0 gets no gradient.
_FLAT_AT_ZERO = frozenset({"relu", "relu6"})


class ZeroInitializedWeights(Rule):
    """
    ## What it does
    Reports a hidden `Dense` or convolution layer whose `kernel_initializer` is a constant (`"zeros"`,
    `Zeros()`, `"ones"`, `Constant(c)`, `tf.zeros_initializer()`) and whose output feeds another weighted
    layer of the same model: the next entry of a `Sequential` list (Dropout, activations, BatchNorm,
    pooling and Flatten may sit between), or the layer applied to its output in functional or subclassed
    code.

    ## Why is this bad?
    With a constant kernel every unit of the layer computes the same function. Nothing in the layer
    itself can ever make them differ, so how the network trains depends on what surrounds it, measured on
    TF 2.21 / Keras 3.15 (a 10-feature binary task, Adam 1e-2, 300 steps; a default-initialized
    `Dense(32, "relu")` hidden layer reaches loss 0.006, accuracy 1.00):
    - **zero kernel, ReLU, zero bias (the default)**: the layer outputs 0, ReLU's gradient at 0 is 0, so
      the layer and every layer before it get zero gradients forever. Loss stays at 0.693 (= ln 2),
      accuracy 0.51: the model predicts the base rate. Reported as an error.
    - **the next weighted layer's kernel is constant too**: each unit also has the same outgoing weights,
      so every unit gets the same gradient and they stay identical forever (the kernel's columns differ by
      0.0 after 300 steps; the layer has rank 1, one unit's worth of capacity). Two zero layers in a row
      get zero gradients: loss 0.693 again. Reported as an error.
    - **otherwise** (a random next layer tells the units apart through their different outgoing weights)
      the network trains, from a rank-1 start and worse: `zeros` + tanh ends at loss 0.044, `ones` + ReLU
      at 0.101, against 0.006. Reported as a warning.

    ## Example
    ```python
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu", kernel_initializer="zeros"),
        keras.layers.Dense(1),
    ])
    ```

    ## Use instead
    ```python
    model = keras.Sequential([
        keras.layers.Dense(64, activation="relu"),  # glorot_uniform by default; he_normal suits ReLU
        keras.layers.Dense(1),
    ])
    ```

    ## Known problems
    Not reported, on purpose: a zero-initialized last layer (an output head, or the last layer of a
    residual branch whose output is added to a skip connection: a common, correct trick), zero biases (the
    default), a single-layer linear or logistic model (convex, it trains from zero), and a layer built
    with `trainable=False` or frozen later, and layers built in the methods of a `TestCase` (unit tests
    use constant weights on purpose, to assert exact numbers). A constant layer whose successor cannot be read (a custom
    layer, a model nested in a model, a layer chosen in a loop) is not reported.

    ## Options
    None.

    ## Fix safety
    No fix: which initializer suits the layer (Glorot for tanh, He for ReLU) is the author's choice.
    Deleting the argument gives Keras' `glorot_uniform`.

    ## References
    - https://github.com/wagonhelm/NaNmnist/issues/2 ("Highly improper way of weight initialization":
      zero weights in a multi-layer net; quotes the CS231n pitfall: every neuron computes the same output
      and gets the same gradient)
    - https://datascience.stackexchange.com/questions/19170/what-is-the-purpose-of-setting-an-initial-weight-on-deep-learning-model/19171
      (Keras `kernel_initializer="zero"`: why not start every weight at 0)
    - https://github.com/tensorflow/tensorflow/issues/52175 (a hand-written model with `tf.zeros` weights
      whose gradients are zero after the first step)
    """

    code = "TL307"
    name = "zero-initialized-weights"
    message = "{message}"
    severity = Severity.ERROR
    also_severity = {Severity.WARNING: (
        "when the layer's units are only told apart by the random weights of the next layer: it trains, "
        "from identical units, and worse"
    )}
    triggers = ("kernel_initializer",)
    probe = ""

    def check(self) -> None:
        facts = self.facts
        reported: set[int] = set()
        for pair in successors(facts):
            if id(pair.layer) in reported:
                continue
            kernel = layer_initializer(facts, pair.layer, "kernel_initializer")
            if kernel is None or self._frozen(pair):
                continue
            site = facts.call_site(pair.layer)
            if site is not None and in_unit_test(facts, site.scope):
                continue  # a test that wants exact, identical numbers
            reported.add(id(pair.layer))
            message, severity = self._verdict(pair, kernel)
            arg = keyword_arg(pair.layer, "kernel_initializer")
            self.report(arg if arg is not None else pair.layer, message, severity=severity,
                        confidence=Confidence.HIGH if severity is Severity.ERROR else Confidence.INFERRED)

    def _frozen(self, pair: Successor) -> bool:
        trainable = keyword_arg(pair.layer, "trainable")
        if trainable is not None and boolean(trainable.value) is not True:
            return True
        facts = self.facts
        for binding in facts.bindings_of_value(pair.layer):
            if binding.index is None and not binding.path and any(
                    boolean(b.value) is False for b in facts.bindings_of(f"{binding.target}.trainable")):
                return True
        return False

    def _verdict(self, pair: Successor, kernel: ConstantInit) -> tuple[str, Severity]:
        facts = self.facts
        layer = f"{pair.layer_class}(..., kernel_initializer={kernel.text})"
        following = f"`{pair.following_class}`"
        use_bias = keyword_arg(pair.layer, "use_bias")
        bias_arg = keyword_arg(pair.layer, "bias_initializer")
        bias = layer_initializer(facts, pair.layer, "bias_initializer") if bias_arg is not None else ConstantInit(0.0, "zeros")
        no_bias = use_bias is not None and boolean(use_bias.value) is False
        zero_bias = no_bias or (bias is not None and bias.value == 0.0)
        if kernel.value == 0.0 and zero_bias and pair.first_activation(facts) in _FLAT_AT_ZERO:
            return (f"`{layer}` outputs 0 through a ReLU, whose gradient at 0 is 0: this layer and every layer "
                    f"before it never train"), Severity.ERROR
        next_kernel = layer_initializer(facts, pair.following, "kernel_initializer")
        if next_kernel is not None and bias is not None and not pair.through_noise:
            return (f"`{layer}` feeds {following}, whose kernel is constant too: every unit gets the same gradient, "
                    f"so all its units stay identical forever"), Severity.ERROR
        noise = next((cls for cls, _ in pair.between if cls in NOISE), None) if next_kernel is not None else None
        apart = f"`{noise}`'s random masks tell" if noise else f"the random weights of {following} tell"
        return (f"`{layer}` is a hidden layer: its units start identical and only {apart} them apart; "
                f"use a random initializer"), Severity.WARNING

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(1, kernel_initializer="zeros"),
])
""",
            "near miss: only the output head starts at zero, a common and correct choice",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", bias_initializer="zeros"),
    tf.keras.layers.Dense(10),
])
""",
            "near miss: zero biases are Keras' default",
        ),
        Valid(
            """
import tensorflow as tf

inputs = tf.keras.Input((64,))
h = tf.keras.layers.Dense(64, activation="relu")(inputs)
branch = tf.keras.layers.Dense(64, kernel_initializer="zeros")(h)
x = tf.keras.layers.Add()([inputs, branch])
outputs = tf.keras.layers.Dense(10)(x)
model = tf.keras.Model(inputs, outputs)
""",
            "near miss: the last layer of a residual branch starts at zero, so the block starts as the identity",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="zeros")])
""",
            "near miss: a logistic regression from zero weights is convex and trains",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(8, kernel_initializer="ones", trainable=False),
    tf.keras.layers.Dense(1),
])
""",
            "near miss: a fixed, non-trainable summing layer",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", kernel_initializer="zeros"),
    tf.keras.layers.Dense(1),
])
""",
            line=5,
            message_contains="never train",
        ),
        Invalid(
            """
import tensorflow as tf

class Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        init = tf.keras.initializers.Constant(0.1)
        self.hidden = tf.keras.layers.Dense(32, activation="tanh", kernel_initializer=init)
        self.out = tf.keras.layers.Dense(1, kernel_initializer=init)

    def call(self, x):
        return self.out(self.hidden(x))
""",
            line=8,
            message_contains="stay identical forever",
        ),
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input((16,))
h = tf.keras.layers.Dense(32, activation="tanh", kernel_initializer=tf.keras.initializers.Zeros())(inputs)
h = tf.keras.layers.Dropout(0.2)(h)
outputs = tf.keras.layers.Dense(1)(h)
model = tf.keras.Model(inputs, outputs)
""",
            line=5,
            message_contains="only the random weights of `Dense` tell them apart",
        ),
    ]
