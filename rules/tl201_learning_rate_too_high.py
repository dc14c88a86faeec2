from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts, arg_value
from tapelint.analysis.keras import learning_rate
from tapelint.analysis.models import is_linear_model, trains_a_model
from tapelint.analysis.optimizer_families import Family, family_info, first_step, momentum, wrappers_of
from tapelint.analysis.optimizers import Fate, OptimizerCreation, optimizer_creations, optimizer_fate, optimizer_steps
from tapelint.analysis.training import frozen_models, parts, trained
from tapelint.analysis.unit_tests import in_unit_test
from tapelint.analysis.values import Kind, Value, flatten, is_unknown, values
from tapelint.analysis.vocabulary import APPLICATIONS_PREFIX, LOAD_MODEL
from tapelint.analysis.walk import contains
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Option, Rule, Valid

_NETWORKS = (Kind.MODEL, Kind.LAYER)
_RATE_ATTRIBUTES = frozenset({"learning_rate", "lr"})
# Keras callbacks that set the optimizer's rate at the start of each epoch, whatever it was made with.
_RATE_SETTING_CALLBACKS = frozenset({"keras.callbacks.LearningRateScheduler"})
_SET_VALUE = frozenset({"keras.backend.set_value", "keras.ops.assign"})
# A provably linear model has nothing to saturate or kill: adaptive rates up to this are published for
# such models (Adam 0.2 in SGC, Wu et al. 2019; Adam 0.1 in tensorflow.org's regression tutorial).
LINEAR_ADAPTIVE_MAX = 0.2
ADAPTIVE_USE = "1e-4..1e-2"


