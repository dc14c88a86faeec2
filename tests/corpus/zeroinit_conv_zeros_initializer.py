# expect: TL307
"""A small CNN built with `model.add`, whose first convolution uses `tf.zeros_initializer()` (the zero-weight
pitfall of wagonhelm/NaNmnist#2, and of tensorflow/tensorflow#52175 where zero weights gave zero gradients).

Observed on TF 2.21 (CPU): the convolution outputs 0 through its ReLU, so it and its bias get exactly zero
gradients (conv max |grad| 0.0 at every step); only the Dense head's bias learns: loss 2.303 -> 2.289 over
60 steps, accuracy 0.125 on 10 classes. With the default initializer: loss 0.012, accuracy 1.0."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
images = rng.normal(size=(256, 12, 12, 1)).astype("float32")
labels = rng.integers(0, 10, size=(256,))
images[np.arange(256), labels, labels % 12, 0] += 4.0  # a class-dependent bright pixel

model = tf.keras.Sequential()
model.add(tf.keras.Input((12, 12, 1)))
model.add(tf.keras.layers.Conv2D(8, 3, activation="relu", kernel_initializer=tf.zeros_initializer()))
model.add(tf.keras.layers.MaxPooling2D())
model.add(tf.keras.layers.Flatten())
model.add(tf.keras.layers.Dense(10))
optimizer = tf.keras.optimizers.Adam(1e-2)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

for step in range(60):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 20 == 0 or step == 59:
        accuracy = float(np.mean(np.argmax(logits.numpy(), axis=1) == labels))
        print(step, round(float(loss), 3), "conv max |grad|", float(tf.reduce_max(tf.abs(grads[0]))),
              "accuracy", round(accuracy, 3))
