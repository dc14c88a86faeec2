# expect: TL603
"""A step loop that draws each batch with `next(iter(train_ds))`: every step builds a new iterator and
reads the first batch again (the bug reported in skhu101/GM-NAS#4: "iter(train_queue) is initialized
every batch, it grabs the first sample, then reinitializes"; awslabs/gluonts#281: "`next(iter(train_ds))`
always gives you the first element").

Observed on TF 2.21 (CPU): the loop sees 1 of 64 distinct batches in three epochs; its batch loss
falls to 0.0014 while the accuracy on the whole set stays at 0.797-0.802. With one iterator made before
the loop (`iter(train_ds.repeat())`) it sees all 64 batches and reaches 0.873, 0.933, 0.950."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
tf.random.set_seed(0)
x = rng.normal(size=(2048, 10)).astype("float32")
y = (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-2)
seen = set()

for epoch in range(3):
    for step in range(len(x) // 32):
        xb, yb = next(iter(train_ds))
        seen.add(float(xb[0, 0]))
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy = float(np.mean(np.argmax(model(x, training=False), axis=1) == y))
    print(f"epoch {epoch}: last batch loss {float(loss):.4f}  accuracy on all data {accuracy:.3f}  "
          f"distinct batches seen {len(seen)} of {len(x) // 32}")
