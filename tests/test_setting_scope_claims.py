"""Where a setting holds, and what a tape really trains: claims that depend on the state at the step.

- TL203: a `mixed_float16` policy holds only where it is in force when the step runs (module level, earlier in
  the same function, or a function called before); not in comments, not in another function that sets and
  restores it, not in another unit-test method (rules/_tl203_mixed_precision.py).
- TL301: a model frozen for a GAN's combined model still trains when its own step differentiates `variables`
  (which ignore `trainable`) or reads `trainable_variables` where `trainable` is True again.
- TL103: losses and metrics whose value is the same with the arguments swapped are not reported.
- Unit tests: claims about how well a model would train are not made in code run only by a `TestCase`;
  claims of a crash are.

Each false-positive kind has variants in other spellings that stay silent, and a buggy twin still reported.
"""

from __future__ import annotations

import pytest

from tapelint.config import parse
from tapelint.engine import lint_source


def findings(code: str, source: str) -> list[tuple[int, str]]:
    """(line, message) of each finding of the rule `code` on `source`."""
    config = parse({"select": [code, "TL999"], "preview": True}, "test", None)
    found = lint_source(source, "train.py", config)
    assert not [d for d in found if d.code in ("TL000", "TL999")], found
    return [(d.line, d.message) for d in found if d.code == code]


def line_of(source: str, line: int) -> str:
    return source.splitlines()[line - 1].strip()


# ------------------------------------------------------------------ TL203: where the policy holds

# The policy is only in a comment, a string and a docstring.
POLICY_IN_COMMENTS = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

# mixed_precision.set_global_policy("mixed_float16")  # enable on GPUs with tensor cores
model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
NOTE = 'call mixed_precision.set_global_policy("mixed_float16") to train in float16'
train_ds = tf.data.Dataset.from_tensor_slices((tf.zeros((256, 32)), tf.zeros((256,), tf.int32))).batch(32)


@tf.function
def train_step(x, y):
    '''Set mixed_precision.set_global_policy("mixed_float16") first for a faster step.'''
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    for x, y in train_ds:
        train_step(x, y)
"""

# The function that sets the policy is defined, but its call is commented out.
POLICY_SETTER_NEVER_CALLED = """\
import argparse

import tensorflow as tf
from tensorflow.keras import mixed_precision


def enable_mixed_precision():
    mixed_precision.set_global_policy("mixed_float16")
    print("compute dtype:", mixed_precision.global_policy().compute_dtype)


def train(epochs):
    model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    data = tf.data.Dataset.from_tensor_slices((tf.zeros((512, 64)), tf.zeros((512,), tf.int32))).batch(64)
    for epoch in range(epochs):
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    # enable_mixed_precision()  # TODO: re-enable once the loss is scaled
    train(args.epochs)
"""

# Its buggy twin: the same program with the call back in.
POLICY_SETTER_CALLED = """\
import argparse

import tensorflow as tf
from tensorflow.keras import mixed_precision


def enable_mixed_precision():
    mixed_precision.set_global_policy("mixed_float16")
    print("compute dtype:", mixed_precision.global_policy().compute_dtype)


def train(epochs):
    model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    data = tf.data.Dataset.from_tensor_slices((tf.zeros((512, 64)), tf.zeros((512,), tf.int32))).batch(64)
    for epoch in range(epochs):
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    enable_mixed_precision()
    train(args.epochs)
"""

# One test method sets and restores the policy; the training helper runs from `main()`.
POLICY_IN_ANOTHER_TEST = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision


def build_model():
    return tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])


def fit_steps(model, optimizer, batches):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


class PolicyTest(tf.test.TestCase):
    def test_float16_layers(self):
        mixed_precision.set_global_policy("mixed_float16")
        try:
            self.assertEqual(build_model().layers[0].compute_dtype, "float16")
        finally:
            mixed_precision.set_global_policy("float32")


def main():
    data = tf.data.Dataset.from_tensor_slices((tf.zeros((256, 32)), tf.zeros((256,), tf.int32))).batch(32)
    print(fit_steps(build_model(), tf.keras.optimizers.Adam(1e-3), data))


if __name__ == "__main__":
    main()
"""

# A helper sets the policy for an export after training, and restores it.
POLICY_IN_EXPORT_HELPER = """\
import keras
import tensorflow as tf

model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10, dtype="float32")])
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def export_half_precision(path):
    keras.mixed_precision.set_global_policy("mixed_float16")
    inference = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10, dtype="float32")])
    inference.build((None, 32))
    inference.set_weights(model.get_weights())
    inference.save(path)
    keras.mixed_precision.set_global_policy("float32")


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(100):
    train_step(tf.zeros((8, 32)), tf.zeros((8,), tf.int32))
export_half_precision("model_fp16.keras")
"""

