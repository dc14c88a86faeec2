# expect: TL305
"""A learnable-slope activation whose slope is a raw `tf.Variable` created in `build` (non-trainable
`tf.Variable`s of a custom layer missing from `Model.variables`: https://github.com/tensorflow/tensorflow/issues/46325),
in a Sequential model trained with fit.

Observed on TF 2.21 (CPU): the Dense layers train (loss 1.32 -> 0.76 over 5 epochs), but the model has 4
trainable variables, not 5, and the slope stays at its initial 0.25."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
x_train = rng.normal(size=(512, 4)).astype("float32")
y_train = np.abs(x_train).sum(axis=1, keepdims=True).astype("float32") - 3.0


class LearnedLeakyReLU(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.alpha = tf.Variable(0.25, name="alpha")

    def call(self, x):
        return tf.maximum(x, 0.0) + self.alpha * tf.minimum(x, 0.0)


act = LearnedLeakyReLU()
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(16), act, tf.keras.layers.Dense(1)])
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(x_train, y_train, epochs=5, batch_size=64, verbose=0)
print([round(v, 2) for v in history.history["loss"]], "trainable", len(model.trainable_variables),
      "alpha", float(act.alpha))
