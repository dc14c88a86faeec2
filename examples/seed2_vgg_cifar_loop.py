"""Seed report 2, reproduced: "TensorFlow 2 GradientTape does not work as expected".

A hand-written VGG16 (he_normal, no BatchNorm, Dense(4096) x2, softmax head) that learns with
`model.fit` but not in this custom loop. Synthetic CIFAR-shaped data replaces the download. On Keras 3
the script does not even start: `Adam(lr=...)` raises and `reset_states()` no longer exists.

    tapelint examples/seed2_vgg_cifar_loop.py
    tapelint --fix examples/seed2_vgg_cifar_loop.py   # repairs the Keras 3 breakages
"""

import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Conv2D, Dense, Flatten, Input, MaxPooling2D


def create_vgg16(number_classes, include_fully=True, input_shape=(32, 32, 3), input_tensor=None):
    img_input = Input(shape=input_shape) if input_tensor is None else input_tensor
    x = img_input
    for block, (filters, convs) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], start=1):
        for index in range(1, convs + 1):
            x = Conv2D(filters, (3, 3), activation="relu", padding="same", kernel_initializer="he_normal",
                       name=f"conv{block}_{index}")(x)
        pool = (3, 3) if block == 5 else (2, 2)
        stride = (1, 1) if block == 5 else (2, 2)
        x = MaxPooling2D(pool_size=pool, strides=stride, padding="same", name=f"pool{block}")(x)

    if include_fully:
        x = Flatten(name="flatten")(x)
        x = Dense(4096, activation="relu", name="fc1")(x)
        x = Dense(4096, activation="relu", name="fc2")(x)
        x = Dense(number_classes, activation="softmax", name="predictions")(x)

    model = tf.keras.models.Model(img_input, x, name="vgg16")
    return model


def synthetic_cifar(n, number_classes, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 32, 32, 3)).astype("float32")
    labels = rng.integers(0, number_classes, size=n)
    return images, np.eye(number_classes, dtype="float32")[labels]


def main():
    number_classes = 10
    x_train, y_train = synthetic_cifar(256, number_classes, seed=0)
    x_test, y_test = synthetic_cifar(64, number_classes, seed=1)

    model = create_vgg16(number_classes, input_shape=(32, 32, 3))

    optimizer = tf.keras.optimizers.Adam(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-08, decay=0.0)
    loss_fn = tf.keras.losses.CategoricalCrossentropy()

    train_acc_metric = tf.keras.metrics.CategoricalAccuracy()
    val_acc_metric = tf.keras.metrics.CategoricalAccuracy()

    batch_size = 64
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train / 255, y_train)).shuffle(1024).batch(batch_size)
    val_dataset = tf.data.Dataset.from_tensor_slices((x_test / 255, y_test)).batch(batch_size)

    for epoch in range(3):
        print(f"Start of epoch {epoch}")
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            with tf.GradientTape() as tape:
                logits = model(x_batch_train)
                loss_value = loss_fn(y_batch_train, logits)
            grads = tape.gradient(loss_value, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

            train_acc_metric(y_batch_train[0], logits[0][:-1])
            if step % 2 == 0:
                print(f"Training loss (for one batch) at step {step}: {float(loss_value):.4f}")

        print(f"Training acc over epoch: {float(train_acc_metric.result()):.4f}")
        train_acc_metric.reset_states()

        for x_batch_val, y_batch_val in val_dataset:
            val_logits = model(x_batch_val)
            val_acc_metric(y_batch_val[0], val_logits[0][:-1])
        print(f"Validation acc: {float(val_acc_metric.result()):.4f}")
        val_acc_metric.reset_states()


if __name__ == "__main__":
    main()
