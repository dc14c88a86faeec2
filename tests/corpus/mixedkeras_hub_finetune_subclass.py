# expect: TL503
"""Fine-tuning a TF Hub encoder held by a `tf.keras.Model` subclass, the workaround given in
tensorflow/tensorflow#63085 for the Sequential error ("solved the problem using the Model Subclassing
API"). It runs, but on TF 2.16+ the Keras 3 model does not track the tf_keras-based hub layer: its weights
are missing from `model.trainable_variables`, so the custom loop never updates them. The encoder is a
small SavedModel exported here.

Observed on TF 2.21 (CPU), with tf_keras 2.21 and tensorflow_hub 0.16.1 installed: the loop runs without
an error and the loss falls over 5 epochs (0.9003 -> 0.7692 in one run, 0.7933 -> 0.7185 in another: the head learns), but
`model.trainable_variables` has 2 entries (the head's kernel and bias), the encoder has 1 trainable
weight of its own, and its largest change after training is 0.0: `trainable=True` fine-tunes nothing."""
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


class Classifier(tf.keras.Model):
    def __init__(self, encoder_path):
        super().__init__()
        self.encoder = hub.KerasLayer(encoder_path, trainable=True)
        self.head = tf.keras.layers.Dense(1)

    def call(self, inputs):
        return self.head(self.encoder(inputs))


tf.random.set_seed(0)
encoder_dir = tempfile.mkdtemp()
export_encoder(encoder_dir)

rng = np.random.default_rng(2)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

model = Classifier(encoder_dir)
optimizer = tf.keras.optimizers.Adam(1e-2)
loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
model(x[:1])
before = model.encoder.trainable_weights[0].numpy().copy()

for epoch in range(5):
    losses = []
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    print("epoch", epoch, "loss", round(float(np.mean(losses)), 4))

change = np.abs(model.encoder.trainable_weights[0].numpy() - before).max()
print("model variables", len(model.trainable_variables), "encoder weights", len(model.encoder.trainable_weights),
      "largest encoder change", change)