class LearningRateTooHigh(Rule):
    """
    ## What it does
    Reports an optimizer whose learning rate is far outside what its family is used with, for the
    network the optimizer actually steps. The family comes from the class that was constructed
    (`tapelint.analysis.optimizer_families`):
    - adaptive optimizers (Adam, AdamW, Adamax, Nadam, RMSprop) and Lion move every weight by about
      the same amount per step whatever the gradient's scale: Adam and Lion by the learning rate,
      Keras' RMSprop by 3.2 times it at first (it has no bias correction: its squared-gradient average
      starts at `(1 - rho) * g^2`). That first step is reported above 0.05 per weight, and above 0.2
      on a model that is provably linear;
    - an adaptive optimizer that trains a head over a frozen `keras.applications` backbone (any
      `weights=`) or a frozen loaded model (`keras.models.load_model`) is reported above 0.005: the
      seed report's case. The backbone must be part of the model the optimizer steps at that point
      (the latest binding of its name), not of a model the name held before;
    - plain SGD, with or without momentum, is reported above 1.0.

    The rate is read through constants, module-level names, arithmetic (`1e-2 * 5`) and Keras'
    learning-rate schedules, which are judged by the rate they start from (`initial_learning_rate`).

    ## Why is this bad?
    A step that is too large does its damage at once: it pushes a softmax to exactly 0/1 in float32,
    where Keras' clipped cross-entropy passes no gradient, or it drives ReLU units negative for every
    input, after which they never recover. In `examples/seed1_frozen_vgg_head.py` (from a Stack
    Overflow question), `Adam(learning_rate=0.01)` on a fresh Dense(64, relu) head over a frozen VGG16
    fed 0..255 images: the share of dead units went 48% -> 72% -> 73% -> 73% -> 93% -> 98% in five
    steps (TF 2.21, measured), and with the 2-way softmax the gradient norm went 11, 0, 0, 0, ... At
    0.001 the same loop learns. The backbone's weights do not matter to this (the measurement used
    `weights=None`): hundreds of large non-negative features turn a step of 0.01 on every head weight
    into a jump of its logits.

    The limits, and the code behind them:
    - adaptive, 0.05 per weight: Keras' default is 1e-3 and published settings stay in 1e-4..1e-2; the
      largest rates in correct code we have read are 0.03 (keras.io's Forward-Forward example) and 0.05
      (a 3-parameter circuit, a 5-parameter regression). `RMSprop(learning_rate=0.1)` on the toy linear
      classifier of Deep Learning with Python (chapter 3) first moves each weight by 0.32 and ends at a
      validation accuracy of 0.76-1.00 over 5 seeds, against >= 0.997 at 0.01 (measured).
    - adaptive on a provably linear model, 0.2 (or `adaptive-max` if higher): nothing can saturate or
      die, and 0.1-0.2 are published settings (tensorflow.org's regression tutorial, the SGC paper).
    - adaptive on a frozen backbone's head, 0.005: the seed; Keras' transfer-learning guide trains heads
      at the default 1e-3 and fine-tunes at 1e-5.
    - SGD, 1.0: 0.1 is the usual rate (with momentum 0.9 for ResNets), and 1.0 is the largest in
      classic correct code (the PTB language model and word2vec tutorials, on clipped or sparse
      gradients); Goyal et al.'s linear scaling reaches more only with a warm-up.
    - Adagrad, Ftrl and Adadelta are not judged unless `accumulating-max` is set: they divide by the sum
      of all squared gradients so far, so their steps shrink as training goes on, and rates of 0.1-1.0
      are normal for them (Adadelta was designed for 1.0, word2vec-style embeddings use Adagrad at
      1.0). Lamb, Adafactor and Muon set the step relative to each weight's or layer's norm; they are
      not judged.

    ## Example
    ```python
    model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
    optimizer = keras.optimizers.Adam(learning_rate=0.5)
    ...
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Use instead
    ```python
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)  # 1e-4..1e-5 to fine-tune a backbone
    ```

    ## Known problems
    Only optimizers whose updates reach a network this file can read are judged: one that steps only a
    bare `tf.Variable` (the image in style transfer, an adversarial perturbation, a latent code being
    searched; pixels are routinely stepped at 1-100) is not, nor one whose variables come from code we
    cannot see (a factory in another module, a custom `train_step` that ignores the optimizer given to
    `compile()`). An optimizer that is never applied (the seed's loop) is judged against the network
    the file's tapes differentiate, since the rate matters once the missing update is added, unless
    another optimizer of the file steps something.

    Not judged either: code in a unit test (a method of a `unittest`, `absl` or `tf.test` `TestCase`,
    where a few steps check plumbing, not convergence); a rate that changes while training (a
    `LearningRateScheduler` callback in the file, an assignment to the optimizer's `learning_rate` or
    `lr`, a custom schedule class: that is how warm-ups are written); a rate that is not one constant
    (command-line arguments, config files, a sweep); an Adam-family optimizer with a large `epsilon`
    (above 1e-3, or 1e-6 for RMSprop, where it sits under the square root), whose step is then no longer
    about the rate. A rate hard-coded for a large batch and used with a small one is not detected:
    batch sizes usually come from configuration, and telling which batch a constant was tuned for would
    be a guess. A frozen TF Hub layer is not recognised as a backbone.

    ## Options
    Each limit is the largest rate left silent; a rate above it is reported.
    - `adaptive-max` (float, default 0.05): limit on the first step per weight of Adam, AdamW,
      Adamax, Nadam, RMSprop and Lion (the rate itself, 3.2 times the rate for RMSprop at rho 0.9).
      Provably linear models get 0.2, or this limit if it is higher.
    - `transfer-adaptive-max` (float, default 0.005): the same limit for an optimizer training a head
      over a frozen `keras.applications` backbone or a frozen loaded model.
    - `sgd-max` (float, default 1.0): limit for SGD without momentum.
    - `sgd-momentum-max` (float, default 1.0): limit for SGD with momentum.
    - `accumulating-max` (float, default `inf`, not judged): limit for Adagrad, Ftrl and Adadelta.

    ```toml
    [tool.tapelint.learning-rate-too-high]
    adaptive-max = 0.1
    accumulating-max = 1.0
    ```

    ## Fix safety
    No fix: the right learning rate depends on the model.

    ## References
    - https://keras.io/guides/transfer_learning/ (heads at the default rate, fine-tuning at 1e-5)
    - https://github.com/keras-team/keras/issues/7057 (a too-high learning rate knocks ReLU units out)
    - https://github.com/NLeSC/mcfly/issues/43 (models with lr > 0.03 did not learn)
    - https://github.com/tensorflow/tensorflow/issues/52175 ("gradients are zero except the first time")
    - https://arxiv.org/abs/1706.02677 (Goyal et al.: linear scaling of SGD's rate needs a warm-up)
    - https://www.tensorflow.org/tutorials/keras/regression (Adam at 0.1 on a linear regression)
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow" (Adam at 0.01 on a frozen-backbone head)
    """

    code = "TL201"
    name = "learning-rate-too-high"
    message = "`{cls}` learning rate {rate:g} is {above}{detail}; the probe measures the first update (TL808)"
    severity = Severity.WARNING
    confidence = Confidence.INFERRED
    triggers = ("optimizers",)
    options = {
        "adaptive-max": Option(0.05, float, "Limit on the first step per weight of Adam, AdamW, Adamax, Nadam, RMSprop, Lion."),
        "transfer-adaptive-max": Option(0.005, float, "The same, for a head over a frozen keras.applications or loaded model."),
        "accumulating-max": Option(float("inf"), float, "Limit for Adagrad, Ftrl and Adadelta (not judged by default)."),
        "sgd-max": Option(1.0, float, "Limit for SGD without momentum."),
        "sgd-momentum-max": Option(1.0, float, "Limit for SGD with momentum."),
    }
    probe = "Confirmed when update ratios |dw|/|w| are far above 1e-2 or dead ReLU units appear after the first update (TL808, TL804)."

    def check(self) -> None:
        facts = self.facts
        if not trains_a_model(facts):
            return  # e.g. optimizer unit tests stepping a bare variable
        for creation in optimizer_creations(facts):
            info = family_info(creation.cls)
            if info is None:
                continue  # a LossScaleOptimizer: the optimizer it wraps is judged
            rate = learning_rate(facts, creation.site)
            if rate.value is None:
                continue  # not one constant: unknown, so no claim
            step = first_step(facts, creation, rate.value) if info.family in (Family.ADAPTIVE, Family.SIGN) else None
            if not self._above_any_limit(info.family, rate.value, step):
                continue  # the cheap test first: most rates are ordinary
            if in_unit_test(facts, creation.site.scope) or _rate_set_while_training(facts, creation):
                continue
            networks = _stepped_networks(facts, creation)
            if not networks:
                continue  # it steps bare variables (an image, a latent), or what it steps cannot be read
            node = rate.node if rate.node is not None and contains(creation.node, rate.node) else creation.node
            if info.family is Family.SGD:
                self._judge_sgd(creation, node, rate.value)
            elif info.family is Family.ACCUMULATING:
                limit = float(self.option("accumulating-max"))
                if rate.value > limit:
                    self.report(node, f"`{creation.cls}` learning rate {rate.value:g} is above the configured "
                                f"`accumulating-max` ({limit:g}): its first steps move each weight by up to the "
                                "rate; the probe measures the first update (TL808)")
            elif step is not None:
                self._judge_adaptive(creation, node, rate.value, step, networks)

    def _above_any_limit(self, family: Family, rate: float, step: float | None) -> bool:
        if family is Family.SGD:
            return rate > min(float(self.option("sgd-max")), float(self.option("sgd-momentum-max")))
        if family is Family.ACCUMULATING:
            return rate > float(self.option("accumulating-max"))
        if step is None:
            return False
        return step > min(float(self.option("transfer-adaptive-max")), float(self.option("adaptive-max")))

    def _judge_sgd(self, creation: OptimizerCreation, node: cst.CSTNode, rate: float) -> None:
        beta = momentum(self.facts, creation)
        if beta is None:
            limit = min(float(self.option("sgd-max")), float(self.option("sgd-momentum-max")))
        else:
            limit = float(self.option("sgd-momentum-max" if beta > 0 else "sgd-max"))
        if rate <= limit:
            return
        detail = f": one step moves each weight by {rate:g} times its gradient"
        if beta and 0 < beta < 1:
            detail += f", and momentum {beta:g} adds up to {1 / (1 - beta):.3g} such steps"
        key = "sgd-momentum-max" if beta else "sgd-max"
        self.report(node, cls=creation.cls, rate=rate, detail=detail,
                    above=self._above(key, f"far above what SGD loops use (1e-3..{limit:g} without a warm-up)"))

    def _judge_adaptive(self, creation: OptimizerCreation, node: cst.CSTNode, rate: float, step: float,
                        networks: frozenset[Value]) -> None:
        facts = self.facts
        moves = _moves(creation.cls, rate, step)
        if step > float(self.option("transfer-adaptive-max")):
            backbone = _frozen_backbone(facts, networks)
            if backbone is not None:
                limit = float(self.option("transfer-adaptive-max"))
                self.report(
                    node,
                    f"`{creation.cls}` learning rate {rate:g} is too high for a head over the frozen {backbone} "
                    f"(limit {limit:g}): {moves}, and over hundreds of large non-negative backbone features one "
                    "step can saturate the softmax or kill the head's ReLU units, after which gradients are zero; "
                    "Keras' transfer-learning guide trains heads at 1e-3; the probe measures it (TL804, TL808)",
                )
                return
        limit = float(self.option("adaptive-max"))
        linear = all(
            v.node is not None and is_linear_model(facts, v.node, v.cls if v.cls in facts.classes else None)
            for v in networks)
        if linear:
            limit = max(limit, LINEAR_ADAPTIVE_MAX)
        if step <= limit:
            return
        if linear:
            detail = (f", even on a linear model (limit {limit:g}): {moves}, so the fit jumps around the "
                      "minimum instead of settling")
        else:
            detail = f": {moves}, enough to saturate a softmax or kill ReLU units in the first steps"
        usual = f"far above what adaptive optimizers use ({ADAPTIVE_USE})"
        self.report(node, cls=creation.cls, rate=rate, detail=detail,
                    above=usual if linear else self._above("adaptive-max", usual))

    def _above(self, key: str, usual: str) -> str:
        """How the limit is named: what the family uses, or the project's own lower limit."""
        limit = float(self.option(key))
        if limit < self.options[key].default:
            return f"above this project's `{key}` ({limit:g})"
        return usual

    VALID = [
        Valid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True)
