# expect: none
"""Binary classifier: one sigmoid unit, binary cross-entropy, custom loop and a hand-written metric."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
features = rng.normal(size=(4000, 16)).astype("float32")
targets = (features[:, :3].sum(axis=1, keepdims=True) > 0).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(4000).batch(128)

model = tf.keras.Sequential([
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
bce = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam(learning_rate=3e-4)
auc = tf.keras.metrics.AUC()
binary_accuracy = tf.keras.metrics.BinaryAccuracy()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        probabilities = model(x, training=True)
        loss = bce(y, probabilities)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    auc.update_state(y, probabilities)
    binary_accuracy.update_state(y, probabilities)
    return loss


for epoch in range(15):
    auc.reset_state()
    binary_accuracy.reset_state()
    for x_batch, y_batch in dataset:
        loss = train_step(x_batch, y_batch)
    print(epoch, float(loss), float(auc.result()), float(binary_accuracy.result()))
