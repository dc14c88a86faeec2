# expect: TL304
"""A subclassed classifier that builds its output layer inside call()."""
import tensorflow as tf


class TextClassifier(tf.keras.Model):
    def __init__(self, vocab_size, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.embedding = tf.keras.layers.Embedding(vocab_size, 64)
        self.pool = tf.keras.layers.GlobalAveragePooling1D()

    def call(self, tokens, training=False):
        h = self.pool(self.embedding(tokens))
        return tf.keras.layers.Dense(self.num_classes)(h)


model = TextClassifier(20000, 4)
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(tokens, labels):
    with tf.GradientTape() as tape:
        logits = model(tokens, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


tokens = tf.random.uniform((32, 50), maxval=20000, dtype=tf.int32)
labels = tf.random.uniform((32,), maxval=4, dtype=tf.int32)
for _ in range(3):
    print(train_step(tokens, labels))
