# expect: TL009
"""A classifier with a learnable per-class offset added to the logits, initialised with `np.arange`, so
the offsets are an int64 variable next to the float weights of the model (integer variables next to
trainable ones, as in keras-team/keras#20058, "No gradients provided for any variable." when a
variable uses an integer data type).

Observed on TF 2.21 (CPU): the gradient list holds None for `class_offsets`; Keras warns `Gradients do not
exist for variables ['Variable:0'] when minimizing the loss`, the model's loss falls (2.20 -> 1.33) and
the offsets stay [0 1 2 3] after 30 steps."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.normal(size=(512, 10)).astype("float32")
labels = rng.integers(0, 4, size=(512,))

model = tf.keras.Sequential([
    tf.keras.Input(shape=(10,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(4),
])
class_offsets = tf.Variable(np.arange(4))
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-2)
variables = model.trainable_variables + [class_offsets]


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True) + tf.cast(class_offsets, tf.float32)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


for step in range(30):
    loss = train_step(features, labels)
    if step % 10 == 0 or step == 29:
        print(step, float(loss))
print("offsets", class_offsets.numpy())
