# expect: none
"""The near miss of noise after a subclass's output: `GaussianNoise` on the inputs (augmentation) and
`Dropout` on the hidden features, both before the output layer, in a custom `GradientTape` loop (the
placement https://github.com/tensorflow/tensorflow/issues/25175's model lacked).

Observed on TF 2.21 (CPU): the training loss goes 0.766 -> 0.081 in 100 steps, the evaluation loss is
0.047, and every training-mode output stays in [0, 1] (with the noise after the sigmoid instead: 0.236
against 0.116, 40% of the outputs outside [0, 1])."""
import numpy as np
import tensorflow as tf


class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.augment = tf.keras.layers.GaussianNoise(0.1)
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.dropout = tf.keras.layers.Dropout(0.3)
        self.out = tf.keras.layers.Dense(1, activation="sigmoid")

    def call(self, x, training=False):
        h = self.hidden(self.augment(x, training=training))
        return self.out(self.dropout(h, training=training))


tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
features = rng.normal(size=(512, 10)).astype("float32")
labels = (features @ rng.normal(size=(10, 1)) > 0).astype("float32")

model = Classifier()
loss_fn = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-2)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        probabilities = model(x, training=True)
        loss = loss_fn(y, probabilities)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


losses = [float(train_step(features, labels)) for _ in range(100)]
noisy = model(features, training=True).numpy()
clean = model(features, training=False).numpy()
print("training loss", round(losses[0], 3), "->", round(losses[-1], 3))
print("evaluation loss", round(float(loss_fn(labels, clean)), 3))
print("training-mode outputs outside [0, 1]:", ((noisy < 0) | (noisy > 1)).mean().round(2))