# A benchmark sets the policy and restores an earlier one it read; it runs after training.
POLICY_RESTORED_UNREAD = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def benchmark_inference(batch):
    previous = mixed_precision.global_policy()
    mixed_precision.set_global_policy("mixed_float16")
    fast = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])
    result = fast(batch)
    mixed_precision.set_global_policy(previous)
    return result


for step in range(100):
    train_step(tf.zeros((8, 32)), tf.zeros((8,), tf.int32))
print(benchmark_inference(tf.zeros((8, 32))))
"""

# The buggy twin: `configure()` sets the policy before the training loop runs.
POLICY_SET_BY_CONFIGURE = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision


def configure():
    mixed_precision.set_global_policy("mixed_float16")


configure()
model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10, dtype="float32")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(100):
    train_step(tf.zeros((8, 32)), tf.zeros((8,), tf.int32))
"""


# ------------------------------------------------------------------ TL301: frozen for the combined model only

# The discriminator's own tape differentiates `discriminator.variables`.
GAN_DISC_VARIABLES = """\
import tensorflow as tf
from tensorflow import keras

latent_dim = 32
generator = keras.Sequential([keras.Input((latent_dim,)), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(784, activation="tanh")])
discriminator = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                                  keras.layers.Dense(1)])
discriminator.trainable = False
z = keras.Input((latent_dim,))
gan = keras.Model(z, discriminator(generator(z)))
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_opt = keras.optimizers.Adam(2e-4)
g_opt = keras.optimizers.Adam(2e-4)
real_images = tf.data.Dataset.from_tensor_slices(tf.random.uniform((1024, 784), -1, 1)).batch(64)


@tf.function
def train_step(real):
    noise = tf.random.normal((tf.shape(real)[0], latent_dim))
    with tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.variables))
    with tf.GradientTape() as g_tape:
        logits = gan(noise, training=True)
        g_loss = bce(tf.ones_like(logits), logits)
    g_grads = g_tape.gradient(g_loss, gan.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, gan.trainable_variables))


for epoch in range(50):
    for batch in real_images:
        train_step(batch)
"""

# The step sets `trainable = True` before the discriminator's tape and False again before the generator's.
GAN_DISC_TOGGLED = """\
import tensorflow as tf
from tensorflow import keras

latent_dim = 32
generator = keras.Sequential([keras.Input((latent_dim,)), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(784, activation="tanh")])
discriminator = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                                  keras.layers.Dense(1)])
discriminator.trainable = False
z = keras.Input((latent_dim,))
gan = keras.Model(z, discriminator(generator(z)))
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_opt = keras.optimizers.Adam(2e-4)
g_opt = keras.optimizers.Adam(2e-4)
real_images = tf.data.Dataset.from_tensor_slices(tf.random.uniform((1024, 784), -1, 1)).batch(64)


@tf.function
def train_step(real):
    noise = tf.random.normal((tf.shape(real)[0], latent_dim))
    discriminator.trainable = True
    with tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    discriminator.trainable = False
    with tf.GradientTape() as g_tape:
        logits = gan(noise, training=True)
        g_loss = bce(tf.ones_like(logits), logits)
    g_grads = g_tape.gradient(g_loss, gan.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, gan.trainable_variables))


for epoch in range(50):
    for batch in real_images:
        train_step(batch)
"""

# The critic's `trainable_variables` are read into a name before the freeze.
GAN_DISC_LIST_BEFORE_FREEZE = """\
import tensorflow as tf

latent_dim = 16
generator = tf.keras.Sequential([tf.keras.Input((latent_dim,)), tf.keras.layers.Dense(64, activation="relu"),
                                 tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(64, activation="relu"),
                              tf.keras.layers.Dense(1)])
critic_vars = critic.trainable_variables
critic.trainable = False
noise_in = tf.keras.Input((latent_dim,))
combined = tf.keras.Model(noise_in, critic(generator(noise_in)))
c_opt = tf.keras.optimizers.RMSprop(5e-5)
g_opt = tf.keras.optimizers.RMSprop(5e-5)
points = tf.random.normal((2048, 2))

for step in range(2000):
    real = tf.gather(points, tf.random.uniform((64,), 0, 2048, tf.int32))
    noise = tf.random.normal((64, latent_dim))
    with tf.GradientTape() as c_tape:
        c_loss = tf.reduce_mean(critic(generator(noise))) - tf.reduce_mean(critic(real))
    c_opt.apply_gradients(zip(c_tape.gradient(c_loss, critic_vars), critic_vars))
    with tf.GradientTape() as g_tape:
        g_loss = -tf.reduce_mean(combined(noise))
    g_grads = g_tape.gradient(g_loss, combined.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, combined.trainable_variables))
"""

