# expect: TL117
"""Binary classifier with a two-unit `softmax` output compiled with `binary_crossentropy`, fitted on one
0/1 label per sample (a column), the mismatch discussed in https://github.com/keras-team/keras/issues/4784
("Y.shape should be nb_samples*2, and should be like [[0, 1], [1, 0], ...]"; "Your model doesn't match
your loss function. If your targets are [0,1], use a sigmoid output layer and binary_crossentropy
loss"). The features are synthetic; the labels come from `np.random.randint` and are tied to them.

Observed on TF 2.21 (CPU): Keras 3 stops in the first batch with `ValueError: Arguments `target` and
`output` must have the same shape. Received: target.shape=(None, 1), output.shape=(None, 2)`.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(24)
y = np.random.randint(0, 2, size=(5000, 1))
X = (np.random.normal(size=(5000, 12)) + 0.8 * y).astype("float32")

model = tf.keras.Sequential([
    tf.keras.Input(shape=(12,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(2, activation="softmax"),
])
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(X, y, epochs=5, batch_size=128, validation_split=0.1)
