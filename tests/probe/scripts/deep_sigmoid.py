"""Twelve sigmoid layers without normalization: the gradient fades before the first layers."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(4)
rng = np.random.default_rng(4)
x = rng.normal(size=(64, 16)).astype("float32")
y = rng.integers(0, 4, size=64)
model = keras.Sequential([keras.Input((16,))] + [keras.layers.Dense(32, activation="sigmoid") for _ in range(12)]
                         + [keras.layers.Dense(4)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.SGD(learning_rate=0.01)

for step in range(5):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
# expect: TL805