# A GAN class whose discriminator step differentiates `self.discriminator.weights`.
GAN_CLASS_DISC_WEIGHTS = """\
import tensorflow as tf
from tensorflow import keras


class GAN:
    def __init__(self, latent_dim=64):
        self.latent_dim = latent_dim
        self.generator = keras.Sequential([keras.Input((latent_dim,)), keras.layers.Dense(256, activation="relu"),
                                           keras.layers.Dense(784, activation="sigmoid")])
        self.discriminator = keras.Sequential([keras.Input((784,)), keras.layers.Dense(256, activation="relu"),
                                               keras.layers.Dense(1)])
        self.discriminator.trainable = False
        z = keras.Input((latent_dim,))
        self.combined = keras.Model(z, self.discriminator(self.generator(z)))
        self.d_opt = keras.optimizers.Adam(1e-4)
        self.g_opt = keras.optimizers.Adam(1e-4)
        self.loss = keras.losses.BinaryCrossentropy(from_logits=True)

    def train_step(self, real):
        noise = tf.random.normal((tf.shape(real)[0], self.latent_dim))
        with tf.GradientTape() as tape:
            fake_logits = self.discriminator(self.generator(noise), training=True)
            real_logits = self.discriminator(real, training=True)
            d_loss = self.loss(tf.zeros_like(fake_logits), fake_logits) + self.loss(tf.ones_like(real_logits), real_logits)
        grads = tape.gradient(d_loss, self.discriminator.weights)
        self.d_opt.apply_gradients(zip(grads, self.discriminator.weights))
        with tf.GradientTape() as tape:
            logits = self.combined(noise, training=True)
            g_loss = self.loss(tf.ones_like(logits), logits)
        grads = tape.gradient(g_loss, self.combined.trainable_weights)
        self.g_opt.apply_gradients(zip(grads, self.combined.trainable_weights))
        return d_loss, g_loss


gan = GAN()
for epoch in range(10):
    gan.train_step(tf.random.uniform((32, 784)))
"""

# The buggy twin: the discriminator's step differentiates its `trainable_variables` while frozen: an empty list.
GAN_DISC_NEVER_TRAINED = """\
import tensorflow as tf
from tensorflow import keras

latent_dim = 32
generator = keras.Sequential([keras.Input((latent_dim,)), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(784, activation="tanh")])
discriminator = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                                  keras.layers.Dense(1)])
discriminator.trainable = False
z = keras.Input((latent_dim,))
gan = keras.Model(z, discriminator(generator(z)))
bce = keras.losses.BinaryCrossentropy(from_logits=True)
d_opt = keras.optimizers.Adam(2e-4)
g_opt = keras.optimizers.Adam(2e-4)
real_images = tf.data.Dataset.from_tensor_slices(tf.random.uniform((1024, 784), -1, 1)).batch(64)


@tf.function
def train_step(real):
    noise = tf.random.normal((tf.shape(real)[0], latent_dim))
    with tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    with tf.GradientTape() as g_tape:
        logits = gan(noise, training=True)
        g_loss = bce(tf.ones_like(logits), logits)
    g_grads = g_tape.gradient(g_loss, gan.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, gan.trainable_variables))


for epoch in range(50):
    for batch in real_images:
        train_step(batch)
"""


# ------------------------------------------------------------------ TL103: symmetric losses

# `Hinge` with -1/1 labels: max(0, 1 - y_true * y_pred) is symmetric in the product.
HINGE_WITH_SIGNED_LABELS = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1, activation="tanh")])
optimizer = tf.keras.optimizers.SGD(0.01)
hinge = tf.keras.losses.Hinge()
x = tf.random.normal((256, 8))
y = tf.where(tf.reduce_sum(x, axis=1, keepdims=True) > 0, 1.0, -1.0)

for epoch in range(20):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = hinge(predictions, y)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

