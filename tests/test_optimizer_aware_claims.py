"""TL201 and TL701 make claims about what an optimizer does with its learning rate and its gradients.

Each claim holds for some optimizer families and not others, so the optimizer is resolved from the class
that was constructed, however it was imported and however its rate was written. Every silent case here
has a buggy twin, the same training loop with the one difference that makes the claim true, which must
still be reported.
"""

from __future__ import annotations

import textwrap

import pytest

from tapelint import config as config_mod
from tapelint.analysis.optimizer_families import FAMILIES, Family, GradientScaling
from tapelint.analysis.vocabulary import LOSS_SCALE_WRAPPERS, OPTIMIZER_CLASSES
from tapelint.diagnostic import Confidence, Diagnostic
from tapelint.engine import lint_source


def _lint(code: str, source: str, options: dict | None = None) -> list[Diagnostic]:
    table: dict = {"select": [code], "preview": True}
    if options:
        table["learning-rate-too-high"] = options
    config = config_mod.parse(table, "test", None)
    found = lint_source(textwrap.dedent(source), "train.py", config)
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return [d for d in found if d.code == code]


def tl201(source: str, **options: float) -> list[Diagnostic]:
    return _lint("TL201", source, {k.replace("_", "-"): v for k, v in options.items()} or None)


def tl701(source: str) -> list[Diagnostic]:
    return _lint("TL701", source)


# The three spellings of one optimizer that must mean the same thing: (import lines, expression that makes
# it from `{rate}`, extra module-level lines).
def spellings(cls: str, rate: str) -> list[tuple[str, str, str]]:
    return [
        (f"from tensorflow.keras.optimizers import {cls}", f"{cls}({rate})", ""),
        ("", f"tf.keras.optimizers.{cls}(learning_rate=RATE)", f"RATE = {rate}"),
        ("import keras", f"keras.optimizers.{cls}(learning_rate={rate})", ""),
    ]


SPELLING_IDS = ["from-import-positional", "tf.keras-module-constant", "keras-keyword"]


# ----------------------------------------------------------------------------------------------- TL201
# A model name rebound to a fresh network after it held a frozen loaded model (handson-ml2, cell 248):
# the optimizer steps the fresh MLP, so the backbone premise is false and 0.01 is an ordinary Nadam rate.
REBOUND = """
import numpy as np
import tensorflow as tf
{imports}
{extra}
x_train = np.random.normal(size=(1024, 8)).astype("float32")
y_train = np.random.normal(size=(1024, 1)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024).batch(32)

model = tf.keras.models.load_model("my_pretrained.keras")
model.trainable = False
{rebind}

def fit_steps(net, optimizer, batches, epochs=5):
    for epoch in range(epochs):
        for x, y in batches:
            with tf.GradientTape() as tape:
                predictions = net(x, training=True)
                loss = tf.reduce_mean(tf.keras.losses.mean_squared_error(y, predictions))
            grads = tape.gradient(loss, net.trainable_variables)
            optimizer.apply_gradients(zip(grads, net.trainable_variables))
        print(epoch, float(loss))

fit_steps(model, {optimizer}, dataset)
"""
FRESH_MLP = """model = tf.keras.Sequential([
    tf.keras.Input((8,)),
    tf.keras.layers.Dense(30, activation="relu"),
    tf.keras.layers.Dense(30, activation="relu"),
    tf.keras.layers.Dense(1),
])"""
HEAD_OVER_IT = """model = tf.keras.Sequential([
    model,
    tf.keras.layers.Dense(30, activation="relu"),
    tf.keras.layers.Dense(1),
])"""


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Nadam", "0.01"), ids=SPELLING_IDS)
def test_a_model_name_rebound_to_a_fresh_network_is_not_a_head_over_the_backbone(imports, make, extra):
    source = REBOUND.format(imports=imports, extra=extra, rebind=FRESH_MLP, optimizer=make)
    assert tl201(source) == []


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Nadam", "0.01"), ids=SPELLING_IDS)
def test_a_head_built_over_the_frozen_loaded_model_is_reported(imports, make, extra):
    source = REBOUND.format(imports=imports, extra=extra, rebind=HEAD_OVER_IT, optimizer=make)
    (found,) = tl201(source)
    assert "`Nadam` learning rate 0.01 is too high for a head over the frozen loaded model" in found.message


