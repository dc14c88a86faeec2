# expect: none
"""loss_scale_skip.py's mixed-precision loop in a `tf.function` step, which the probe runs as a graph: a
LossScaleOptimizer whose first steps overflow skips them by design. Issue 12 measured TL807 blaming the learning
rate on such a skip. Expected: nothing above info; the report says "update skipped: gradients not finite"."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(50)
rng = np.random.default_rng(51)
x = rng.normal(size=(256, 16)).astype("float32")
y = rng.integers(0, 4, size=256)
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(4, dtype="float32")])
keras.mixed_precision.set_global_policy("float32")
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3), initial_scale=2.0 ** 24)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
        scaled = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for i in range(0, 256, 16):
    train_step(x[i:i + 16], y[i:i + 16])
