"""Seed report 1, reproduced: "gradients are zero except on the first iteration".

A frozen VGG16 feeds GlobalAveragePooling2D, Dense(64, relu) and Dense(2, softmax). The loss is
computed in a helper inside the tape, the gradients are returned, and the Adam optimizer (at 0.01)
is never applied. Synthetic 0..255 images stand in for the user's data; the backbone is built with
weights=None so that nothing is downloaded.

    tapelint examples/seed1_frozen_vgg_head.py
    tapelint examples/seed1_frozen_vgg_head.py --probe examples/seed1_frozen_vgg_head.py
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras

IMAGE_SIZE = 64
STEPS_PER_EPOCH = 8

inp = keras.layers.Input(shape=(IMAGE_SIZE, IMAGE_SIZE, 3))
vgg = tf.keras.applications.VGG16(
    include_top=False, weights=None, input_tensor=inp, input_shape=(IMAGE_SIZE, IMAGE_SIZE, 3)
)
vgg.trainable = False

x1 = vgg.get_layer("block5_pool").output
x2 = tf.keras.layers.GlobalAveragePooling2D()(x1)
x3 = keras.layers.Dense(64, activation="relu")(x2)
output = keras.layers.Dense(2, activation="softmax")(x3)
model = tf.keras.models.Model(inputs=inp, outputs=output)

loss_object = tf.keras.losses.CategoricalCrossentropy()


def calculate_total_loss(model, original_img, preprocessed_image, target, alpha):
    predictions = model(preprocessed_image, training=True)
    l_cl = loss_object(y_true=target, y_pred=predictions)
    return loss_object(y_true=target, y_pred=predictions)


def calculate_gradient(model, original_img, preprocessed_image, target):
    with tf.GradientTape() as tape:
        loss_value = calculate_total_loss(model, original_img, preprocessed_image, target, alpha=1)
    return loss_value, tape.gradient(loss_value, model.trainable_variables)


rng = np.random.default_rng(0)
train_x = rng.uniform(0.0, 255.0, size=(STEPS_PER_EPOCH, IMAGE_SIZE, IMAGE_SIZE, 3)).astype("float32")
train_y = np.eye(2, dtype="float32")[rng.integers(0, 2, size=STEPS_PER_EPOCH)]

optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
num_epochs = 4

for epoch in range(num_epochs):
    loss = []
    for i in range(STEPS_PER_EPOCH):
        x = np.expand_dims(train_x[i], 0)
        y = np.expand_dims(train_y[i], 0)
        loss_value, grads = calculate_gradient(model, train_x[i], x, y)
        loss.append(loss_value)
    print(f"epoch {epoch}: mean loss {np.mean(loss):.4f}")
