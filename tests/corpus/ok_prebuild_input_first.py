# expect: none
"""prebuild_sequential_vars_saved.py with a `keras.Input` first in the Sequential model: the model is built
at construction, so the saved list holds the real variables (the first fix suggested in
https://github.com/tensorflow/tensorflow/issues/26948: "pass an input_shape to Sequential").

Observed on TF 2.21 (CPU): the saved list has 4 variables; the last-batch loss is 4.65, 1.58, 0.38 over 3 epochs."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)

rng = np.random.default_rng(0)
x_train = rng.normal(size=(512, 8)).astype("float32")
y_train = x_train.sum(axis=1, keepdims=True).astype("float32")

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(1)])
variables = model.trainable_variables
print("saved list:", len(variables), "variables")
optimizer = tf.keras.optimizers.Adam(1e-2)
loss_fn = tf.keras.losses.MeanSquaredError()
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)

for epoch in range(3):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
    print(epoch, float(loss))
