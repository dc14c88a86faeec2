"""Seed 2, small: a hand-built VGG-style stack (he_normal kernels, no BatchNorm) with a softmax head and
CategoricalCrossentropy() on probabilities, Adam at 0.001, `model(x)` called without `training=True`.
A Dropout layer in the classifier shows why the missing flag matters."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(1)
rng = np.random.default_rng(1)
x_train = rng.uniform(0.0, 1.0, size=(64, 16, 16, 3)).astype("float32")
y_train = np.eye(10, dtype="float32")[rng.integers(0, 10, size=64)]


def conv(filters):
    return keras.layers.Conv2D(filters, 3, padding="same", activation="relu", kernel_initializer="he_normal")


model = keras.Sequential([
    keras.Input((16, 16, 3)),
    conv(16), conv(16), keras.layers.MaxPooling2D(),
    conv(32), conv(32), keras.layers.MaxPooling2D(),
    keras.layers.Flatten(),
    keras.layers.Dense(128, activation="relu", kernel_initializer="he_normal"),
    keras.layers.Dropout(0.5),
    keras.layers.Dense(10, activation="softmax"),
])
optimizer = keras.optimizers.Adam(learning_rate=0.001, epsilon=1e-08)
loss_fn = keras.losses.CategoricalCrossentropy()
train_acc_metric = keras.metrics.CategoricalAccuracy()

dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)
for epoch in range(3):
    for x_batch, y_batch in dataset:
        with tf.GradientTape() as tape:
            logits = model(x_batch)
            loss_value = loss_fn(y_batch, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y_batch[0], logits[0][:-1])
    train_acc_metric.reset_state()
# expect: TL812
