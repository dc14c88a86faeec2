# expect: TL008
"""A character-level LSTM trained with a custom loop that clips by global norm, after the TF2 question
"How to apply gradient clipping in TensorFlow 2.0?" (tensorflow/tensorflow#28707): the clip is called as
a statement, so its result is dropped and the optimizer applies the raw gradients.

Observed on TF 2.21 (CPU): the clip asks for a global norm of 1.0, but the gradients applied keep their
own norm: 7.9, 6.8, 7.1 at steps 1-3."""
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
    tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss), "applied global norm", float(tf.linalg.global_norm(grads)))
