# expect: none
"""A TF Hub encoder run on its own to compute embeddings, which a Keras 3 model then trains on as
numpy data: the hub layer is never put into the Keras 3 model (the embedding workflow behind the
text_classification_with_hub failure of tensorflow/tensorflow#76042, without the mix). The encoder is a
small SavedModel exported here.

Observed on TF 2.21 (CPU), with tf_keras 2.21 and tensorflow_hub 0.16.1 installed: the embeddings have
shape (256, 4) and the Keras 3 head trains; accuracy rises 0.6484 -> 0.8711 over 8 epochs
(0.6602 -> 0.8672 in a second run)."""
import tempfile

import keras
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

rng = np.random.default_rng(4)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x[:, :1] > 0).astype("float32")

encoder = hub.KerasLayer(encoder_dir)
embeddings = encoder(x).numpy()
print("embeddings", embeddings.shape)

head = keras.Sequential([
    keras.Input(shape=(4,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
head.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
history = head.fit(embeddings, y, epochs=8, batch_size=32, verbose=0)
print("accuracy", [round(v, 4) for v in history.history["accuracy"]])
