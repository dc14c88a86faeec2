# expect: TL502
"""A regression model with a custom noise layer whose strength is passed positionally in the training loop,
`noise(features, 0.1)`, as Keras 2 allowed for any `call` argument (a call-signature change of Keras 3;
see keras-team/keras#18467, the tf.keras <> Keras 3 incompatibilities).

Observed on TF 2.21 / Keras 3.15 (CPU): the first step raises ValueError: Only input tensors may be
passed as positional arguments. The following argument value should be passed as a keyword argument:
0.1 (of type <class 'float'>)."""
import numpy as np
import tensorflow as tf


class AddNoise(tf.keras.layers.Layer):
    def call(self, inputs, stddev):
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
        predictions = model(noise(features, 0.1), training=True)
        loss = tf.reduce_mean(tf.square(predictions - targets))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(epoch, float(loss))
