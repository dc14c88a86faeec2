# expect: TL004
"""A ranking loss that sorts NumPy copies of the scores: the loss depends on the weights only through an index."""
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.random.normal((5, 1)))
opt = tf.keras.optimizers.Adam(0.01)

def ranking_loss(scores, labels):
    s = np.asarray(scores)
    order = np.argsort(-s[:, 0])
    return tf.reduce_sum(labels[order] * np.log1p(np.arange(len(order)) + 1.0))

for _ in range(10):
    feats = tf.random.normal((16, 5))
    labels = tf.random.uniform((16,))
    with tf.GradientTape() as tape:
        scores = tf.matmul(feats, w)
        loss = ranking_loss(scores.numpy(), labels)
    grads = tape.gradient(loss, [w])
    opt.apply_gradients(zip(grads, [w]))
