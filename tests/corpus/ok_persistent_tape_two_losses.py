# expect: none
"""Multi-task model: one persistent tape, two gradient calls, then `del tape`."""
import tensorflow as tf
from tensorflow.keras import layers

inputs = tf.keras.Input(shape=(16,))
shared = layers.Dense(64, activation="relu")(inputs)
shared = layers.BatchNormalization()(shared)
class_head = layers.Dense(4, name="cls")(shared)
box_head = layers.Dense(4, name="box")(shared)
model = tf.keras.Model(inputs, [class_head, box_head])

cls_loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
box_loss_fn = tf.keras.losses.Huber()
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, labels, boxes):
    with tf.GradientTape(persistent=True) as tape:
        class_logits, box_pred = model(x, training=True)
        cls_loss = cls_loss_fn(labels, class_logits)
        box_loss = box_loss_fn(boxes, box_pred)
        total = cls_loss + 0.5 * box_loss
    grads = tape.gradient(total, model.trainable_variables)
    box_grads = tape.gradient(box_loss, box_pred)
    del tape
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return total, tf.norm(box_grads)


x = tf.random.normal((32, 16))
labels = tf.random.uniform((32,), maxval=4, dtype=tf.int32)
boxes = tf.random.normal((32, 4))
for step in range(10):
    loss, box_grad_norm = train_step(x, labels, boxes)
