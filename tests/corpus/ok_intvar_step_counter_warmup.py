# expect: none
"""A classifier trained with a learning-rate warm-up driven by an int32 step counter (`tf.Variable(0)`):
the counter is read and incremented but never differentiated, so its integer dtype is right (the near
miss of the integer-variable reports in keras-team/keras#20058).

Observed on TF 2.21 (CPU): the loss falls from 1.55 to 0.28 over 60 steps; the counter ends at 60."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
features = rng.normal(size=(512, 10)).astype("float32")
labels = (features[:, 0] + features[:, 1] > 0).astype("int32") + 2 * (features[:, 2] > 0).astype("int32")

model = tf.keras.Sequential([
    tf.keras.Input(shape=(10,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(4),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(0.0)
step = tf.Variable(0)
WARMUP = 20
BASE_LR = 0.3


@tf.function
def train_step(x, y):
    warm = tf.minimum(1.0, tf.cast(step + 1, tf.float32) / WARMUP)
    optimizer.learning_rate.assign(BASE_LR * warm)
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    step.assign_add(1)
    return loss


for i in range(60):
    loss = train_step(features, labels)
    if i % 20 == 0 or i == 59:
        print(i, float(loss))
print("steps", int(step.numpy()))
