# expect: TL305
"""A classifier with a learned temperature kept as a raw `tf.Variable` on a Keras Model subclass, trained
by a custom loop over `model.trainable_variables` (missing trainable variables of a subclassed model:
https://github.com/tensorflow/tensorflow/issues/38211; Keras 3 tracks only add_weight/keras.Variable,
https://github.com/keras-team/keras/issues/16797).

Observed on TF 2.21 (CPU): the Dense layers train (last-batch loss 1.01 -> 0.18 over 5 epochs) but
`model.trainable_variables` holds 4 variables, not 5: the temperature stays at exactly 1.0."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
x_train = rng.normal(size=(512, 8)).astype("float32")
y_train = (x_train[:, :3].argmax(axis=1)).astype("int64")


class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.logits = tf.keras.layers.Dense(3)
        self.temperature = tf.Variable(1.0, name="temperature")

    def call(self, x, training=False):
        return self.logits(self.hidden(x)) / self.temperature


model = Classifier()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-2)
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(5):
    for x, y in dataset:
        loss = train_step(x, y)
    print(epoch, float(loss), "trainable", len(model.trainable_variables), "temperature", float(model.temperature))
