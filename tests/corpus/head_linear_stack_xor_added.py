# expect: TL115
"""XOR learnt by a Sequential built with `model.add`, whose hidden layers were given no activation (the
Keras example of https://github.com/keras-team/keras/issues/9286, `model.add(Dense(layer_size))` in a
loop: "Multi dense layers should add activation, otherwise one dense layer is enough"; written out here
layer by layer).

Observed on TF 2.21 (CPU), 1 000 noisy corners, 40 epochs: loss 0.692 (chance is ln 2 = 0.693), training
accuracy 0.669; no linear map separates XOR. With `activation="relu"` on the two hidden `Dense` layers:
loss 0.000, accuracy 1.000."""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense, Dropout

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
corners = rng.integers(0, 2, size=(1000, 2))
labels = (corners[:, 0] ^ corners[:, 1]).astype("float32")
inputs = (corners + 0.1 * rng.normal(size=(1000, 2))).astype("float32")

model = tf.keras.Sequential()
model.add(Dense(16, input_shape=(2,)))
model.add(Dropout(0.1))
model.add(Dense(8))
model.add(Dense(1, activation="sigmoid"))
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(inputs, labels, epochs=40, batch_size=32, verbose=0)
print("loss", round(history.history["loss"][-1], 3), "accuracy", round(history.history["accuracy"][-1], 3))
