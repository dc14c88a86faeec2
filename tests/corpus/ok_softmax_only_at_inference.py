# expect: none
"""Low-level classifier: the model returns logits while training and probabilities at inference;
the training step asks for logits and feeds them to `tf.nn.sparse_softmax_cross_entropy_with_logits`."""
import numpy as np
import tensorflow as tf

N_CLASSES = 5


class TinyNet(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.body = tf.keras.layers.Dense(48, activation=tf.nn.relu)
        self.drop = tf.keras.layers.Dropout(0.25)
        self.head = tf.keras.layers.Dense(N_CLASSES)

    def call(self, inputs, training=False):
        h = self.drop(self.body(inputs), training=training)
        h = self.head(h)
        if not training:
            # callers outside training want class probabilities
            h = tf.nn.softmax(h)
        return h


def batch_loss(scores, targets):
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(targets, tf.int64), logits=scores)
    return tf.reduce_mean(per_example)


net = TinyNet()
sgd = tf.keras.optimizers.SGD(learning_rate=0.05)

rng = np.random.default_rng(1)
xs = rng.normal(size=(512, 12)).astype("float32")
ys = rng.integers(0, N_CLASSES, size=512)
batches = tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(512).batch(64)


@tf.function
def fit_batch(features, targets):
    with tf.GradientTape() as tape:
        scores = net(features, training=True)
        loss = batch_loss(scores, targets)
    grads = tape.gradient(loss, net.trainable_variables)
    sgd.apply_gradients(zip(grads, net.trainable_variables))
    return loss


for epoch in range(3):
    for features, targets in batches:
        value = fit_batch(features, targets)
    probs = net(xs[:8])
    print(epoch, float(value), np.argmax(probs, axis=1))
