# expect: none
"""The corrected form of a traced train step that built its accuracy metric inside (see
https://github.com/tensorflow/tensorflow/issues/26812): the metric is created once, outside the
tf.function, and reset at the start of every epoch.

Observed on TF 2.21 (CPU): no error; loss 1.18, 1.09, 1.01 and accuracy 0.41, 0.43, 0.45 over the
three epochs (a fresh count each epoch)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 20)).astype("float32")
y_train = (x_train[:, :5].sum(axis=1) > 0).astype("int32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(20,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(2),
])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(x, y):
    per_batch_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = per_batch_loss(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_accuracy.update_state(y, logits)
    return loss


for epoch in range(3):
    train_accuracy.reset_state()
    for x, y in dataset:
        loss = train_step(x, y)
    print(f"epoch {epoch}: loss {float(loss):.4f} accuracy {float(train_accuracy.result()):.3f}")
