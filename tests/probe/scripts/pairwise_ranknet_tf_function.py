# expect: none
"""The correct RankNet pairwise loss of pairwise_ranknet.py in a `tf.function` step (run as a graph under the
probe): `s_i - s_j` is a deliberate (B, 1) - (1, B) broadcast of the model's own output, and the output bias
cancels by construction. Expected: nothing above info."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(22)
features = rng.normal(size=(32, 8)).astype("float32")
relevance = (features @ rng.normal(size=(8,))).astype("float32")
scorer = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(features, relevance):
    with tf.GradientTape() as tape:
        scores = tf.reshape(scorer(features, training=True), (-1,))      # (B,)
        score_diff = scores[:, None] - scores[None, :]                   # (B, B)
        label_diff = relevance[:, None] - relevance[None, :]
        target = tf.cast(label_diff > 0, tf.float32)
        mask = tf.cast(tf.not_equal(label_diff, 0.0), tf.float32)
        pair_losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=score_diff)
        loss = tf.reduce_sum(pair_losses * mask) / tf.reduce_sum(mask)
    grads = tape.gradient(loss, scorer.trainable_variables)
    optimizer.apply_gradients(zip(grads, scorer.trainable_variables))


for step in range(20):
    train_step(features, relevance)
