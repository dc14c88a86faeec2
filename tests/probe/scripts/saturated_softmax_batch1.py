# expect: TL813
"""The seed's zero-gradient signature with one sample per step: a raw `tf.nn.softmax` before a probability
cross-entropy, Adam at 0.01 on non-negative features. After "Gradients are zero except first iteration in
tensorflow" (Stack Overflow) and https://github.com/tensorflow/tensorflow/issues/52175. Issue 12 measured that
only samples saturated on the wrong side were counted, although Keras's clip also passes no gradient on the right
side, so detection at batch 1 was a coin flip. On TF 2.21 CPU the softmax reaches exactly 0/1 within a few steps
and most single-sample steps have an all-zero gradient."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(8)
rng = np.random.default_rng(8)
features = rng.uniform(0.0, 4.0, size=(64, 512)).astype("float32")
labels = np.eye(2, dtype="float32")[rng.integers(0, 2, size=64)]
head = keras.Sequential([keras.Input((512,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(2)])
loss_fn = keras.losses.CategoricalCrossentropy()
optimizer = keras.optimizers.Adam(learning_rate=0.01)

for i in range(len(features)):
    with tf.GradientTape() as tape:
        probabilities = tf.nn.softmax(head(features[i:i + 1], training=True))
        loss = loss_fn(labels[i:i + 1], probabilities)
    grads = tape.gradient(loss, head.trainable_variables)
    optimizer.apply_gradients(zip(grads, head.trainable_variables))
