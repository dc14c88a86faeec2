# expect: none
"""The fixed form of the validation loop of tensorflow/tensorflow#33771: `training=True` in the step,
`training=False` in the validation pass.

Observed on TF 2.21 (CPU): validation accuracy rises to 0.755, 0.850, 0.880, 0.900 over epochs 2-5."""
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
val_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

for epoch in range(5):
    for xb, yb in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    val_accuracy.reset_state()
    for xb, yb in val_ds:
        val_accuracy.update_state(yb, model(xb, training=False))
    print(f"epoch {epoch}: val accuracy {float(val_accuracy.result()):.3f}")
