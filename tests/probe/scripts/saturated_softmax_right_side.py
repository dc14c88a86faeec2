# expect: TL813
"""A raw `tf.nn.softmax` before a probability cross-entropy, Adam at 0.01 on unscaled 0..50 features. Keras clips
the probabilities to [1e-7, 1 - 1e-7]: a sample whose true class gets exactly 0 or exactly 1 passes no gradient,
on either side. Issue 12 measured a miss at batch 32 with 100% of the samples clipped, because only the wrong side
was counted. On TF 2.21 CPU, after one update every sample's probability is exactly 0 or 1 (12 of 32 on the wrong
side, loss 6.04 = 16.1 * 12/32) and all gradients are exactly zero from step 2 on."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(9)
rng = np.random.default_rng(9)
features = rng.uniform(0.0, 50.0, size=(32, 64)).astype("float32")
labels = np.eye(2, dtype="float32")[(features[:, 0] > 25.0).astype(int)]
head = keras.Sequential([keras.Input((64,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
loss_fn = keras.losses.CategoricalCrossentropy()
optimizer = keras.optimizers.Adam(learning_rate=0.01)

for step in range(40):
    with tf.GradientTape() as tape:
        probabilities = tf.nn.softmax(head(features, training=True))
        loss = loss_fn(labels, probabilities)
    grads = tape.gradient(loss, head.trainable_variables)
    optimizer.apply_gradients(zip(grads, head.trainable_variables))
