# expect: TL814
"""TL814's documentation example inside a `tf.function` train step, which the probe runs as a graph: the
hand-written `tf.reduce_mean(tf.square(y - pred))` with targets of shape (B,) and predictions of (B, 1). After
"Keras regression model predicts the same value for every input" (Stack Overflow 47919669). The op callback sees
the traced ops, with their static shapes, while the function is traced inside the probed step."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(13)
x = rng.normal(size=(256, 5)).astype("float32")
y = (x @ rng.normal(size=(5,))).astype("float32")  # shape (256,)
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        pred = model(xb, training=True)
        loss = tf.reduce_mean(tf.square(yb - pred))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    for i in range(0, 256, 32):
        train_step(x[i:i + 32], y[i:i + 32])
