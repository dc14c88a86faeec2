# expect: none
"""A correct loop: a functional model with a shared trunk and two heads (10-class logits and a regression
value), a weighted sum of two Keras losses, SGD with momentum, eager steps."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(26)
rng = np.random.default_rng(26)
x = rng.normal(size=(64, 12)).astype("float32")
classes = rng.integers(0, 10, size=64)
values = rng.normal(size=(64, 1)).astype("float32")

inputs = keras.Input((12,))
trunk = keras.layers.Dense(32, activation="relu")(inputs)
class_logits = keras.layers.Dense(10, name="classes")(trunk)
value = keras.layers.Dense(1, name="value")(trunk)
model = keras.Model(inputs, [class_logits, value])
class_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
value_loss = keras.losses.MeanSquaredError()
optimizer = keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)

for step in range(20):
    with tf.GradientTape() as tape:
        predicted_classes, predicted_value = model(x, training=True)
        loss = class_loss(classes, predicted_classes) + 0.5 * value_loss(values, predicted_value)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
