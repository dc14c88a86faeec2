# expect: TL402
"""A loop that wraps its step in `tf.function` inside the loop body, so every batch gets a new Function
object that traces again (TF's warning names it: "(1) creating @tf.function repeatedly in a loop"; see
https://github.com/theislab/scCODA/issues/13 and the fix in https://github.com/N3PDF/vegasflow/pull/85).

Observed on TF 2.21 (CPU): 16 batches trace 17 times (each new Function object traces once, the first
twice while Adam creates its slots: `experimental_get_tracing_count()` summed), and TF prints "triggered tf.function retracing"."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(6)
x_train = rng.normal(size=(512, 12)).astype("float32")
y_train = rng.integers(0, 4, size=(512,))
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

model = tf.keras.Sequential([tf.keras.Input(shape=(12,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


traces = 0
for x, y in dataset:
    step_fn = tf.function(train_step)
    loss = step_fn(x, y)
    traces += step_fn.experimental_get_tracing_count()
print(f"loss {float(loss):.3f}, traces {traces}")
