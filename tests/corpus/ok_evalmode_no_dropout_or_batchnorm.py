# expect: none
"""A validation pass that passes `training=True` to a model with neither Dropout nor BatchNormalization:
the flag changes nothing, so the numbers are right (the near miss of tensorflow/tensorflow#33771, whose
trouble came from BatchNorm).

Observed on TF 2.21 (CPU): validation accuracy 0.890, 0.950, 0.970, 0.980, identical with
`training=False`."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(8)
tf.random.set_seed(8)
x = rng.normal(size=(1100, 10)).astype("float32")
y = (x[:, 0] - x[:, 4] > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((x[:900], y[:900])).shuffle(900).batch(30)
val_ds = tf.data.Dataset.from_tensor_slices((x[900:], y[900:])).batch(20)

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(5e-3)
val_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

for epoch in range(4):
    for xb, yb in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    val_accuracy.reset_state()
    for xb, yb in val_ds:
        val_accuracy.update_state(yb, model(xb, training=True))
    same = float(np.mean(np.argmax(model(x[900:], training=False), axis=1) == y[900:]))
    print(f"epoch {epoch}: val accuracy {float(val_accuracy.result()):.3f} (training=False {same:.3f})")