model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
""", "near miss: the standard ResNet setting"),
        Valid("""
import numpy as np
import tensorflow as tf

x = np.random.normal(size=(256, 5)).astype("float32")
y = x @ np.array([[1.0], [-2.0], [0.5], [3.0], [0.0]], dtype="float32") + 0.3
model = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(learning_rate=0.05)

for step in range(300):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""", "near miss: Adam 0.05 on a 5-parameter linear regression"),
        Valid("""
import tensorflow as tf

GLOBAL_BATCH = 4096
PEAK_LR = 0.1 * GLOBAL_BATCH / 256
WARMUP_STEPS = 500

model = tf.keras.applications.ResNet50(weights=None, classes=1000)
optimizer = tf.keras.optimizers.SGD(learning_rate=PEAK_LR, momentum=0.9)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

for step, (images, labels) in enumerate(dataset):
    optimizer.learning_rate.assign(PEAK_LR * min(1.0, (step + 1) / WARMUP_STEPS))
    train_step(images, labels)
""", "near miss: SGD at 1.6 with a warm-up at batch 4096 (Goyal et al.'s linear scaling)"),
        Valid("""
import tensorflow as tf

extractor = tf.keras.applications.VGG19(include_top=False, weights="imagenet")
extractor.trainable = False

def gram(features):
    return tf.linalg.einsum("bijc,bijd->bcd", features, features)

