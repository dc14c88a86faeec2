# expect: none
"""Mixed precision with tf_keras (TF <= 2.15 API): get_scaled_loss / get_unscaled_gradients.

TF_USE_LEGACY_KERAS makes `tf.keras` the Keras 2 package (tf_keras) on TF >= 2.16, where these methods
still exist; without it they raise AttributeError on Keras 3 (TL502)."""
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf
from tensorflow.keras import mixed_precision

mixed_precision.set_global_policy("mixed_float16")

model = tf.keras.Sequential([
    tf.keras.layers.Dense(512, activation="relu", input_shape=(64,)),
    tf.keras.layers.Dense(1, dtype="float32"),
])
optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-3))
mse = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        y_pred = model(x, training=True)
        loss = mse(y, y_pred)
        scaled_loss = optimizer.get_scaled_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    gradients = optimizer.get_unscaled_gradients(scaled_gradients)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


x = tf.random.normal((1024, 64))
y = tf.reduce_sum(x[:, :4], axis=1, keepdims=True)
for step in range(200):
    loss = train_step(x, y)
