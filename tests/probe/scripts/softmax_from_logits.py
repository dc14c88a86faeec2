"""Probabilities (a raw tf.nn.softmax) given to a loss built with from_logits=True: a double softmax."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(5)
x = rng.normal(size=(32, 8)).astype("float32")
y = np.eye(5, dtype="float32")[rng.integers(0, 5, size=32)]
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(5)])
loss_fn = keras.losses.CategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)

for step in range(5):
    with tf.GradientTape() as tape:
        probabilities = tf.nn.softmax(model(x, training=True))
        loss = loss_fn(y, probabilities)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
# expect: TL811