def stylize(image, style_gram, steps=200):
    optimizer = tf.keras.optimizers.SGD(learning_rate=100.0)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(gram(extractor(image)) - style_gram))
        gradient = tape.gradient(loss, image)
        optimizer.apply_gradients([(gradient, image)])
        image.assign(tf.clip_by_value(image, 0.0, 255.0))
    return image

picture = tf.Variable(tf.random.uniform((1, 224, 224, 3), 0.0, 255.0))
stylize(picture, tf.zeros((1, 512, 512)))
""", "near miss: style transfer steps an image passed in as a parameter at 100, not weights"),
        Valid("""
import tensorflow as tf

vocab_size, dim = 10000, 128
embedding = tf.keras.layers.Embedding(vocab_size, dim)
context = tf.keras.layers.Embedding(vocab_size, dim)
optimizer = tf.keras.optimizers.Adagrad(learning_rate=1.0)

for target, positive in pairs:
    with tf.GradientTape() as tape:
        score = tf.reduce_sum(embedding(target) * context(positive), axis=-1)
        loss = tf.reduce_mean(tf.nn.softplus(-score))
    variables = embedding.trainable_variables + context.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
""", "near miss: Adagrad at 1.0 on word2vec embeddings, a normal Adagrad setting"),
        Valid("""
from tensorflow import keras
import tensorflow as tf

model = keras.models.load_model("my_model.keras")
model.trainable = False

