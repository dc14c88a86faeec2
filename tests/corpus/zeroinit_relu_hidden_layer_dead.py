# expect: TL307
"""A small binary classifier whose hidden layer was zero-initialized (`kernel_initializer="zeros"`), trained
in a custom loop: the pitfall of wagonhelm/NaNmnist#2 ("Highly improper way of weight initialization").

Observed on TF 2.21 (CPU): with ReLU and Keras' zero bias the hidden layer outputs 0 and gets exactly zero
gradients; the loss stays at 0.693 -> 0.690 (only the head's bias learns) and accuracy at the base rate
(0.539) for all 200 steps, and the hidden kernel is still all zeros at the end (max |w| 0.0). With the default
initializer the same loop reaches loss 0.036, accuracy 0.996."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(512, 2)).astype("float32")
y = (np.sum(x ** 2, axis=1) > 1.4).astype("float32")[:, None]

model = tf.keras.Sequential([
    tf.keras.Input((2,)),
    tf.keras.layers.Dense(64, activation="relu", kernel_initializer="zeros"),
    tf.keras.layers.Dense(1),
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
print("hidden kernel max |w|:", float(np.abs(model.layers[0].kernel.numpy()).max()))
