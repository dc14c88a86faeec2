# expect: none
"""A loop that builds its metrics anew inside each epoch's helper, the other correct way to get
per-epoch numbers (JetBrains-Research/code2seq#112 discusses resetting vs. accumulating metrics).

Observed on TF 2.21 (CPU): per-epoch loss 0.712 -> 0.366 and accuracy 0.553 -> 0.914 over six epochs, each
from that epoch's batches only."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(4)
tf.random.set_seed(4)
x = rng.normal(size=(640, 12)).astype("float32")
y = (x[:, 0] - x[:, 3] > 0).astype("float32")[:, None]
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(640).batch(64)

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(0.1)


def run_epoch():
    mean_loss = tf.keras.metrics.Mean()
    accuracy = tf.keras.metrics.BinaryAccuracy(threshold=0.0)
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            logits = model(xb, training=True)
            loss = loss_fn(yb, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        mean_loss.update_state(loss)
        accuracy.update_state(yb, logits)
    return float(mean_loss.result()), float(accuracy.result())


for epoch in range(6):
    loss_value, acc_value = run_epoch()
    print(f"epoch {epoch}: loss {loss_value:.3f} accuracy {acc_value:.3f}")
