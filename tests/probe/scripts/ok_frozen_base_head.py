# expect: none
"""A correct transfer-learning loop (seed 1 done right): a frozen conv base, inputs scaled by a Rescaling layer,
a Dense(64, relu) head and a 2-class logit head, from_logits=True, Adam at 1e-4, batches of 16, training=False
for the frozen base."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(27)
rng = np.random.default_rng(27)
images = rng.uniform(0.0, 255.0, size=(64, 24, 24, 3)).astype("float32")
labels = rng.integers(0, 2, size=64)

base = keras.Sequential([
    keras.Input((24, 24, 3)),
    keras.layers.Rescaling(1.0 / 255),
    keras.layers.Conv2D(32, 3, activation="relu"),
    keras.layers.MaxPooling2D(),
    keras.layers.Conv2D(64, 3, activation="relu"),
])
base.trainable = False
inputs = keras.Input((24, 24, 3))
features = base(inputs, training=False)
pooled = keras.layers.GlobalAveragePooling2D()(features)
hidden = keras.layers.Dense(64, activation="relu")(pooled)
outputs = keras.layers.Dense(2)(hidden)
model = keras.Model(inputs, outputs)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-4)

for epoch in range(5):
    for start in range(0, 64, 16):
        with tf.GradientTape() as tape:
            logits = model(images[start:start + 16], training=True)
            loss = loss_fn(labels[start:start + 16], logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
