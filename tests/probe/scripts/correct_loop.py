"""A correct loop: scaled inputs, logits with from_logits=True, training=True, Adam at 1e-3, a tf.function step."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(6)
rng = np.random.default_rng(6)
x = rng.normal(size=(64, 10)).astype("float32")
y = rng.integers(0, 3, size=64)
model = keras.Sequential([
    keras.Input((10,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dropout(0.2),
    keras.layers.Dense(3),
])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(5):
    train_step(x, y)
print("trained")
# expect: none
