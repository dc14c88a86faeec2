# expect: none
"""Fine-tuning a TF Hub encoder with everything in tf_keras: `import tf_keras` for the model, its
layers and its optimizer, so the hub layer (a tf_keras Layer) is tracked and trained (the package split
behind tensorflow/tensorflow#63085, done consistently). The encoder is a small SavedModel exported here.

Observed on TF 2.21 (CPU), with tf_keras 2.21 and tensorflow_hub 0.16.1 installed: the model tracks 3
trainable variables (the encoder's and the head's two), the loss falls over 5 epochs (0.6836 -> 0.4962 and
0.9276 -> 0.5698 in two runs) and the encoder's weight moves by up to 0.38-0.40."""
import tempfile

import numpy as np
import tensorflow as tf
import tensorflow_hub as hub
import tf_keras


def export_encoder(path):
    root = tf.train.Checkpoint()
    root.w = tf.Variable(tf.random.normal([8, 4], seed=1))
    root.variables = [root.w]
    root.trainable_variables = [root.w]
    root.__call__ = tf.function(lambda x: tf.nn.tanh(tf.matmul(x, root.w)),
                                input_signature=[tf.TensorSpec([None, 8], tf.float32)])
    tf.saved_model.save(root, path)


class Classifier(tf_keras.Model):
    def __init__(self, encoder_path):
        super().__init__()
        self.encoder = hub.KerasLayer(encoder_path, trainable=True)
        self.head = tf_keras.layers.Dense(1)

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
optimizer = tf_keras.optimizers.Adam(1e-2)
loss_fn = tf_keras.losses.BinaryCrossentropy(from_logits=True)
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
print("model variables", len(model.trainable_variables), "largest encoder change", change)
