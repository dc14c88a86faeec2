# expect: none
"""A correct loop that accumulates gradients over 4 micro-batches and applies them every 4th step (large effective
batch on a small device). After "How to accumulate gradients in TensorFlow 2" (Stack Overflow 59893850) and
https://github.com/keras-team/keras/issues/17429. Issue 12 measured TL807 ("never applied") on such a loop, even
with --steps 4. Expected: nothing at --steps 3 and --steps 10."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

ACCUMULATE = 4
rng = np.random.default_rng(5)
x = rng.normal(size=(512, 10)).astype("float32")
y = rng.integers(0, 4, size=512)
model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
accumulated = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

for i in range(0, len(x), 16):
    with tf.GradientTape() as tape:
        loss = loss_fn(y[i:i + 16], model(x[i:i + 16], training=True)) / ACCUMULATE
    grads = tape.gradient(loss, model.trainable_variables)
    for total, grad in zip(accumulated, grads):
        total.assign_add(grad)
    if (i // 16 + 1) % ACCUMULATE == 0:
        optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
        for total in accumulated:
            total.assign(tf.zeros_like(total))
