from __future__ import annotations

from tapelint.analysis.facts import CallSite, arg_value
from tapelint.analysis.outputs import gradient_owners, is_model
from tapelint.analysis.training import parts
from tapelint.analysis.training_steps import is_training_gradient
from tapelint.analysis.values import Value
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl105_regularization import adds_model_losses, models_called_in, regularization_reader


class RegularizationLossesIgnored(Rule):
    """
    ## What it does
    Reports a custom training loop (a `tf.GradientTape` whose gradients are taken for trainable
    variables) that calls a model with regularization — a layer built with `kernel_regularizer`,
    `bias_regularizer`, `activity_regularizer` (or another `*_regularizer`), an `ActivityRegularization`
    layer, or `add_loss` — while the loop never adds `model.losses` to the loss. The model is followed
    through Sequential and functional construction, subclassed models and their custom layers, and
    factory functions; the loss through helper functions of the module.

    ## Why is this bad?
    `fit()` adds `model.losses` to the loss for you; a hand-written loop does not. The regularizers (and
    any `add_loss` term) are then silently switched off: the model trains, but not the model you wrote,
    and it overfits where `fit` did not. It is one of the two usual answers to "fit works, my
    GradientTape loop does not" (the other is `training=True`).

    ## Example
    ```python
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Use instead
    ```python
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits) + sum(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    ```
    Under a distribution strategy, add `tf.nn.scale_regularization_loss(model.losses)`. In a
    `train_step` override, `self.compute_loss(...)` adds them for you.

    ## Known problems
    A use of `.losses` anywhere in the step function (or in the functions it calls) counts as adding
    them. Layers and models defined in other modules are not seen.

    ## Options
    None.

    ## Fix safety
    No fix: where the term belongs depends on the loss reduction (and on the strategy).

    ## References
    - https://keras.io/guides/writing_a_training_loop_from_scratch/ (low-level handling of losses tracked by the model)
    - https://www.tensorflow.org/tutorials/distribute/custom_training (`tf.nn.scale_regularization_loss`)
    - https://github.com/tensorflow/tensorflow/issues/21237
    - https://github.com/hunglc007/tensorflow-yolov4-tflite/issues/369
    - https://github.com/zzh8829/yolov3-tf2/issues/231
    """

    code = "TL105"
    name = "regularization-losses-ignored"
    message = "The loss given to `{tape}.gradient` never adds `{model}.losses`: {what} is ignored in this loop"
    severity = Severity.WARNING
    claims_absence = True
    triggers = (("regularizer", "GradientTape"), ("add_loss", "GradientTape"), ("ActivityRegularization", "GradientTape"))
    probe = ""

    def check(self) -> None:
        facts = self.facts
        if not facts.uses_gradient_tape:
            return
        regs = regularization_reader(facts)
        reported: set[int] = set()
        for call in facts.gradient_calls():
            block = facts.tape_for_call(call)
            target = arg_value(call.node, 0, "target")
            if block is None or target is None or id(block) in reported:
                continue
            if not is_training_gradient(facts, call):
                continue  # a gradient penalty, a saliency map: not the training loss
            called = models_called_in(facts, block)
            # Only the models whose variables this gradient is taken for (a generator step calls the
            # regularized discriminator but does not train it).
            trained_here = self._trained_models(call)
            trained = [m for m in called if any(is_model(v, m[0]) for v in trained_here)]
            for model, holder, scope in trained or called:
                found = regs.of_model(model, holder, scope)
                if found is None:
                    continue
                if adds_model_losses(facts, block):
                    break
                reported.add(id(block))
                self.report(target, tape=call.receiver or "tape", model=holder, what=found.what)
                break

    def _trained_models(self, call: CallSite) -> set[Value]:
        """The models and layers whose weights this gradient is for, and everything they are built from."""
        found: set[Value] = set()
        for owner in gradient_owners(self.facts, call).models:
            found |= parts(self.facts, owner) or {owner}
        return found

    VALID = [
        Valid(
            """
import tensorflow as tf
from tensorflow import keras

class ActivityRegularization(keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * tf.reduce_sum(inputs))
        return inputs

class CustomModel(keras.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self(x, training=True))
        gradients = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_weights))
        return {"loss": loss}
""",
            "near miss: the `self.add_loss` belongs to another class of the file, not to the trained model",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", kernel_regularizer=tf.keras.regularizers.l2(1e-4)),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        loss += sum(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "the guide's loop: `sum(model.losses)` added",
        ),
        Valid(
            """
import keras
import tensorflow as tf

class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu", kernel_regularizer="l2")
        self.out = keras.layers.Dense(1)

    def call(self, x):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
""",
            "near miss: a train_step override with compute_loss, which adds model.losses",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu", kernel_regularizer=tf.keras.regularizers.l2(1e-4)),
    tf.keras.layers.Dense(10),
])
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(tf.zeros((8, 4)), tf.zeros((8,)), epochs=1)
""",
            "fit adds model.losses itself",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

inputs = tf.keras.Input(shape=(784,))
x = tf.keras.layers.Dense(256, activation="relu", kernel_regularizer=tf.keras.regularizers.l2(5e-4))(inputs)
x = tf.keras.layers.Dropout(0.3)(x)
outputs = tf.keras.layers.Dense(10)(x)
model = tf.keras.Model(inputs, outputs)
optimizer = tf.keras.optimizers.SGD(0.01, momentum=0.9)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
""",
            line=17, column=27,
            message_contains="`kernel_regularizer` of a `Dense` layer",
        ),
        Invalid(
            """
import tensorflow as tf

class SparseEncoder(tf.keras.layers.Layer):
    def call(self, x):
        self.add_loss(1e-3 * tf.reduce_sum(tf.abs(x)))
        return x

class AutoEncoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = tf.keras.layers.Dense(32, activation="relu")
        self.sparse = SparseEncoder()
        self.decoder = tf.keras.layers.Dense(784, activation="sigmoid")

    def call(self, x):
        return self.decoder(self.sparse(self.encoder(x)))

model = AutoEncoder()
optimizer = tf.keras.optimizers.Adam()
mse = tf.keras.losses.MeanSquaredError()

def compute_loss(batch):
    return mse(batch, model(batch, training=True))

for batch in tf.data.Dataset.from_tensor_slices(tf.zeros((64, 784))).batch(16):
    with tf.GradientTape() as tape:
        loss = compute_loss(batch)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            message_contains="`SparseEncoder`'s `add_loss`",
        ),
    ]
