# expect: TL008
"""A graph-network style training step after microsoft/tf2-gnn#23 ("Fix gradient clipping": the clipping
existed but never reached the update): the clipped list is bound to `clipped` and the apply call still
uses `gradients`.

Observed on TF 2.21 (CPU): the global norm is 246, 114, 87 over three steps while the clip asks for 5.0,
and the loss falls 149 -> 108 -> 97: the unclipped update, as large as without any clipping."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.normal(size=(128, 16)).astype("float32") * 10.0
targets = rng.normal(size=(128, 1)).astype("float32") * 10.0

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    clipped, global_norm = tf.clip_by_global_norm(gradients, 5.0)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, global_norm


for epoch in range(3):
    loss, norm = train_step(features, targets)
    print(epoch, float(loss), "global norm before clipping", float(norm))
