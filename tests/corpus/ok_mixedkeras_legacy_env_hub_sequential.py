# expect: none
"""The fix the hub threads settle on (tensorflow/tensorflow#86041, tensorflow/hub#920): install tf_keras
and set `TF_USE_LEGACY_KERAS=1` before importing TensorFlow, so `tf.keras` is tf_keras, the package
`hub.KerasLayer` belongs to. The encoder is a small SavedModel exported here.

Observed on TF 2.21 (CPU), with tf_keras 2.21 and tensorflow_hub 0.16.1 installed: the Sequential model
builds and trains; accuracy rises 0.5508 -> 0.6602 over 5 epochs
(0.6406 -> 0.7305 in a second run)."""
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import tempfile

import numpy as np
import tensorflow as tf
import tensorflow_hub as hub


def export_encoder(path):
    root = tf.train.Checkpoint()
    root.w = tf.Variable(tf.random.normal([8, 4], seed=1))
    root.variables = [root.w]
    root.trainable_variables = [root.w]
    root.__call__ = tf.function(lambda x: tf.nn.tanh(tf.matmul(x, root.w)),
                                input_signature=[tf.TensorSpec([None, 8], tf.float32)])
    tf.saved_model.save(root, path)


tf.random.set_seed(0)
encoder_dir = tempfile.mkdtemp()
export_encoder(encoder_dir)

rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x[:, :1] > 0).astype("float32")

encoder = hub.KerasLayer(encoder_dir, input_shape=(8,), trainable=False)
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=5, batch_size=32, verbose=0)
print("accuracy", [round(v, 4) for v in history.history["accuracy"]])
