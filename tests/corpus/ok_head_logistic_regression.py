# expect: none
"""A model that is linear on purpose: a logistic regression, `Normalization` then one `Dense(1, "sigmoid")`,
on data a line separates. There is no hidden layer (the one-layer model
https://github.com/aymericdamien/TensorFlow-Examples/issues/175 says the two-layer linear example amounts to).

Observed on TF 2.21 (CPU), 30 epochs: loss 0.169, accuracy 0.98."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
features = (rng.normal(size=(1000, 5)) * [1, 10, 100, 0.1, 5]).astype("float32")
labels = (features @ np.array([1.0, 0.1, 0.01, 10.0, 0.2]) > 0).astype("float32")

normalizer = tf.keras.layers.Normalization()
normalizer.adapt(features)
model = tf.keras.Sequential([tf.keras.Input((5,)), normalizer, tf.keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(features, labels, epochs=30, batch_size=64, verbose=0)
print("loss", round(history.history["loss"][-1], 3), "accuracy", round(history.history["accuracy"][-1], 3))
