# expect: none
"""A correct loop on batches of 2 (a memory-bound model trained one pair at a time): standardized inputs, a
Dense(64, relu) layer, Adam at 1e-3. Each small batch leaves about half the ReLU units silent, which is healthy;
pooled over steps, almost every unit gets a gradient from some sample. Expected: nothing, although the probe pools
past --steps to judge the units (issue 12, the batch-1 dead-ReLU pooling must not call healthy units dead)."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(60)
rng = np.random.default_rng(60)
x = rng.normal(size=(128, 20)).astype("float32")
y = rng.integers(0, 3, size=128)
model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)

for i in range(0, len(x), 2):
    with tf.GradientTape() as tape:
        loss = loss_fn(y[i:i + 2], model(x[i:i + 2], training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
