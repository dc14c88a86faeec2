# expect: none
"""A correct mixed-precision loop with a LossScaleOptimizer whose first steps overflow: the scaled gradients are
not finite, so the optimizer skips those updates and lowers its scale, by design. After "LossScaleOptimizer
skips the first steps / weights do not change" (https://github.com/tensorflow/tensorflow/issues/39347) and the
TF mixed-precision guide. Issue 12 measured TL807 blaming the learning rate. On TF 2.21 CPU the gradients are
Inf at the first steps with an initial scale of 2**40. Expected: nothing above info; the report says "update
skipped: gradients not finite"."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(50)
rng = np.random.default_rng(50)
x = rng.normal(size=(256, 16)).astype("float32")
y = rng.integers(0, 4, size=256)
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(4, dtype="float32")])
keras.mixed_precision.set_global_policy("float32")
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3), initial_scale=2.0 ** 24)

for i in range(0, 256, 16):
    with tf.GradientTape() as tape:
        loss = loss_fn(y[i:i + 16], model(x[i:i + 16], training=True))
        scaled = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
