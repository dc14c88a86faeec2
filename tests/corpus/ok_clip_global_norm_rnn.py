# expect: none
"""The corrected LSTM loop of clip_global_norm_discarded.py (tensorflow/tensorflow#28707): the clipped
list replaces the gradients before the update.

Observed on TF 2.21 (CPU): the applied global norm is 1.0 at every step (the unclipped one is 7-8)."""
import numpy as np
import tensorflow as tf

VOCAB, SEQ = 40, 20
rng = np.random.default_rng(0)
tokens = rng.integers(0, VOCAB, size=(64, SEQ + 1))
dataset = tf.data.Dataset.from_tensor_slices((tokens[:, :-1], tokens[:, 1:])).batch(16)

model = tf.keras.Sequential([
    tf.keras.layers.Embedding(VOCAB, 32),
    tf.keras.layers.LSTM(64, return_sequences=True),
    tf.keras.layers.Dense(VOCAB),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)

for step, (x, y) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True)) * 100.0
    grads = tape.gradient(loss, model.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss), "applied global norm", float(tf.linalg.global_norm(grads)))
