# expect: none
"""Near miss of TL307: residual blocks whose branch ends in a zero-initialized `Dense` (the "zero-init the
last layer of each residual branch" trick), so each block starts as the identity. The zero layer's output
is added to the skip connection; the next layer sees `x + 0`, not identical units (contrast with the
zero-weight pitfall of wagonhelm/NaNmnist#2).

Observed on TF 2.21 (CPU): MSE 2.90 -> 0.009 in 200 steps; the zero-initialized kernel moves away from 0
(max |w| 0.31)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(4)
x = rng.uniform(-2, 2, size=(512, 4)).astype("float32")
y = (np.sin(x[:, :1]) + x[:, 1:2] * x[:, 2:3] - 0.5 * x[:, 3:]).astype("float32")


def residual_block(h, width):
    branch = tf.keras.layers.Dense(width, activation="relu")(h)
    branch = tf.keras.layers.Dense(width, kernel_initializer="zeros")(branch)
    return tf.keras.layers.Add()([h, branch])


inputs = tf.keras.Input((4,))
h = tf.keras.layers.Dense(32, activation="relu")(inputs)
h = residual_block(h, 32)
h = residual_block(h, 32)
outputs = tf.keras.layers.Dense(1)(h)
model = tf.keras.Model(inputs, outputs)
optimizer = tf.keras.optimizers.Adam(3e-3)

for step in range(200):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = tf.reduce_mean(tf.square(y - prediction))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 50 == 0 or step == 199:
        print(step, round(float(loss), 3))
zero_init = [layer for layer in model.layers if isinstance(layer, tf.keras.layers.Dense)][2]
print("formerly zero kernel max |w|:", float(np.abs(zero_init.kernel.numpy()).max()))
