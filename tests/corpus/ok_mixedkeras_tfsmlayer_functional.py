# expect: none
"""The Keras 3 way to reuse a SavedModel: `keras.layers.TFSMLayer` in a functional model, as Keras 3's own
error message and the migration guide advise (https://cocalc.com/github/keras-team/keras-io/blob/master/guides/migrating_to_keras_3.py;
the hub KerasLayer code it replaces is tensorflow/tensorflow#65419). The encoder is a small SavedModel
exported here.

Observed on TF 2.21 (CPU), with tensorflow_hub installed but unused by the model: the model builds and
trains with the SavedModel frozen (`trainable=False`); accuracy rises 0.7031 -> 0.8633 over 8 epochs
(0.7344 -> 0.8477 in a second run). Left trainable, `fit` fails in the optimizer: `ValueError:
'Variable:0_momentum' is not a valid scope name` (the exported variable has no name)."""
import tempfile

import keras
import numpy as np
import tensorflow as tf
import tensorflow_hub as hub  # noqa: F401  (the older code path this program replaces)


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

rng = np.random.default_rng(5)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x[:, :1] > 0).astype("float32")

encoder = keras.layers.TFSMLayer(encoder_dir, call_endpoint="serving_default", trainable=False)
inputs = keras.Input(shape=(8,))
features = encoder(inputs)["output_0"]
hidden = keras.layers.Dense(16, activation="relu")(features)
outputs = keras.layers.Dense(1, activation="sigmoid")(hidden)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
print("accuracy", [round(v, 4) for v in history.history["accuracy"]])
