# expect: TL601
"""A regression loop that keeps its metrics in a dict and logs them every epoch, with no reset (the
pattern fixed in lucasjinreal/tfboys#2: "reset the states of tf.Metrics object at the end of each
epoch/iteration").

Observed on TF 2.21 (CPU): the logged mse of epochs 1-6 is 3.12, 1.75, 1.21, 0.92, 0.74, 0.62 while the
model's mse on the training set after each epoch is 0.93, 0.21, 0.073, 0.038, 0.027, 0.023: at epoch 6 the
log overstates the error 27 times."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
tf.random.set_seed(3)
features = rng.normal(size=(1024, 8)).astype("float32")
targets = (features @ rng.normal(size=(8, 1)) + 0.1 * rng.normal(size=(1024, 1))).astype("float32")

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-2)
metrics = {"mse": tf.keras.metrics.Mean(), "mae": tf.keras.metrics.MeanAbsoluteError()}


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        pred = model(xb, training=True)
        loss = tf.reduce_mean(tf.square(yb - pred))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    metrics["mse"].update_state(loss)
    metrics["mae"].update_state(yb, pred)


batch_size = 64
epoch = 0
while epoch < 6:
    order = rng.permutation(len(features))
    for start in range(0, len(features), batch_size):
        idx = order[start:start + batch_size]
        train_step(features[idx], targets[idx])
    full_mse = float(tf.reduce_mean(tf.square(targets - model(features, training=False))))
    print(f"epoch {epoch}: mse {float(metrics['mse'].result()):.4f} mae {float(metrics['mae'].result()):.4f} "
          f"(mse of the model now {full_mse:.4f})")
    epoch += 1
