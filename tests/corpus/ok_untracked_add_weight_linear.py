# expect: none
"""The linear layer of untracked_linear_layer_fit.py written with `add_weight`, as the Keras guide does
(https://keras.io/guides/making_new_layers_and_models_via_subclassing; the fix in
https://github.com/keras-team/keras/issues/16797: "If instead of tf.Variable you use self.add_weight, it
works in every case").

Observed on TF 2.21 (CPU): 2 trainable variables; the loss falls 19.99, 4.46, 0.99, 0.22, 0.05 over 5 epochs
(the tf.Variable version stays at 35.09)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 3)).astype("float32")
y_train = (x_train @ np.array([[2.0], [-3.0], [1.0]], "float32") + 5.0).astype("float32")


class Linear(tf.keras.layers.Layer):
    def __init__(self, units, input_dim):
        super().__init__()
        self.w = self.add_weight(shape=(input_dim, units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


inputs = tf.keras.Input((3,))
model = tf.keras.Model(inputs, Linear(1, 3)(inputs))
model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
print("trainable variables:", len(model.trainable_variables))
history = model.fit(x_train, y_train, epochs=5, batch_size=32, verbose=0)
print([round(v, 2) for v in history.history["loss"]])