model = keras.Sequential([
    keras.Input((8,)),
    keras.layers.Dense(30, activation="relu"),
    keras.layers.Dense(1),
])
optimizer = keras.optimizers.Nadam(learning_rate=0.01)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(keras.losses.mean_squared_error(y, model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""", "near miss: `model` was rebound to a fresh MLP after the loaded (frozen) model"),
        Valid("""
import tensorflow as tf

class DenseStackTest(tf.test.TestCase):
    def test_a_few_steps_run(self):
        model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.1)
        x, y = tf.random.normal((16, 4)), tf.random.normal((16, 1))
        for _ in range(10):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        self.assertEqual(loss.shape, ())
""", "near miss: a 10-step smoke unit test checks plumbing, not convergence"),
        Valid("""
import tensorflow as tf

normalizer = tf.keras.layers.Normalization(axis=-1)
normalizer.adapt(train_features)
linear_model = tf.keras.Sequential([normalizer, tf.keras.layers.Dense(units=1)])
linear_model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=0.1), loss="mean_absolute_error")
linear_model.fit(train_features, train_labels, epochs=100)
""", "near miss: tensorflow.org's linear regression at Adam 0.1"),
        Valid("""
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
for lr in [1e-1, 1e-2, 1e-3]:
    optimizer = tf.keras.optimizers.Adam(learning_rate=lr)
    model.compile(optimizer=optimizer, loss="mse")
""", "a sweep: the value is not one constant"),
        Valid("""
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
model.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse")
""", "a project that raised the limit", config={"learning-rate-too-high": {"adaptive-max": 0.2}}),
        Valid("import torch\nopt = torch.optim.Adam(params, lr=0.1)\n", "not Keras"),
    ]
    INVALID = [
        Invalid("""
import tensorflow as tf
from tensorflow import keras

inp = keras.layers.Input(shape=(224, 224, 3))
vgg = tf.keras.applications.VGG16(include_top=False, weights="imagenet", input_tensor=inp)
vgg.trainable = False
x = tf.keras.layers.GlobalAveragePooling2D()(vgg.get_layer("block5_pool").output)
x = keras.layers.Dense(64, activation="relu")(x)
output = keras.layers.Dense(2, activation="softmax")(x)
model = tf.keras.models.Model(inputs=inp, outputs=output)
loss_object = tf.keras.losses.CategoricalCrossentropy()

def calculate_gradient(model, image, target):
    with tf.GradientTape() as tape:
        loss_value = loss_object(target, model(image, training=True))
    return loss_value, tape.gradient(loss_value, model.trainable_variables)

optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
for epoch in range(4):
    for image, target in zip(train_x, train_y):
        loss_value, grads = calculate_gradient(model, image, target)
""", line=19, column=52, message_contains="0.01 is too high for a head over the frozen `VGG16` backbone"),
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.SGD(1.5)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
for images, labels in dataset:
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""", line=5, column=37, message_contains="`SGD` learning rate 1.5 is far above what SGD loops use"),
        Invalid("""
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.1), loss=keras.losses.MeanSquaredError(),
              metrics=[keras.metrics.BinaryAccuracy()])
model.fit(inputs, targets, epochs=5, batch_size=128, validation_split=0.3)
""", message_contains="even on a linear model (limit 0.2): its first steps move every weight by about 0.316"),
        Invalid("""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(learning_rate=0.5)
for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""", message_contains="`Adam` learning rate 0.5 is far above what adaptive optimizers use (1e-4..1e-2)"),
        Invalid("""
from tensorflow import keras

BASE_LR = 1e-2
schedule = keras.optimizers.schedules.ExponentialDecay(
    initial_learning_rate=BASE_LR * 5, decay_steps=1000, decay_rate=0.9)
optimizer = keras.optimizers.RMSprop(learning_rate=schedule)
model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
model.compile(optimizer=optimizer, loss="mse")
""", message_contains="`RMSprop` learning rate 0.05 is far above"),
        Invalid("""
import tensorflow as tf

embedding = tf.keras.layers.Embedding(10000, 64)
optimizer = tf.keras.optimizers.Adagrad(learning_rate=1.0)
for ids, targets in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(embedding(ids), axis=-1) - targets))
    grads = tape.gradient(loss, embedding.trainable_variables)
    optimizer.apply_gradients(zip(grads, embedding.trainable_variables))
""", config={"learning-rate-too-high": {"accumulating-max": 0.5}}, message_contains="above the configured `accumulating-max` (0.5)"),
    ]


