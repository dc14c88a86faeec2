"""The seed's zero-gradient signature on today's TensorFlow: a raw tf.nn.softmax before a probability
cross-entropy, Adam at 0.01 on non-negative features. One step saturates the softmax at exactly 0/1."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(8)
rng = np.random.default_rng(8)
features = rng.uniform(0.0, 4.0, size=(32, 512)).astype("float32")
labels = np.eye(2, dtype="float32")[rng.integers(0, 2, size=32)]
head = keras.Sequential([keras.Input((512,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(2)])
loss_fn = keras.losses.CategoricalCrossentropy()
optimizer = keras.optimizers.Adam(learning_rate=0.01)

for step in range(10):
    with tf.GradientTape() as tape:
        probabilities = tf.nn.softmax(head(features, training=True))
        loss = loss_fn(labels, probabilities)
    grads = tape.gradient(loss, head.trainable_variables)
    optimizer.apply_gradients(zip(grads, head.trainable_variables))
# expect: TL813, TL802
