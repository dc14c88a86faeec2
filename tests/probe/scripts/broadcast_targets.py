"""A custom Keras loss that does not align ranks: targets of shape (B,) against predictions of (B, 1)."""
import numpy as np
import tensorflow as tf
from tensorflow import keras


class SquaredError(keras.losses.Loss):
    def call(self, y_true, y_pred):
        return keras.ops.mean(keras.ops.square(y_true - y_pred), axis=-1)


rng = np.random.default_rng(9)
x = rng.normal(size=(16, 3)).astype("float32")
y = x.sum(axis=1).astype("float32")  # shape (16,)
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
loss_fn = SquaredError()
optimizer = keras.optimizers.SGD(learning_rate=0.05)

for step in range(20):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
# expect: TL814
