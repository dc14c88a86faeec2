# expect: none
"""One traced step for training and validation, switched by a Python bool (`training=True/False`):
two values, so two traces, the use the TF guide recommends for Python arguments that select a mode
(https://www.tensorflow.org/guide/function#controlling_retracing; the retracing reports such as
https://github.com/microsoft/AirSim-Drone-Racing-VAE-Imitation/issues/10 are about values that change
every call).

Observed on TF 2.21 (CPU): 3 epochs, 3 traces in all (`experimental_get_tracing_count()`: one per flag
value, plus one more on the first call while Adam creates its slots); validation loss 1.32, 0.15, 0.17."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(7)
x_all = rng.normal(size=(600, 8)).astype("float32")
y_all = (x_all @ rng.normal(size=(8, 1))).astype("float32")
train = tf.data.Dataset.from_tensor_slices((x_all[:500], y_all[:500])).batch(50)
val = tf.data.Dataset.from_tensor_slices((x_all[500:], y_all[500:])).batch(50)

model = tf.keras.Sequential([tf.keras.Input(shape=(8,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dropout(0.1), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-2)


@tf.function
def run_batch(x, y, training):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - model(x, training=training)))
    if training:
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    for x, y in train:
        run_batch(x, y, True)
    val_losses = [float(run_batch(x, y, False)) for x, y in val]
    print(f"epoch {epoch}: validation loss {np.mean(val_losses):.3f}")
print("traces", run_batch.experimental_get_tracing_count())