def _moves(cls: str, rate: float, step: float) -> str:
    if cls == "RMSprop" and step > rate * 1.01:
        return (f"its first steps move every weight by about {step:.3g} (RMSprop has no bias correction: "
                f"{step / rate:.2g} times the rate at first)")
    return f"each step moves every weight by about {rate:g}"


def _stepped_networks(facts: Facts, creation: OptimizerCreation) -> frozenset[Value] | None:
    """The models and layers whose weights the optimizer made at `creation` steps (through its own apply
    calls, those of a `LossScaleOptimizer` around it, and `compile()`), or None when that cannot be read,
    when it steps only bare variables, or when a step sits in a unit test. An optimizer that is never
    applied stands for the networks the file's tapes differentiate, when no other optimizer steps
    anything."""
    steps = []
    for each in (creation, *wrappers_of(facts, creation)):
        found = optimizer_steps(facts, each)
        if found is None:
            return None
        steps.extend(found)
    for step in steps:
        site = facts.call_site(step.node)
        if site is not None and in_unit_test(facts, site.scope):
            return None
    networks = frozenset(v for step in steps for one in step.sets for v in one if v.kind in _NETWORKS)
    if networks or steps:
        return networks or None
    if optimizer_fate(facts, creation) not in (Fate.UNUSED, Fate.NEVER_APPLIED):
        return None
    for other in optimizer_creations(facts):
        if other is not creation and optimizer_steps(facts, other):
            return None  # another optimizer trains: this one is a leftover
    state = trained(facts)
    if state.unknown or not state.models:
        return None
    return state.models


def _rate_set_while_training(facts: Facts, creation: OptimizerCreation) -> bool:
    """Does code change this optimizer's learning rate after it is made (a warm-up or a schedule written
    by hand), or may it (a receiver the value model cannot pin down)?"""
    resolver = values(facts)
    me = Value(Kind.OPTIMIZER, id(creation.node), creation.node, cls=creation.qualified)
    mine = {me, *(Value(Kind.OPTIMIZER, id(w.node), w.node, cls=w.qualified) for w in wrappers_of(facts, creation))}

    def may_be_mine(expr: cst.BaseExpression, scope, order: int) -> bool:  # type: ignore[no-untyped-def]
        held = set(flatten(resolver.of(expr, scope, order)))
        return bool(held & mine) or is_unknown(held)

    for binding in facts.bindings:  # `optimizer.learning_rate = 0.1 * warmup`
        target = binding.target_node
        if isinstance(target, cst.Attribute) and target.attr.value in _RATE_ATTRIBUTES:
            if may_be_mine(target.value, binding.scope, binding.order):
                return True
    for site in facts.calls:
        if site.qualified in _RATE_SETTING_CALLBACKS:
            return True
        func = site.node.func
        if site.method in ("assign", "assign_add", "assign_sub") and isinstance(func, cst.Attribute):
            rate = func.value  # `optimizer.learning_rate.assign(...)`
            if isinstance(rate, cst.Attribute) and rate.attr.value in _RATE_ATTRIBUTES:
                if may_be_mine(rate.value, site.scope, site.order):
                    return True
        if site.qualified in _SET_VALUE:  # `K.set_value(optimizer.lr, ...)`
            set_rate = arg_value(site.node, 0, "x")
            if isinstance(set_rate, cst.Attribute) and set_rate.attr.value in _RATE_ATTRIBUTES:
                if may_be_mine(set_rate.value, site.scope, site.order):
                    return True
    return False


def _frozen_backbone(facts: Facts, networks: frozenset[Value]) -> str | None:
    """How to name the frozen pretrained backbone (a `keras.applications` model or a loaded model) that one
    of `networks` is built on, or None when none is."""
    frozen = frozen_models(facts)
    if not frozen:
        return None
    for network in networks:
        for part in sorted(parts(facts, network) or (), key=lambda v: v.key):
            if part == network or part not in frozen:
                continue
            cls = part.cls or ""
            if cls in LOAD_MODEL:
                return "loaded model"
            if cls.startswith(APPLICATIONS_PREFIX):
                return f"`{part.short_class}` backbone"
    return None
