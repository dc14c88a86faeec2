"""A correct regression loop: SGD with momentum at the standard 0.1, regularization losses added,
targets shaped like the predictions. tapelint reports nothing."""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
features = rng.normal(size=(256, 4)).astype("float32")
targets = (features @ np.array([1.0, -2.0, 0.5, 3.0], dtype="float32"))[:, None]

inputs = tf.keras.Input(shape=(4,))
hidden = tf.keras.layers.Dense(32, activation="relu", kernel_regularizer=tf.keras.regularizers.l2(1e-4))(inputs)
outputs = tf.keras.layers.Dense(1)(hidden)
model = tf.keras.Model(inputs, outputs)

optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
mse = tf.keras.losses.MeanSquaredError()
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(32)

for epoch in range(3):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            predictions = model(x, training=True)
            loss = mse(y, predictions) + tf.add_n(model.losses)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(f"epoch {epoch}: loss {float(loss):.4f}")
