# expect: TL101
"""A CIFAR-style CNN with a softmax head, trained with a loss that applies softmax again."""
import tensorflow as tf
from tensorflow.keras import layers


def make_model(num_classes=10):
    inputs = tf.keras.Input(shape=(32, 32, 3))
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(num_classes, activation="softmax", name="predictions")(x)
    return tf.keras.Model(inputs, outputs)


model = make_model()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        probabilities = model(images, training=True)
        loss = loss_fn(labels, probabilities)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    accuracy.update_state(labels, probabilities)
    return loss


images = tf.random.uniform((64, 32, 32, 3), maxval=255)
labels = tf.random.uniform((64,), maxval=10, dtype=tf.int32)
for epoch in range(2):
    accuracy.reset_state()
    for batch_images, batch_labels in tf.data.Dataset.from_tensor_slices((images, labels)).batch(16):
        train_step(batch_images, batch_labels)