# `MeanSquaredLogarithmicError`, `huber`, `RootMeanSquaredError` and `PearsonCorrelation` with the prediction first.
REGRESSION_LOSSES_AND_METRICS = """\
import tensorflow as tf
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(3, activation="softplus")])
optimizer = keras.optimizers.Adam(1e-3)
msle = keras.losses.MeanSquaredLogarithmicError()
rmse = keras.metrics.RootMeanSquaredError()
pearson = keras.metrics.PearsonCorrelation()
ds = tf.data.Dataset.from_tensor_slices((tf.random.normal((512, 10)), tf.random.uniform((512, 3)))).batch(32)

for epoch in range(5):
    for features, targets in ds:
        with tf.GradientTape() as tape:
            outputs = model(features, training=True)
            loss = msle(outputs, targets) + keras.losses.huber(outputs, targets)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        rmse.update_state(outputs, targets)
        pearson.update_state(outputs, targets)
    print(epoch, rmse.result().numpy(), pearson.result().numpy())
"""

# `Dice`, `Tversky(alpha=0.5, beta=0.5)` and `MeanIoU` with the prediction first.
SEGMENTATION_OVERLAP = """\
import tensorflow as tf

segmenter = tf.keras.Sequential([tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                                 tf.keras.layers.Conv2D(1, 1, activation="sigmoid")])
optimizer = tf.keras.optimizers.Adam(1e-3)
dice = tf.keras.losses.Dice()
tversky = tf.keras.losses.Tversky(alpha=0.5, beta=0.5)
mean_iou = tf.keras.metrics.MeanIoU(num_classes=2)
images = tf.random.uniform((64, 32, 32, 3))
masks = tf.cast(tf.random.uniform((64, 32, 32, 1)) > 0.5, tf.float32)

for step in range(100):
    with tf.GradientTape() as tape:
        probs = segmenter(images, training=True)
        loss = dice(probs, masks) + tversky(probs, masks)
    grads = tape.gradient(loss, segmenter.trainable_variables)
    optimizer.apply_gradients(zip(grads, segmenter.trainable_variables))
    mean_iou.update_state(tf.cast(probs > 0.5, tf.int32), tf.cast(masks, tf.int32))
"""

# The buggy twin: `CategoricalHinge`, `SquaredHinge` with one-hot labels and `Tversky(0.7, 0.3)` swapped.
ASYMMETRIC_SWAPS = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.SGD(0.01)
hinge = tf.keras.losses.CategoricalHinge()
squared_hinge = tf.keras.losses.SquaredHinge()
tversky = tf.keras.losses.Tversky(alpha=0.7, beta=0.3)
x = tf.random.normal((256, 8))
labels = tf.one_hot(tf.argmax(x[:, :4], axis=1), 4)

for epoch in range(20):
    with tf.GradientTape() as tape:
        scores = model(x, training=True)
        loss = hinge(scores, labels) + squared_hinge(scores, labels) + tversky(tf.sigmoid(scores), labels)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


# ------------------------------------------------------------------ unit tests

# A unit test fits two samples with a hand-written cross-entropy (TL108).
TEST_HANDWRITTEN_XENT = """\
import numpy as np
import tensorflow as tf


class SoftmaxRegressionTest(tf.test.TestCase):
    def test_fits_two_samples(self):
        x = tf.constant([[1.0, 0.0], [0.0, 1.0]])
        y = tf.constant([[1.0, 0.0], [0.0, 1.0]])
        w = tf.Variable(tf.zeros((2, 2)))
        b = tf.Variable(tf.zeros((2,)))
        optimizer = tf.keras.optimizers.SGD(0.5)
        for _ in range(100):
            with tf.GradientTape() as tape:
                probs = tf.nn.softmax(tf.matmul(x, w) + b)
                loss = -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(probs), axis=1))
            grads = tape.gradient(loss, [w, b])
            optimizer.apply_gradients(zip(grads, [w, b]))
        self.assertLess(float(loss), 0.1)
        np.testing.assert_array_equal(tf.argmax(probs, axis=1).numpy(), [0, 1])


if __name__ == "__main__":
    tf.test.main()
"""

# A unit test overfits the first batch, fetched afresh each step (TL603).
TEST_SAME_BATCH = """\
import tensorflow as tf


class OverfitOneBatchTest(tf.test.TestCase):
    def setUp(self):
        super().setUp()
        features = tf.random.normal((64, 4))
        self.dataset = tf.data.Dataset.from_tensor_slices((features, tf.reduce_sum(features, 1, keepdims=True))).batch(16)
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
        self.optimizer = tf.keras.optimizers.Adam(1e-2)

    def test_loss_goes_down_on_one_batch(self):
        losses = []
        for step in range(200):
            x, y = next(iter(self.dataset))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            losses.append(float(loss))
        self.assertLess(losses[-1], losses[0] / 10)


if __name__ == "__main__":
    tf.test.main()
"""

