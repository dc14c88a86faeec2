# expect: none
"""A correct RankNet-style pairwise loss: every pair of documents in the batch is compared through the difference
of their scores, `s_i - s_j`, a deliberate (B, 1) - (1, B) broadcast of the model's own output. The output
layer's bias cancels in every difference, so its gradient is exactly zero by construction. After "RankNet in
TensorFlow 2: bias gradient is always zero" (Stack Overflow 59541264) and the TF-Ranking pairwise losses.
Issue 12 measured an error-level TL802 ("zero gradient") on this design; on TF 2.21 CPU the bias gradient is
exactly 0.0 while the kernel's is not. Expected: nothing above info (an info TL802 that says why)."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(21)
features = rng.normal(size=(32, 8)).astype("float32")
relevance = (features @ rng.normal(size=(8,))).astype("float32")
scorer = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(learning_rate=1e-3)

for step in range(20):
    with tf.GradientTape() as tape:
        scores = scorer(features, training=True)                         # (B, 1)
        score_diff = scores - tf.transpose(scores)                       # (B, B): s_i - s_j
        label_diff = relevance[:, None] - relevance[None, :]             # (B, B)
        target = tf.cast(label_diff > 0, tf.float32)
        mask = tf.cast(tf.not_equal(label_diff, 0.0), tf.float32)
        pair_losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=score_diff)
        loss = tf.reduce_sum(pair_losses * mask) / tf.reduce_sum(mask)
    grads = tape.gradient(loss, scorer.trainable_variables)
    optimizer.apply_gradients(zip(grads, scorer.trainable_variables))
