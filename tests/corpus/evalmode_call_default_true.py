# expect: TL602
"""A subclassed model whose `call` defaults to `training=True`, tested after training with a plain
`model(x)`: the default silently puts Dropout and BatchNorm in training mode for the test set
(tensorflow/tensorflow#46414: BatchNormalization "does not work during evaluation and validation";
tensorflow/tensorflow#33771).

Observed on TF 2.21 (CPU): the test accuracy measured through the default (batches of 4) is 0.793 and
0.810 over two runs, against 0.950 and 0.953 for the same model called with `training=False`."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
tf.random.set_seed(1)
x = rng.normal(size=(1400, 16)).astype("float32")
y = (x[:, 0] * 2 + x[:, 1] - x[:, 2] > 0).astype("int64")


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.norm = tf.keras.layers.BatchNormalization()
        self.drop = tf.keras.layers.Dropout(0.4)
        self.out = tf.keras.layers.Dense(2)

    def call(self, inputs, training=True):
        h = self.norm(self.hidden(inputs), training=training)
        return self.out(self.drop(h, training=training))


model = Net()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(2e-3)
train_ds = tf.data.Dataset.from_tensor_slices((x[:1000], y[:1000])).shuffle(1000).batch(32)

for epoch in range(6):
    for xb, yb in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
for start in range(1000, 1400, 4):
    test_accuracy.update_state(y[start:start + 4], model(x[start:start + 4]))
inference = model(x[1000:], training=False)
print(f"test accuracy (call default) {float(test_accuracy.result()):.3f}, "
      f"with training=False {float(np.mean(np.argmax(inference, axis=1) == y[1000:])):.3f}")
