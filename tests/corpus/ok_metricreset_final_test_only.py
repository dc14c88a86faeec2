# expect: none
"""Training with per-epoch numbers computed by hand, and a test metric updated once after training and
read at the end: nothing accumulates across epochs (the correct counterpart of keras-team/keras-io#155's
per-epoch metric reset, where no metric is reported per epoch at all).

Observed on TF 2.21 (CPU): mean loss per epoch 0.657, 0.439, 0.316, 0.239, 0.188; test accuracy 0.945."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
tf.random.set_seed(5)
x = rng.normal(size=(800, 10)).astype("float32")
y = (x[:, :2].sum(axis=1) > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((x[:600], y[:600])).shuffle(600).batch(50)
test_ds = tf.data.Dataset.from_tensor_slices((x[600:], y[600:])).batch(100)

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(5e-3)
test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

for epoch in range(5):
    losses = []
    for xb, yb in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    print(f"epoch {epoch}: mean loss {np.mean(losses):.3f}")

for xb, yb in test_ds:
    test_accuracy.update_state(yb, model(xb, training=False))
print("test accuracy", float(test_accuracy.result()))
