# expect: TL306
"""A regression loop that saves `model.trainable_variables` right after building a Sequential model with no
input shape (the empty list of https://github.com/tensorflow/tensorflow/issues/26948: "The Layers aren't
built yet"), then differentiates and applies that saved list.

Observed on TF 2.21 (CPU): the saved list has 0 variables (the model has 4 after its first call);
`tape.gradient` returns [] and `apply_gradients` raises `ValueError: not enough values to unpack
(expected 2, got 0)` at the first step."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)

rng = np.random.default_rng(0)
x_train = rng.normal(size=(512, 8)).astype("float32")
y_train = x_train.sum(axis=1, keepdims=True).astype("float32")

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
variables = model.trainable_variables
print("saved list:", len(variables), "variables")
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.MeanSquaredError()
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)

for epoch in range(3):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
    print(epoch, float(loss), "model has", len(model.trainable_variables), "saved list has", len(variables))
