# expect: TL102
"""A binary classifier whose output unit is a `tanh`, trained in a custom loop with
`BinaryCrossentropy()` (the question https://datascience.stackexchange.com/questions/57738/can-tanh-be-used-as-an-output-for-a-binary-classifier
and https://stats.stackexchange.com/questions/329821/can-i-use-tanh-activation-function-in-the-output-layer-for-binary-classification:
"it's not clear how you're computing cross-entropy loss ... an artifact of clipping").

Observed on TF 2.21 (CPU): the loss starts at 8.1 (the tanh outputs at or below 0 are clipped to 1e-7 and
cost 16.1 each) and ends at 0.17 after 60 steps, accuracy 0.953; the predictions span [-1.0, 1.0] and 35%
of them are at or below 0, where the loss passes no gradient. The same loop with a sigmoid output starts at
0.84, ends at 0.08, accuracy 0.99, every prediction in [0, 1]."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
features = rng.normal(size=(512, 10)).astype("float32")
labels = (features @ rng.normal(size=(10, 1)) > 0).astype("float32")

model = tf.keras.Sequential([
    tf.keras.Input((10,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(1, activation="tanh"),
])
bce = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-2)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        scores = model(x, training=True)
        loss = bce(y, scores)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


losses = [float(train_step(features, labels)) for _ in range(60)]
scores = model(features).numpy()
print("loss", round(losses[0], 2), "->", round(losses[-1], 2))
print("accuracy", ((scores > 0.5) == (labels > 0.5)).mean().round(3))
print("predictions in", scores.min().round(2), scores.max().round(2), "share <= 0:", (scores <= 0).mean().round(2))
