from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tapelint.analysis.facts import CallSite, Scope, arg_value
from tapelint.analysis.gradients import under_tape
from tapelint.analysis.evaluations import evaluations
from tapelint.analysis.keras import NOISE_LAYERS, layer_class
from tapelint.analysis.models import (
    KerasModel, compiles, layer_constructions, model_reader, order_known,
)
from tapelint.analysis.outputs import UNIT_LAYERS, origins, output_model, producing_layers
from tapelint.analysis.purpose import only_in_unit_tests
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid


# What each noise layer does to the values it is given while training (Dropout and SpatialDropout: zero
# and rescale).
_EFFECTS = {
    "GaussianNoise": "with random Gaussian noise added",
    "GaussianDropout": "each multiplied by random Gaussian noise",
    "AlphaDropout": "randomly dropped to a constant and rescaled",
}


@dataclass(frozen=True)
class _Found:
    noise: tuple[str, cst.Call]  # the noise layer applied last
    before: str | None  # the class of the layer it is applied to, when known
    fix: PendingFix | None = None
    before_node: cst.CSTNode | None = None  # that layer's construction, when known


class DropoutAfterOutput(Rule):
    """
    ## What it does
    Reports a `Dropout` (or `SpatialDropout1D/2D/3D`, `GaussianDropout`, `GaussianNoise`, `AlphaDropout`)
    applied after a model's output layer, when the model is trained with a loss on that output: the last
    layer of a Sequential (its list or its `.add(...)` calls), the `outputs` of a functional model
    (`Model(inputs, Dropout(0.5)(Dense(10, activation="softmax")(x)))`), or what a subclass's `call`
    returns, for a model compiled with a loss or whose output is fed to a loss under a `GradientTape`.

    ## Why is this bad?
    While training, dropout zeroes a random share of its inputs and scales the rest by `1 / (1 - rate)`.
    After the output layer, those are the predictions themselves: the loss is computed on corrupted
    predictions, softmax rows no longer sum to 1, a sigmoid output goes above 1, and a true class that was
    dropped costs the clipped maximum (`-log(1e-7)` = 16.1) with no gradient. The training loss measures the
    dropout rather than the model, and the layer regularizes nothing. On TF 2.21, an MLP whose softmax is
    followed by `Dropout(0.5)` ends 20 epochs at a training loss of 1.21 while `evaluate` on the same data
    gives 0.002 (with the dropout before the output layer: 0.028); in training mode half its
    probabilities are exactly 0 and rows sum to anything from 0 to 2. With `categorical_crossentropy`,
    which divides each row by its sum, a row dropped entirely is 0 / 0: the training loss is NaN in every
    epoch.

    ## Example
    ```python
    model = keras.Sequential([
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
        keras.layers.Dropout(0.5),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    ```

    ## Use instead
    ```python
    model = keras.Sequential([
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dropout(0.5),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    ```

    ## Known problems
    A model that ends in dropout and is used as a part of a larger model (a body, an encoder) is fine and
    not reported: only a model that a loss is computed on is. A loss written by hand
    (`tf.reduce_mean(tf.square(y - model(x)))`) is not recognised as one. Deliberate Monte-Carlo dropout on
    the output of a model trained elsewhere is not trained with a loss here, and is not reported.

    ## Options
    None.

    ## Fix safety
    In a literal Sequential list whose output layer is a `Dense` or a convolution, the fix moves the
    dropout before it. It is unsafe: the output layer's input changes, so trained weights no longer match.

    ## References
    - https://github.com/tensorflow/tensorflow/issues/25175 (a model ending in `Dropout`: positive loss in
      `fit`, zero loss in `evaluate` on the same data)
    - https://tutorialexample.com/can-apply-a-dropout-layer-to-softmax-layer-in-neural-networks-deep-learning-tutorial
    - https://coderapp.vercel.app/answer/74181228 ("Is it applied to the output layer (which is not valid at
      all to apply dropout to output neurons)?")
    - https://keras.io/api/layers/regularization_layers/dropout/
    """

    code = "TL116"
    name = "dropout-after-output"
    message = "`{noise}` is applied after the model's output {before}: while training, the loss sees the predictions {effect}; put it before the output layer"
    severity = Severity.WARNING
    fixable = True
    triggers = tuple(sorted(NOISE_LAYERS))
    probe = ""

    def check(self) -> None:
        reported: set[int] = set()
        for model in self._trained_models():
            found = self._noise_after_output(model)
            if found is None or id(found.noise[1]) in reported:
                continue
            reported.add(id(found.noise[1]))
            before = f"layer (`{found.before}`)" if found.before else "layer"
            self.report(found.noise[1], fix=found.fix, noise=found.noise[0], before=before,
                        effect=_EFFECTS.get(found.noise[0], "randomly zeroed and rescaled"),
                        related=[(found.before_node, "the output layer")])

    # ----- which models are trained with a loss on their output
    def _trained_models(self) -> list[KerasModel]:
        facts = self.facts
        reader = model_reader(facts)
        found: dict[int, KerasModel] = {}
        for compiled in compiles(facts):
            loss = compiled.loss
            if loss is None or type(loss) is cst.Name and loss.value == "None":
                continue
            site = compiled.site
            if only_in_unit_tests(facts, site.scope):
                continue  # a test compiles a model to check something else, not to train it
            model = reader.model_of(site.node.func.value, site.scope, site.order)  # type: ignore[attr-defined]
            if model is not None:
                found.setdefault(id(model.construction), model)
        for site, y_pred in self._loss_inputs():
            if not under_tape(facts, site, every_caller=False, levels=2) or only_in_unit_tests(facts, site.scope):
                continue  # an evaluation (dropout is off there), or a unit test
            model = output_model(facts, y_pred, site.scope, site.order)
            if model is not None:
                found.setdefault(id(model.construction), model)
        return list(found.values())

    def _loss_inputs(self) -> list[tuple[CallSite, cst.BaseExpression]]:
        """Each loss evaluated on a prediction (evaluations: the Keras losses by any spelling, the TensorFlow
        cross-entropy ops, loss objects the value model knows), with the prediction it is given."""
        return [(ev.site, ev.y_pred) for ev in evaluations(self.facts)
                if ev.role != "metric" and ev.y_pred is not None]

    # ----- what the model's output is computed with last
    def _noise_after_output(self, model: KerasModel) -> _Found | None:
        if model.kind == "sequential":
            return self._sequential(model)
        facts = self.facts
        if model.kind == "functional" and isinstance(model.construction, cst.Call):
            outputs = arg_value(model.construction, 1, "outputs")
            site = facts.call_site(model.construction)
            if outputs is None or site is None or isinstance(outputs, (cst.List, cst.Tuple, cst.Dict)):
                return None
            return self._applied_last(outputs, site.scope, site.order)
        if model.kind == "subclass" and model.class_name in facts.classes:
            call = facts.classes[model.class_name].methods.get("call")
            returns = facts.returns_of(call) if call is not None else []
            found = [self._applied_last(r.value, call, r.order) if r.value is not None else None  # type: ignore[arg-type]
                     for r in returns]
            if not found or any(f is None for f in found):
                return None
            return found[0]
        return None

    def _sequential(self, model: KerasModel) -> _Found | None:
        stack = model.stack
        if not stack or not order_known(stack):
            return None
        last = stack[-1]
        layer = last.layer if last is not None else None
        if layer is None or layer[0] not in NOISE_LAYERS:
            return None
        # The first of the noise layers the stack ends with, and the layer they follow.
        first = len(stack) - 1
        while first > 0:
            entry = stack[first - 1]
            held = entry.layer if entry is not None else None
            if held is None or held[0] not in NOISE_LAYERS:
                break
            first -= 1
        noise = stack[first].layer  # type: ignore[union-attr]
        previous = stack[first - 1] if first > 0 else None
        held = previous.layer if previous is not None else None
        fix = None
        if (held is not None and held[0] in UNIT_LAYERS and first == len(stack) - 1 and previous is not None
                and previous.added is None and last.added is None and not previous.conditional):  # type: ignore[union-attr]
            fix = PendingFix(f"Move `{layer[0]}` before the output layer", False,
                             [(previous.node, last.node), (last.node, previous.node)])  # type: ignore[union-attr]
        return _Found(noise, held[0] if held is not None else None, fix,  # type: ignore[arg-type]
                      held[1] if held is not None else None)

    def _applied_last(self, expr: cst.BaseExpression, scope: Scope, order: int) -> _Found | None:
        """When `expr` is computed by a noise layer applied to a tensor: that layer, and the class of the
        layer that computed the tensor if known."""
        facts = self.facts
        found = origins(facts, expr, scope, order, through_params=False)
        if not found or len(found) != 1 or type(found[0].expr) is not cst.Call:
            return None
        application = found[0].expr
        func = application.func
        if type(func) is cst.Call:
            cls = layer_class(facts, func)
            layer = (cls, func) if cls is not None else None
        else:
            held = layer_constructions(facts, func, found[0].scope, found[0].order)
            layer = held[0] if held is not None and len(held) == 1 else None
        if layer is None or layer[0] not in NOISE_LAYERS:
            return None
        inner = producing_layers(facts, arg_value(application, 0, "inputs"), found[0].scope, found[0].order,
                                 through_params=False)
        before = layer_class(facts, inner[0]) if inner is not None and len(inner) == 1 else None
        return _Found(layer, before, before_node=inner[0] if before is not None and inner is not None else None)

    VALID = [
        Valid(
            """
from tensorflow import keras

body = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dropout(0.5)])
model = keras.Sequential([body, keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
            "near miss: a body ending in Dropout, used inside a larger model that is trained",
        ),
        Valid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dropout(0.5),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
            "dropout before the output layer",
        ),
        Valid(
            """
import tensorflow as tf

inputs = tf.keras.Input((32,))
features = tf.keras.layers.Dropout(0.3)(tf.keras.layers.Dense(64, activation="relu")(inputs))
encoder = tf.keras.Model(inputs, features)
outputs = tf.keras.layers.Dense(1, activation="sigmoid")(encoder(inputs))
classifier = tf.keras.Model(inputs, outputs)
classifier.compile(optimizer="adam", loss="binary_crossentropy")
""",
            "near miss: a functional encoder ends in Dropout; the model trained with the loss does not",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1),
                             tf.keras.layers.Dropout(0.1)])
mse = tf.keras.losses.MeanSquaredError()
predictions = model(tf.zeros((4, 8)), training=False)
print(float(mse(tf.zeros((4, 1)), predictions)))
""",
            "a loss evaluated outside any tape, with the model never compiled: not trained here",
        ),
    ]
    INVALID = [
        Invalid(
            """
from tensorflow import keras

model = keras.Sequential([
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
    keras.layers.Dropout(0.5),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
            line=7, column=5,
            message_contains="`Dropout` is applied after the model's output layer (`Dense`)",
            expected_fix="""
from tensorflow import keras

model = keras.Sequential([
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dropout(0.5),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
""",
        ),
        Invalid(
            """
import tensorflow as tf
from tensorflow.keras import layers

inputs = tf.keras.Input((20,))
x = layers.Dense(64, activation="relu")(inputs)
model = tf.keras.Model(inputs, layers.Dropout(0.5)(layers.Dense(10, activation="softmax")(x)))
model.compile(optimizer="adam", loss="categorical_crossentropy")
""",
            line=7,
            message_contains="`Dropout`",
        ),
        Invalid(
            """
import tensorflow as tf

class Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.out = tf.keras.layers.Dense(1)
        self.noise = tf.keras.layers.GaussianNoise(0.1)

    def call(self, x, training=False):
        return self.noise(self.out(self.hidden(x)), training=training)

model = Regressor()
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.MeanSquaredError()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=9,
            message_contains="`GaussianNoise` is applied after the model's output layer (`Dense`)",
        ),
        Invalid(
            """
import tensorflow as tf
from tensorflow.keras.layers import Dense, Dropout

model = tf.keras.Sequential()
model.add(Dense(64, activation="relu", input_shape=(20,)))
model.add(Dense(1, activation="sigmoid"))
model.add(Dropout(0.2))
model.compile(optimizer="adam", loss="binary_crossentropy")
""",
            line=8,
        ),
    ]