SEED = """
import numpy as np
import tensorflow as tf
{imports}
{extra}
inputs = tf.keras.layers.Input(shape=(224, 224, 3))
vgg = tf.keras.applications.VGG16(include_top=False, weights="imagenet", input_tensor=inputs)
vgg.trainable = {frozen}
features = tf.keras.layers.GlobalAveragePooling2D()(vgg.output)
hidden = tf.keras.layers.Dense(64, activation="relu")(features)
outputs = tf.keras.layers.Dense(2, activation="softmax")(hidden)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
loss_object = tf.keras.losses.CategoricalCrossentropy()
optimizer = {optimizer}

images = np.random.uniform(0, 255, size=(16, 224, 224, 3)).astype("float32")
targets = np.eye(2, dtype="float32")[np.random.randint(0, 2, size=16)]

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_object(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for epoch in range(4):
    for i in range(0, 16, 4):
        train_step(images[i:i + 4], targets[i:i + 4])
"""


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Adam", "0.01"), ids=SPELLING_IDS)
def test_adam_at_0_01_on_a_head_over_a_frozen_imagenet_backbone_is_reported(imports, make, extra):
    (found,) = tl201(SEED.format(imports=imports, extra=extra, frozen="False",
                                 optimizer=make))
    assert "too high for a head over the frozen `VGG16` backbone (limit 0.005)" in found.message


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Adam", "0.01"), ids=SPELLING_IDS)
def test_the_same_rate_on_a_backbone_that_is_fine_tuned_is_an_ordinary_adam_rate(imports, make, extra):
    assert tl201(SEED.format(imports=imports, extra=extra, frozen="True", optimizer=make)) == []


def test_the_transfer_limit_is_an_option():
    source = SEED.format(imports="", extra="", frozen="False", optimizer="tf.keras.optimizers.Adam(0.01)")
    assert tl201(source, transfer_adaptive_max=0.02) == []


# A short unit test of a training loop checks plumbing, not convergence (tensorlayer's Lambda-layer test
# runs Adam at 0.1 for 10 steps).
UNIT_TEST = """
import numpy as np
import tensorflow as tf
{imports}
{extra}
{base_import}

{container}
    {method}
        data_x = np.random.random([100, 1]).astype(np.float32)
        data_y = data_x ** 3 + 0.5 * data_x
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(10, activation="relu"),
            tf.keras.layers.Dense(5, activation="sigmoid"),
            tf.keras.layers.Dense(1),
        ])
        optimizer = {optimizer}
        for epoch in range(10):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(data_x) - data_y))
            gradients = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(gradients, model.trainable_weights))
        {check}
"""
TEST_CASES = [
    ("import unittest", "class LambdaLayerTest(unittest.TestCase):"),
    ("", "class LambdaLayerTest(tf.test.TestCase):"),
    ("from absl.testing import absltest", "class LambdaLayerTest(absltest.TestCase):"),
]


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Adam", "0.1"), ids=SPELLING_IDS)
@pytest.mark.parametrize(("base_import", "container"), TEST_CASES, ids=["unittest", "tf.test", "absl"])
def test_a_smoke_unit_test_at_adam_0_1_is_silent(imports, make, extra, base_import, container):
    source = UNIT_TEST.format(imports=imports, extra=extra, base_import=base_import, container=container,
                              method="def test_lambda_keras(self):", optimizer=make,
                              check="self.assertEqual(loss.shape, ())")
    assert tl201(source) == []


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Adam", "0.1"), ids=SPELLING_IDS)
def test_the_same_loop_outside_a_test_is_reported(imports, make, extra):
    source = UNIT_TEST.format(imports=imports, extra=extra, base_import="", container="class Experiment:",
                              method="def run(self):", optimizer=make, check="print(float(loss))")
    (found,) = tl201(source)
    assert "`Adam` learning rate 0.1 is far above what adaptive optimizers use (1e-4..1e-2)" in found.message


