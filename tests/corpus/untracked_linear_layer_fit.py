# expect: TL305
"""A linear regression layer written with raw `tf.Variable`s (the `Linear` layer of the Keras guides before
Keras 3, as in https://github.com/tensorflow/tensorflow/issues/38211 and
https://github.com/keras-team/keras/issues/16797: "untracked variables are not trained"), trained with fit.

Observed on TF 2.21 (CPU): `model.trainable_variables` is [], fit warns "The model does not have any
trainable weights" and the loss stays at 35.09 in every epoch (35.09, 35.09, 35.09, 35.09, 35.09)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 3)).astype("float32")
y_train = (x_train @ np.array([[2.0], [-3.0], [1.0]], "float32") + 5.0).astype("float32")


class Linear(tf.keras.layers.Layer):
    def __init__(self, units, input_dim):
        super().__init__()
        w_init = tf.random_normal_initializer()
        self.w = tf.Variable(w_init(shape=(input_dim, units), dtype="float32"), trainable=True)
        self.b = tf.Variable(tf.zeros((units,)), trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


inputs = tf.keras.Input((3,))
model = tf.keras.Model(inputs, Linear(1, 3)(inputs))
model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
print("trainable variables:", len(model.trainable_variables))
history = model.fit(x_train, y_train, epochs=5, batch_size=32, verbose=0)
print([round(v, 2) for v in history.history["loss"]])
