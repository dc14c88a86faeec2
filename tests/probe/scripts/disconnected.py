"""A second head whose output never reaches the loss: its variables get None gradients."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(2)
x = rng.normal(size=(32, 8)).astype("float32")
y = rng.normal(size=(32, 1)).astype("float32")

body = keras.layers.Dense(16, activation="relu")
head = keras.layers.Dense(1)
unused_head = keras.layers.Dense(1)
optimizer = keras.optimizers.SGD(learning_rate=0.01)

for step in range(10):
    with tf.GradientTape() as tape:
        hidden = body(x)
        prediction = head(hidden)
        auxiliary = unused_head(hidden)
        loss = tf.reduce_mean(tf.square(prediction - y))
    variables = body.trainable_variables + head.trainable_variables + unused_head.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
# expect: TL801