# Gradient descent on an input image (style transfer, feature visualisation): pixels in 0..255 are stepped
# at rates that would wreck a network's weights.
STYLE = """
import tensorflow as tf
{imports}
{extra}
extractor = tf.keras.applications.VGG19(include_top=False, weights="imagenet")
extractor.trainable = False
style_layers = ["block1_conv1", "block2_conv1", "block3_conv1"]
outputs = [extractor.get_layer(name).output for name in style_layers]
features = tf.keras.Model(extractor.input, outputs)

def gram(x):
    return tf.linalg.einsum("bijc,bijd->bcd", x, x) / tf.cast(tf.shape(x)[1] * tf.shape(x)[2], tf.float32)

def style_loss(image, targets):
    return tf.add_n([tf.reduce_mean(tf.square(gram(f) - t)) for f, t in zip(features(image), targets)])

def stylize(image, targets, optimizer, steps=100):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = style_loss(image, targets)
        gradient = tape.gradient(loss, image)
        optimizer.apply_gradients([(gradient, {stepped})])
        image.assign(tf.clip_by_value(image, 0.0, 255.0))
    return image

picture = tf.Variable(tf.random.uniform((1, 224, 224, 3), 0.0, 255.0))
style_targets = [gram(f) for f in features(tf.random.uniform((1, 224, 224, 3), 0.0, 255.0))]
stylize(picture, style_targets, {optimizer})
"""


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("SGD", "100.0"), ids=SPELLING_IDS)
def test_an_optimizer_that_steps_only_an_image_passed_in_is_silent(imports, make, extra):
    assert tl201(STYLE.format(imports=imports, extra=extra, stepped="image", optimizer=make)) == []


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("SGD", "100.0"), ids=SPELLING_IDS)
def test_the_same_rate_on_a_transform_network_is_reported(imports, make, extra):
    # Fast style transfer trains a network that renders the image: then the rate is a weight step.
    source = STYLE.format(imports=imports, extra=extra, stepped="image", optimizer=make).replace(
        "        gradient = tape.gradient(loss, image)\n"
        "        optimizer.apply_gradients([(gradient, image)])\n",
        "        grads = tape.gradient(loss, transform.trainable_variables)\n"
        "        optimizer.apply_gradients(zip(grads, transform.trainable_variables))\n").replace(
        "            loss = style_loss(image, targets)",
        "            loss = style_loss(transform(image), targets)").replace(
        "picture = ",
        "transform = tf.keras.Sequential([tf.keras.layers.Conv2D(32, 3, padding='same', activation='relu'),\n"
        "                                 tf.keras.layers.Conv2D(3, 3, padding='same')])\npicture = ")
    assert "transform.trainable_variables" in source
    (found,) = tl201(source)
    assert "`SGD` learning rate 100 is far above what SGD loops use" in found.message


def test_the_image_optimizer_bound_locally_is_silent_too():
    source = STYLE.replace("def stylize(image, targets, optimizer, steps=100):",
                           "def stylize(image, targets, unused, steps=100):\n"
                           "    optimizer = tf.keras.optimizers.Adam(learning_rate=0.5, beta_1=0.99)")
    assert tl201(source.format(imports="", extra="", stepped="image", optimizer="None")) == []


# Large-batch SGD (Goyal et al.): the rate is scaled with the batch and reached through a warm-up.
WARMUP = """
import tensorflow as tf
{imports}
{extra}
GLOBAL_BATCH = 8192
WARMUP_STEPS = 2000
model = tf.keras.applications.ResNet50(weights=None, classes=1000)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = {optimizer}

@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for step, (images, labels) in enumerate(dataset.batch(GLOBAL_BATCH)):
    {warmup}
    train_step(images, labels)
"""
WARMUPS = [
    "optimizer.learning_rate.assign(3.2 * min(1.0, (step + 1) / WARMUP_STEPS))",
    "optimizer.learning_rate = 3.2 * min(1.0, (step + 1) / WARMUP_STEPS)",
    "tf.keras.backend.set_value(optimizer.lr, 3.2 * min(1.0, (step + 1) / WARMUP_STEPS))",
]


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("SGD", "3.2"), ids=SPELLING_IDS)
@pytest.mark.parametrize("warmup", WARMUPS, ids=["assign", "attribute", "set_value"])
def test_sgd_at_3_2_reached_through_a_warm_up_is_silent(imports, make, extra, warmup):
    assert tl201(WARMUP.format(imports=imports, extra=extra, optimizer=make, warmup=warmup)) == []


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("SGD", "3.2"), ids=SPELLING_IDS)
def test_sgd_at_3_2_from_the_first_step_is_reported(imports, make, extra):
    (found,) = tl201(WARMUP.format(imports=imports, extra=extra, optimizer=make, warmup="pass"))
    assert "`SGD` learning rate 3.2 is far above what SGD loops use" in found.message


def test_a_warm_up_schedule_that_starts_low_is_silent():
    schedule = ("tf.keras.optimizers.SGD(learning_rate=tf.keras.optimizers.schedules.CosineDecay("
                "initial_learning_rate=0.0, decay_steps=90000, warmup_target=3.2, warmup_steps=WARMUP_STEPS), "
                "momentum=0.9)")
    assert tl201(WARMUP.format(imports="", extra="", optimizer=schedule, warmup="pass")) == []


