# expect: error
"""A graph-only error: `.numpy()` on a tensor inside a @tf.function step. It fails without the probe
(AttributeError: 'SymbolicTensor' object has no attribute 'numpy'), so it must fail under the probe too."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(11)
x = rng.normal(size=(32, 6)).astype("float32")
y = rng.integers(0, 3, size=32)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print("loss", loss.numpy())
    return loss


for step in range(10):
    train_step(x, y)
