# expect: TL003
"""Regression loop that runs the forward pass before opening the tape."""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Dense(32, activation="relu", input_shape=(8,)),
    tf.keras.layers.Dense(1),
])
optimizer = tf.keras.optimizers.Adam(1e-3)
mse = tf.keras.losses.MeanSquaredError()

x_all = np.random.rand(1024, 8).astype("float32")
y_all = x_all.sum(axis=1, keepdims=True)
dataset = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(32)

for epoch in range(10):
    for x_batch, y_batch in dataset:
        y_pred = model(x_batch, training=True)
        with tf.GradientTape() as tape:
            loss = mse(y_batch, y_pred)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(epoch, float(loss))
