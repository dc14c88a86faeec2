# expect: TL112
"""Seven-class classifier whose output layer is `Dense(1, activation="softmax")`, trained with
`sparse_categorical_crossentropy` in a custom `tf.GradientTape` loop over a `tf.data` pipeline. It
follows https://stackoverflow.com/questions/44151760/received-a-label-value-of-1-which-is-outside-the-valid-range-of-0-1-python
(`Dense(1, activation='softmax')` with a sparse categorical loss; the answers: "if your output is from
label [0,7) then use model.add(Dense(7, activation='softmax'))" and "having just one neuron in the
output layer is an 'unary' classifier"). The data are synthetic: `make_blobs` with 7 centres.

Observed on TF 2.21 (CPU): the first step stops with `InvalidArgumentError: ... Received a label value
of 6 which is outside the valid range of [0, 1).` (op `SparseSoftmaxCrossEntropyWithLogits`): with one
unit only class 0 exists.
"""
import numpy as np
import tensorflow as tf
from sklearn.datasets import make_blobs

tf.keras.utils.set_random_seed(8)
features, classes = make_blobs(n_samples=1400, centers=7, n_features=6, random_state=8)
dataset = tf.data.Dataset.from_tensor_slices((features.astype("float32"), classes)).shuffle(1400).batch(64)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(6,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(1, activation="softmax"),
])
optimizer = tf.keras.optimizers.Adam()

for epoch in range(3):
    for step, (x, y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            probs = model(x, training=True)
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, probs))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"epoch {epoch + 1}: loss {float(loss):.4f}")
