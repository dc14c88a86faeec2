"""A hand-written cross-entropy that takes log(0): the loss and the gradients are not finite."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(3)
x = rng.normal(size=(16, 4)).astype("float32")
y = np.eye(3, dtype="float32")[rng.integers(0, 3, size=16)]
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
optimizer = keras.optimizers.SGD(learning_rate=0.1)

for step in range(5):
    with tf.GradientTape() as tape:
        probabilities = tf.nn.relu(model(x, training=True))
        loss = -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(probabilities), axis=-1))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
# expect: TL803
