# expect: none
"""A correct loop: an Embedding and an LSTM over integer token sequences, binary classification from a logit,
gradient clipping by global norm, eager steps."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(22)
rng = np.random.default_rng(22)
tokens = rng.integers(1, 200, size=(64, 12))
targets = (tokens[:, 0] > 100).astype("float32")[:, None]

model = keras.Sequential([
    keras.Input((12,), dtype="int32"),
    keras.layers.Embedding(200, 16),
    keras.layers.LSTM(24),
    keras.layers.Dense(1),
])
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=2e-3)

for step in range(20):
    batch = slice((step % 4) * 16, (step % 4) * 16 + 16)
    with tf.GradientTape() as tape:
        logits = model(tokens[batch], training=True)
        loss = loss_fn(targets[batch], logits)
    grads = tape.gradient(loss, model.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
