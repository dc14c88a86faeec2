# expect: none
"""A ResNet-style block trained from scratch with SGD 0.1 / momentum 0.9, BatchNorm in training mode,
L2 regularization added, and an exponential learning-rate schedule."""
import tensorflow as tf
from tensorflow.keras import layers, regularizers


def residual_block(x, filters):
    shortcut = x
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False, kernel_regularizer=regularizers.l2(5e-4))(x)
    y = layers.BatchNormalization()(y)
    y = layers.ReLU()(y)
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False, kernel_regularizer=regularizers.l2(5e-4))(y)
    y = layers.BatchNormalization()(y)
    return layers.ReLU()(layers.Add()([shortcut, y]))


inputs = tf.keras.Input(shape=(32, 32, 16))
x = residual_block(inputs, 16)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(10)(x)
model = tf.keras.Model(inputs, outputs)

schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1000, decay_rate=0.9)
optimizer = tf.keras.optimizers.SGD(learning_rate=schedule, momentum=0.9, nesterov=True)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits) + tf.add_n(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


images = tf.random.normal((64, 32, 32, 16))
labels = tf.random.uniform((64,), maxval=10, dtype=tf.int32)
for batch in tf.data.Dataset.from_tensor_slices((images, labels)).batch(16):
    train_step(*batch)
