# expect: TL003
"""CIFAR-10 classifier whose weight decay is added after the tape block closes (None gradients)."""
import tensorflow as tf
from tensorflow.keras import layers

WEIGHT_DECAY = 5e-4


def build_model():
    return tf.keras.Sequential([
        layers.Conv2D(32, 3, activation="relu", input_shape=(32, 32, 3)),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, activation="relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(10),
    ])


model = build_model()
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
train_loss = tf.keras.metrics.Mean()


def l2_penalty(variables):
    return WEIGHT_DECAY * tf.add_n([tf.nn.l2_loss(v) for v in variables if "kernel" in v.name])


def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        data_loss = loss_object(labels, logits)
    total_loss = data_loss + l2_penalty(model.trainable_variables)
    gradients = tape.gradient(total_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(total_loss)


(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
dataset = tf.data.Dataset.from_tensor_slices((x_train / 255.0, y_train)).shuffle(10000).batch(64)
for epoch in range(5):
    train_loss.reset_state()
    for images, labels in dataset:
        train_step(images, labels)
    print(f"epoch {epoch}: loss {train_loss.result():.4f}")
