# expect: TL601
"""A loop that resets its training metric every epoch but forgets the validation metric, which a helper
fills batch by batch (JetBrains-Research/code2seq#112: "Without resetting, metrics accumulate state over
multiple epochs ... metrics accumulate worse values").

Observed on TF 2.21 (CPU): the validation accuracy the metric reports for epochs 1-8 is 0.455, 0.482,
0.493, 0.515, 0.541, 0.567, 0.590, 0.609, while the model's accuracy on the same validation set after
each epoch is 0.455, 0.510, 0.515, 0.580, 0.645, 0.695, 0.730, 0.740."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
tf.random.set_seed(1)
x = rng.normal(size=(600, 16)).astype("float32")
y = (x[:, 0] * x[:, 1] > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((x[:400], y[:400])).shuffle(400).batch(32)
val_ds = tf.data.Dataset.from_tensor_slices((x[400:], y[400:])).batch(50)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(2),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(3e-3)
train_loss = tf.keras.metrics.Mean()
val_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


def validate():
    for xb, yb in val_ds:
        val_accuracy.update_state(yb, model(xb, training=False))
    return float(val_accuracy.result())


for epoch in range(8):
    train_loss.reset_state()
    for xb, yb in train_ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_loss.update_state(loss)
    this_epoch = float(np.mean(np.argmax(model(x[400:], training=False), axis=1) == y[400:]))
    print(f"epoch {epoch}: loss {float(train_loss.result()):.3f}  val acc (metric) {validate():.3f}  "
          f"val acc (this epoch) {this_epoch:.3f}")
