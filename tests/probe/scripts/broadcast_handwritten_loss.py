# expect: TL814
"""TL814's own documentation example: a hand-written mean squared error with targets of shape (B,) against the
model's (B, 1) output, `tf.reduce_mean(tf.square(y - pred))`. The difference broadcasts to (B, B): every target is
compared with every prediction, and the model learns the batch mean. After "Keras regression model predicts the
same value for every input" (Stack Overflow 47919669) and https://github.com/keras-team/keras/issues/11749.
Issue 12: missed, because only Keras `Loss.__call__` was seen; on TF 2.21 CPU the loss is a scalar and the
gradients are healthy, so nothing else shows it."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(12)
x = rng.normal(size=(256, 5)).astype("float32")
y = (x @ rng.normal(size=(5,))).astype("float32")  # shape (256,)
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

for epoch in range(3):
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            pred = model(xb, training=True)
            loss = tf.reduce_mean(tf.square(yb - pred))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