# A unit test runs one step under `mixed_float16` without loss scaling (TL203).
TEST_FLOAT16_STEP = """\
import tensorflow as tf
from tensorflow.keras import mixed_precision


class MixedPrecisionTrainingTest(tf.test.TestCase):
    def test_step_runs_in_float16(self):
        mixed_precision.set_global_policy("mixed_float16")
        try:
            model = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1, dtype="float32")])
            optimizer = tf.keras.optimizers.SGD(0.1)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(tf.ones((2, 3)), training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        finally:
            mixed_precision.set_global_policy("float32")
"""

# A unit test checks that a frozen base keeps its weights (TL301).
TEST_FROZEN_BASE = """\
import tensorflow as tf


class HeadOnlyTrainingTest(tf.test.TestCase):
    def test_frozen_base_keeps_its_weights(self):
        base = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu")])
        base.trainable = False
        head = tf.keras.layers.Dense(1)
        model = tf.keras.Sequential([base, head])
        before = [w.numpy().copy() for w in base.weights]
        optimizer = tf.keras.optimizers.SGD(0.1)
        x, y = tf.ones((2, 4)), tf.ones((2, 1))
        for _ in range(5):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        for old, new in zip(before, base.weights):
            self.assertAllClose(old, new)


if __name__ == "__main__":
    tf.test.main()
"""

# The base is frozen at module level; only a unit test trains the head (TL301).
TEST_FROZEN_AT_MODULE_LEVEL = """\
import tensorflow as tf

base = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu")])
base.trainable = False
head = tf.keras.layers.Dense(1)
model = tf.keras.Sequential([base, head])


class HeadTest(tf.test.TestCase):
    def test_head_learns(self):
        optimizer = tf.keras.optimizers.SGD(0.1)
        for _ in range(5):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(tf.ones((2, 4)), training=True) - 1.0))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        self.assertLess(float(loss), 1.0)
"""

# A unit test checks the loss stays finite, with the arguments swapped (TL103).
TEST_SWAPPED_LOSS = """\
import tensorflow as tf


class ClassifierStepTest(tf.test.TestCase):
    def setUp(self):
        super().setUp()
        self.model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        self.optimizer = tf.keras.optimizers.SGD(0.1)
        self.x = tf.constant([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        self.labels = tf.constant([[1.0, 0.0], [0.0, 1.0]])

    def test_loss_stays_finite(self):
        loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
        for _ in range(50):
            with tf.GradientTape() as tape:
                logits = self.model(self.x, training=True)
                loss = loss_fn(logits, self.labels)
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.assertTrue(bool(tf.math.is_finite(loss)))


if __name__ == "__main__":
    tf.test.main()
"""

# A unit test steps `model.variables` of a model with BatchNorm (TL006).
TEST_BATCHNORM_VARIABLES = """\
import tensorflow as tf


class BatchNormStepTest(tf.test.TestCase):
    def test_step_moves_the_kernel(self):
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8),
                                     tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.1)
        kernel_before = model.layers[0].kernel.numpy().copy()
        x, y = tf.random.normal((16, 4)), tf.random.normal((16, 1))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.variables)
        optimizer.apply_gradients(zip(grads, model.variables))
        self.assertNotAllClose(kernel_before, model.layers[0].kernel)


if __name__ == "__main__":
    tf.test.main()
"""

# The buggy twin of the first: the same two-sample fit as a script.
SCRIPT_HANDWRITTEN_XENT = """\
import numpy as np
import tensorflow as tf

x = tf.constant([[1.0, 0.0], [0.0, 1.0]])
y = tf.constant([[1.0, 0.0], [0.0, 1.0]])
w = tf.Variable(tf.zeros((2, 2)))
b = tf.Variable(tf.zeros((2,)))
optimizer = tf.keras.optimizers.SGD(0.5)


def fit(steps):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            probs = tf.nn.softmax(tf.matmul(x, w) + b)
            loss = -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(probs), axis=1))
        grads = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b]))
    return float(loss)


print(fit(100), np.argmax(tf.nn.softmax(tf.matmul(x, w) + b).numpy(), axis=1))
"""

