# expect: none
"""Custom `tf.GradientTape` loop that scores a two-unit `softmax` head with `BinaryCrossentropy()` against
labels read from a `.npy` file holding one-hot rows of shape (n, 2), the format asked for in
https://github.com/keras-team/keras/issues/4784 ("Y.shape should be nb_samples*2, and should be like
[[0, 1], [1, 0], ...]"). To run on its own the script first writes the file with synthetic data. The
near miss of TL117: a binary loss on two softmax units whose labels are unknown to a static reader (here
one-hot, which lines up), so nothing may be reported.

Observed on TF 2.21 (CPU): mean loss 0.330, 0.163, 0.158 over 3 epochs, accuracy 0.851, 0.930, 0.936
(the two classes overlap).
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(29)
folder = tempfile.mkdtemp()
classes = np.random.randint(0, 2, size=3000)
np.save(os.path.join(folder, "x.npy"), (np.random.normal(size=(3000, 10)) + classes[:, None]).astype("float32"))
np.save(os.path.join(folder, "y.npy"), np.eye(2, dtype="float32")[classes])

x_all = np.load(os.path.join(folder, "x.npy"))
y_all = np.load(os.path.join(folder, "y.npy"))
dataset = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(3000).batch(64)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(10,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(2, activation="softmax"),
])
bce = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-2)
accuracy = tf.keras.metrics.CategoricalAccuracy()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        probs = model(x, training=True)
        loss = bce(y, probs)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, probs)
    return loss


for epoch in range(3):
    accuracy.reset_state()
    losses = [float(train_step(x, y)) for x, y in dataset]
    print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, accuracy {float(accuracy.result()):.3f}")
