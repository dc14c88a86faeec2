# expect: none
"""The noise-layer regression loop of k3api_positional_layer_argument.py with the layer's argument passed by
keyword, `noise(features, stddev=0.1)`, and `None` passed positionally to a layer that accepts it (Keras 3
takes only tensors, and None, positionally; see keras-team/keras#18467).

Observed on TF 2.21 / Keras 3.15 (CPU): it trains; the loss goes 4.96, 4.89, 4.78 over three steps."""
import numpy as np
import tensorflow as tf


class AddNoise(tf.keras.layers.Layer):
    def call(self, inputs, offset=None, stddev=0.0):
        if offset is not None:
            inputs = inputs + offset
        return inputs + tf.random.normal(tf.shape(inputs), stddev=stddev)


rng = np.random.default_rng(1)
features = rng.normal(size=(64, 20)).astype("float32")
targets = features[:, :1] * 2.0

noise = AddNoise()
model = tf.keras.Sequential([tf.keras.Input((20,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)

for epoch in range(3):
    with tf.GradientTape() as tape:
        predictions = model(noise(features, None, stddev=0.1), training=True)
        loss = tf.reduce_mean(tf.square(predictions - targets))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(epoch, float(loss))
