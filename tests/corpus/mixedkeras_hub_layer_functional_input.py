# expect: TL503
"""A TF Hub feature extractor applied to a `tf.keras.Input` in the functional API, the fix suggested for
the Sequential error in mrdbourke/zero-to-mastery-ml#125 (`x = hub.KerasLayer(MODEL_URL)(inputs)`) and the
`create_model` of tensorflow/tensorflow#72497. On TF 2.16+ the input is a Keras 3 KerasTensor, which the
tf_keras-based hub layer cannot take. The encoder is a small SavedModel exported here.

Observed on TF 2.21 (CPU), with tf_keras 2.21 and tensorflow_hub 0.16.1 installed: the call
`feature_extractor(inputs)` raises `TypeError: Exception encountered when calling layer 'feature_extractor'
(type KerasLayer). Binding inputs to tf.function failed due to `A KerasTensor cannot be used as input to
a TensorFlow function. ...``; no model is built."""
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


def create_model(encoder_path, num_classes=3):
    feature_extractor = hub.KerasLayer(encoder_path, trainable=False, name="feature_extractor")
    inputs = tf.keras.Input(shape=(8,))
    features = feature_extractor(inputs)
    outputs = tf.keras.layers.Dense(num_classes, activation="softmax")(features)
    return tf.keras.Model(inputs, outputs)


tf.random.set_seed(0)
encoder_dir = tempfile.mkdtemp()
export_encoder(encoder_dir)

rng = np.random.default_rng(1)
x = rng.normal(size=(300, 8)).astype("float32")
y = rng.integers(0, 3, size=(300,))

model = create_model(encoder_dir)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
print("loss", [round(v, 4) for v in history.history["loss"]])
