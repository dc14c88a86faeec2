# expect: none
"""Near miss of TL307: only the output head starts at zero (`Dense(1, kernel_initializer="zeros")`), the
common, correct trick that makes the first predictions neutral. Hidden units still differ through their
random incoming weights (the symmetry problem of wagonhelm/NaNmnist#2 needs identical hidden units).

Observed on TF 2.21 (CPU): loss 0.693 -> 0.143 in 200 steps, accuracy 0.99."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(512, 2)).astype("float32")
y = (np.sum(x ** 2, axis=1) > 1.4).astype("float32")[:, None]

model = tf.keras.Sequential([
    tf.keras.Input((2,)),
    tf.keras.layers.Dense(64, activation="relu", bias_initializer="zeros"),
    tf.keras.layers.Dense(1, kernel_initializer="zeros"),
])
optimizer = tf.keras.optimizers.Adam(1e-2)
loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

for step in range(200):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 50 == 0 or step == 199:
        accuracy = float(np.mean((logits.numpy() > 0) == y))
        print(step, round(float(loss), 3), "accuracy", round(accuracy, 3))
