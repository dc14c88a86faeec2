# expect: none
"""A correct step that asks one persistent tape for two gradients before one update: the loss's and an input-
gradient penalty's (a WGAN-GP or Jacobian-regulariser style), summed, then applied once. After "Using a
persistent GradientTape to compute two gradients" (Stack Overflow 56916313) and the TF guide's persistent-tape
section. Issue 12 measured TL807 ("never applied") and TL802 at step 2 on this loop. Expected: nothing."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(4)
x = rng.normal(size=(64, 6)).astype("float32")
y = rng.integers(0, 3, size=64)
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(3)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)

for step in range(20):
    with tf.GradientTape(persistent=True) as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        penalty = 1e-3 * tf.add_n([tf.reduce_sum(tf.square(w)) for w in model.trainable_variables])
    loss_grads = tape.gradient(loss, model.trainable_variables)
    penalty_grads = tape.gradient(penalty, model.trainable_variables)
    del tape
    grads = [g + p for g, p in zip(loss_grads, penalty_grads)]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
