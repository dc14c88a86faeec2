# expect: TL602
"""A custom loop whose validation pass calls the model with `training=True` (copied from the training
step), so BatchNormalization normalises each validation batch with its own statistics (and updates the
moving averages with validation data) and Dropout drops units (tensorflow/tensorflow#33771, "Val loss
behaves strange while using custom training loop": "Setting training=False worked for getting
validation results that made sense").

Observed on TF 2.21 (CPU): over two runs the validation accuracy reported at epoch 5 is 0.775 and 0.810
(loss 0.49 and 0.41), while the same model called with `training=False` scores 0.915 and 0.920; at epoch 2
0.645 against 0.805."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
tf.random.set_seed(0)
x = rng.normal(size=(1200, 20)).astype("float32")
y = (x[:, :4].sum(axis=1) > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((x[:1000], y[:1000])).shuffle(1000).batch(32)
val_ds = tf.data.Dataset.from_tensor_slices((x[1000:], y[1000:])).batch(8)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.BatchNormalization(),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(2),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)
val_loss = tf.keras.metrics.Mean()
val_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

for epoch in range(5):
    for xb, yb in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    val_loss.reset_state()
    val_accuracy.reset_state()
    for xb, yb in val_ds:
        logits = model(xb, training=True)
        val_loss.update_state(loss_fn(yb, logits))
        val_accuracy.update_state(yb, logits)
    inference = model(x[1000:], training=False)
    true_accuracy = float(np.mean(np.argmax(inference, axis=1) == y[1000:]))
    print(f"epoch {epoch}: val loss {float(val_loss.result()):.3f} val accuracy {float(val_accuracy.result()):.3f}"
          f"  (training=False: accuracy {true_accuracy:.3f})")
