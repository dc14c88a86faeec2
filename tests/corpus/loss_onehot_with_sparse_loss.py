# expect: TL104
"""CIFAR-10 CNN: labels one-hot encoded for "the categorical loss", then a sparse loss is used."""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

NUM_CLASSES = 10
BATCH_SIZE = 64

(x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()
x_train = x_train.astype("float32") / 255.0
y_train = keras.utils.to_categorical(y_train, NUM_CLASSES)


def build_model():
    inputs = keras.Input(shape=(32, 32, 3))
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(NUM_CLASSES)(x)
    return keras.Model(inputs, outputs)


model = build_model()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(5000).batch(BATCH_SIZE)


@tf.function
def train_step(images, targets):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(targets, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(10):
    for step, (images, targets) in enumerate(dataset):
        loss = train_step(images, targets)
        if step % 100 == 0:
            print(epoch, step, float(loss))
