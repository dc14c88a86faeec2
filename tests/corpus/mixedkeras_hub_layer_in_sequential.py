# expect: TL503
"""Transfer learning with a TF Hub encoder put into a `tf.keras.Sequential` (the code of
tensorflow/tensorflow#65419 and tensorflow/hub#920: "Only instances of `keras.Layer` can be added to a
Sequential model"). On TF 2.16+ `tf.keras` is Keras 3 while `hub.KerasLayer` subclasses tf_keras' Layer.
The encoder is a small SavedModel exported here, since no model hub is reachable.

Observed on TF 2.21 (CPU), with tf_keras 2.21 and tensorflow_hub 0.16.1 installed: building the model
raises `ValueError: Only instances of `keras.Layer` can be added to a Sequential model. Received:
<tensorflow_hub.keras_layer.KerasLayer object at 0x...> (of type <class
'tensorflow_hub.keras_layer.KerasLayer'>)`; nothing trains."""
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
history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
print("loss", [round(v, 4) for v in history.history["loss"]])