def test_a_keras_callback_that_sets_the_rate_each_epoch_is_silent():
    source = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=2.0, momentum=0.9),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    warmup = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: 2.0 * min(1.0, (epoch + 1) / 5))
    model.fit(x_train, y_train, batch_size=4096, epochs=90, callbacks=[warmup])
    """
    assert tl201(source) == []
    (found,) = tl201(source.replace(", callbacks=[warmup]", "").replace("    warmup = ", "    # "))
    assert "momentum 0.9 adds up to 10 such steps" in found.message


def test_the_correct_programs_of_the_brief_stay_silent():
    # SGD 0.4 with a warm-up at batch 4096, and Adam 0.05 on a 5-parameter linear regression.
    assert tl201(WARMUP.format(imports="", extra="", optimizer="tf.keras.optimizers.SGD(0.4, momentum=0.9)",
                               warmup="pass").replace("8192", "4096")) == []
    regression = """
    import numpy as np
    import tensorflow as tf

    true_w = np.array([[1.5], [-2.0], [0.3], [0.0], [4.0]], dtype="float32")
    x = np.random.normal(size=(512, 5)).astype("float32")
    y = x @ true_w + 1.0
    w = tf.Variable(tf.zeros((5, 1)))
    b = tf.Variable(0.0)
    layer = tf.keras.layers.Dense(1)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.05)
    for step in range(500):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(x) - y))
        grads = tape.gradient(loss, layer.trainable_variables)
        optimizer.apply_gradients(zip(grads, layer.trainable_variables))
    """
    assert tl201(regression) == []
    assert len(tl201(regression.replace("learning_rate=0.05", "learning_rate=0.5"))) == 1


# RMSprop has no bias correction: its first steps are 3.2 times its rate, which is why 0.1 is unstable on
# Deep Learning with Python's toy linear classifier, while Adam at 0.1 fits tensorflow.org's regression.
LINEAR = """
import numpy as np
import tensorflow as tf
{imports}
{extra}
num_samples_per_class = 1000
negative = np.random.multivariate_normal(mean=[0, 3], cov=[[1, 0.5], [0.5, 1]], size=num_samples_per_class)
positive = np.random.multivariate_normal(mean=[3, 0], cov=[[1, 0.5], [0.5, 1]], size=num_samples_per_class)
inputs = np.vstack((negative, positive)).astype(np.float32)
targets = np.vstack((np.zeros((num_samples_per_class, 1), dtype="float32"),
                     np.ones((num_samples_per_class, 1), dtype="float32")))
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer={optimizer}, loss=tf.keras.losses.MeanSquaredError(),
              metrics=[tf.keras.metrics.BinaryAccuracy()])
indices_permutation = np.random.permutation(len(inputs))
shuffled_inputs, shuffled_targets = inputs[indices_permutation], targets[indices_permutation]
split = int(0.3 * len(inputs))
model.fit(shuffled_inputs[split:], shuffled_targets[split:], epochs=5, batch_size=16,
          validation_data=(shuffled_inputs[:split], shuffled_targets[:split]))
"""


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Adam", "0.1"), ids=SPELLING_IDS)
def test_adam_at_0_1_on_a_linear_model_is_silent(imports, make, extra):
    assert tl201(LINEAR.format(imports=imports, extra=extra, optimizer=make)) == []


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("RMSprop", "0.1"), ids=SPELLING_IDS)
def test_rmsprop_at_0_1_on_the_same_linear_model_is_reported(imports, make, extra):
    (found,) = tl201(LINEAR.format(imports=imports, extra=extra, optimizer=make))
    assert "its first steps move every weight by about 0.316" in found.message


def test_rmsprop_with_a_large_epsilon_is_not_judged_by_its_rate():
    # DQN's RMSprop: epsilon 0.01 under the root, so steps are far below 3.2 times the rate.
    optimizer = "tf.keras.optimizers.RMSprop(learning_rate=0.1, rho=0.95, epsilon=0.01)"
    assert tl201(LINEAR.format(imports="", extra="", optimizer=optimizer)) == []


def test_adagrad_is_judged_only_with_a_configured_limit():
    source = LINEAR.format(imports="", extra="", optimizer="tf.keras.optimizers.Adagrad(learning_rate=1.0)")
    assert tl201(source) == []
    (found,) = tl201(source, accumulating_max=0.5)
    assert "above the configured `accumulating-max` (0.5)" in found.message


def test_raising_adaptive_max_silences_a_rate_below_it():
    source = UNIT_TEST.format(imports="", extra="", base_import="", container="class Experiment:",
                              method="def run(self):", optimizer="tf.keras.optimizers.Adam(0.1)",
                              check="print(float(loss))")
    assert len(tl201(source)) == 1
    assert tl201(source, adaptive_max=0.1) == []


def test_a_limit_lowered_below_the_usual_range_is_named_as_the_projects():
    source = SEED.format(imports="", extra="", frozen="True", optimizer="tf.keras.optimizers.Adam(0.01)")
    (found,) = tl201(source, adaptive_max=0.005)
    assert "is above this project's `adaptive-max` (0.005)" in found.message
    assert "far above what adaptive optimizers use" not in found.message


def test_every_keras_optimizer_class_has_a_family():
    # The families table covers the vocabulary's optimizer classes (wrappers and the base class aside).
    assert set(FAMILIES) == set(OPTIMIZER_CLASSES) - set(LOSS_SCALE_WRAPPERS) - {"Optimizer"}
    assert FAMILIES["SGD"].family is Family.SGD and FAMILIES["Adam"].scaling is GradientScaling.INVARIANT


# ----------------------------------------------------------------------------------------------- TL701
REPLICA_LOOP = """
import tensorflow as tf
{imports}
{extra}
GLOBAL_BATCH_SIZE = 256
strategy = tf.distribute.MirroredStrategy()

