# expect: none
"""A correct loop: a small CNN with BatchNormalization on [0, 1] images, logits into
SparseCategoricalCrossentropy(from_logits=True), Adam at 1e-3, a @tf.function step over a tf.data pipeline."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(21)
rng = np.random.default_rng(21)
images = rng.uniform(0.0, 1.0, size=(256, 16, 16, 3)).astype("float32")
labels = rng.integers(0, 10, size=256)
dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(256, seed=0).batch(32)

model = keras.Sequential([
    keras.Input((16, 16, 3)),
    keras.layers.Conv2D(16, 3, padding="same", use_bias=False),
    keras.layers.BatchNormalization(),
    keras.layers.ReLU(),
    keras.layers.MaxPooling2D(),
    keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(10),
])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(3):
    for x_batch, y_batch in dataset:
        train_step(x_batch, y_batch)