# Still reported in a test: the actor's gradients applied to the critic, a crash or nonsense.
TEST_WRONG_NETWORK = """\
import tensorflow as tf


class ActorCriticStepTest(tf.test.TestCase):
    def test_actor_step_changes_the_actor(self):
        actor = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
        critic = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.1)
        states = tf.random.normal((8, 4))
        before = actor.layers[0].kernel.numpy().copy()
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(tf.nn.log_softmax(actor(states, training=True)))
        grads = tape.gradient(loss, actor.trainable_variables)
        optimizer.apply_gradients(zip(grads, critic.trainable_variables))
        self.assertNotAllClose(before, actor.layers[0].kernel)


if __name__ == "__main__":
    tf.test.main()
"""


@pytest.mark.parametrize("source", [POLICY_IN_COMMENTS, POLICY_SETTER_NEVER_CALLED, POLICY_IN_ANOTHER_TEST,
                                    POLICY_IN_EXPORT_HELPER, POLICY_RESTORED_UNREAD],
                         ids=["comments", "call-commented-out", "another-test-method", "export-helper",
                              "restored-unread"])
def test_a_policy_that_does_not_hold_where_the_step_runs_is_not_reported(source: str):
    assert findings("TL203", source) == []


def test_the_setter_called_again_before_training_is_reported():
    (line, message), = findings("TL203", POLICY_SETTER_CALLED)
    assert line_of(POLICY_SETTER_CALLED, line).startswith("grads = tape.gradient(")
    assert "`mixed_float16` policy (line 8)" in message


def test_a_policy_set_by_a_function_called_before_the_loop_is_reported():
    (line, message), = findings("TL203", POLICY_SET_BY_CONFIGURE)
    assert line_of(POLICY_SET_BY_CONFIGURE, line).startswith("grads = tape.gradient(")
    assert "`mixed_float16` policy (line 6)" in message


@pytest.mark.parametrize("source", [GAN_DISC_VARIABLES, GAN_DISC_TOGGLED, GAN_DISC_LIST_BEFORE_FREEZE,
                                    GAN_CLASS_DISC_WEIGHTS],
                         ids=["variables", "toggled", "list-before-freeze", "class-weights"])
def test_a_discriminator_frozen_for_the_combined_model_but_trained_by_its_own_step_is_not_reported(source: str):
    assert findings("TL301", source) == []


def test_a_discriminator_whose_own_step_reads_its_empty_trainable_variables_is_reported():
    (line, message), = findings("TL301", GAN_DISC_NEVER_TRAINED)
    assert line_of(GAN_DISC_NEVER_TRAINED, line) == "discriminator.trainable = False"
    assert "nothing trainable is left" in message


@pytest.mark.parametrize("source", [HINGE_WITH_SIGNED_LABELS, REGRESSION_LOSSES_AND_METRICS, SEGMENTATION_OVERLAP],
                         ids=["hinge-signed-labels", "regression", "segmentation"])
def test_symmetric_losses_and_metrics_with_the_prediction_first_are_not_reported(source: str):
    assert findings("TL103", source) == []


def test_asymmetric_losses_with_the_prediction_first_are_reported():
    found = findings("TL103", ASYMMETRIC_SWAPS)
    assert [message.split("`")[1] for _, message in found] == ["hinge", "squared_hinge", "tversky"]
    assert "only in its first argument" in found[1][1]


@pytest.mark.parametrize("code, source", [
    ("TL108", TEST_HANDWRITTEN_XENT), ("TL603", TEST_SAME_BATCH), ("TL203", TEST_FLOAT16_STEP),
    ("TL301", TEST_FROZEN_BASE), ("TL301", TEST_FROZEN_AT_MODULE_LEVEL), ("TL103", TEST_SWAPPED_LOSS),
    ("TL006", TEST_BATCHNORM_VARIABLES),
], ids=["TL108", "TL603", "TL203", "TL301", "TL301-module-level", "TL103", "TL006-batchnorm"])
def test_training_quality_claims_are_not_made_in_unit_tests(code: str, source: str):
    assert findings(code, source) == []


def test_the_same_two_sample_fit_outside_a_test_is_reported():
    (line, _), = findings("TL108", SCRIPT_HANDWRITTEN_XENT)
    assert "tf.math.log(probs)" in line_of(SCRIPT_HANDWRITTEN_XENT, line)


def test_gradients_applied_to_another_network_are_reported_in_a_unit_test_too():
    (line, message), = findings("TL006", TEST_WRONG_NETWORK)
    assert "`actor.trainable_variables` are applied to `critic.trainable_variables`" in message