class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def train_step(self, images, labels):
        with tf.GradientTape() as tape:
            logits = self.model(images, training=True)
            loss = tf.reduce_mean(self.loss_object(labels, logits))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(self, images, labels):
        losses = strategy.run(self.train_step, args=(images, labels))
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)

with strategy.scope():
    network = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(128, activation="relu"),
                                   tf.keras.layers.Dense(10)])
    trainer = Trainer(network, {optimizer})

for images, labels in dataset.batch(GLOBAL_BATCH_SIZE):
    trainer.distributed_step(images, labels)
"""


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("Adam", "1e-3"), ids=SPELLING_IDS)
def test_a_per_replica_mean_under_adam_is_silent(imports, make, extra):
    assert tl701(REPLICA_LOOP.format(imports=imports, extra=extra, optimizer=make)) == []


@pytest.mark.parametrize(("imports", "make", "extra"), spellings("SGD", "0.1"), ids=SPELLING_IDS)
def test_a_per_replica_mean_under_sgd_is_reported_with_high_confidence(imports, make, extra):
    (found,) = tl701(REPLICA_LOOP.format(imports=imports, extra=extra, optimizer=make))
    assert "under `SGD` each update is as many times too large as there are replicas" in found.message
    assert found.confidence is Confidence.HIGH and found.line == 17


def test_a_loss_scale_optimizer_is_judged_by_the_optimizer_it_wraps():
    wrapped = "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.{cls}(0.01))"
    assert tl701(REPLICA_LOOP.format(imports="", extra="", optimizer=wrapped.format(cls="Adam"))) == []
    (found,) = tl701(REPLICA_LOOP.format(imports="", extra="", optimizer=wrapped.format(cls="SGD")))
    assert "under `SGD`" in found.message


@pytest.mark.parametrize("cls", ["Lion", "Adamax", "Nadam", "AdamW"])
def test_other_scale_invariant_optimizers_are_silent(cls):
    assert tl701(REPLICA_LOOP.format(imports="", extra="", optimizer=f"tf.keras.optimizers.{cls}(1e-3)")) == []


def test_adagrad_is_reported_with_inferred_confidence_and_its_reason():
    (found,) = tl701(REPLICA_LOOP.format(imports="", extra="", optimizer="tf.keras.optimizers.Adagrad(0.05)"))
    assert "under `Adagrad` the updates grow with the number of replicas" in found.message
    assert "initial accumulator (0.1)" in found.message and found.confidence is Confidence.INFERRED


def test_an_optimizer_that_cannot_be_resolved_lowers_the_confidence():
    source = REPLICA_LOOP.format(imports="from project.optim import build_optimizer", extra="",
                                 optimizer="build_optimizer()")
    (found,) = tl701(source)
    assert found.confidence is Confidence.INFERRED
    assert "if the optimizer that applies them is plain SGD" in found.message


def test_compute_average_loss_under_sgd_is_silent():
    source = REPLICA_LOOP.format(imports="", extra="", optimizer="tf.keras.optimizers.SGD(0.1)").replace(
        "tf.reduce_mean(self.loss_object(labels, logits))",
        "tf.nn.compute_average_loss(self.loss_object(labels, logits), global_batch_size=GLOBAL_BATCH_SIZE)")
    assert tl701(source) == []
