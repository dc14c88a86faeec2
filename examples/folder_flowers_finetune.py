"""Seed report 1 as it ran on the user's machine: images read from `data/flowers/train`, a VGG16 backbone
with ImageNet weights, frozen, under a ReLU head and a softmax. The gradients are computed and returned,
and the Adam optimizer is never applied.

Neither the folder nor the weights are here, so the probe can only run it with stand-ins:

    tapelint examples/folder_flowers_finetune.py
    tapelint probe examples/folder_flowers_finetune.py --synthetic-data
"""

import tensorflow as tf
from tensorflow import keras

IMAGE_SIZE = (64, 64)

train_ds = keras.utils.image_dataset_from_directory(
    "data/flowers/train", image_size=IMAGE_SIZE, batch_size=8, label_mode="categorical"
)
num_classes = len(train_ds.class_names)

inp = keras.layers.Input(shape=(*IMAGE_SIZE, 3))
vgg = tf.keras.applications.VGG16(include_top=False, weights="imagenet", input_tensor=inp)
vgg.trainable = False

x1 = vgg.get_layer("block5_pool").output
x2 = tf.keras.layers.GlobalAveragePooling2D()(x1)
x3 = keras.layers.Dense(64, activation="relu")(x2)
output = keras.layers.Dense(num_classes, activation="softmax")(x3)
model = tf.keras.models.Model(inputs=inp, outputs=output)

loss_object = tf.keras.losses.CategoricalCrossentropy()


def calculate_gradient(model, images, target):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss_value = loss_object(y_true=target, y_pred=predictions)
    return loss_value, tape.gradient(loss_value, model.trainable_variables)


optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
num_epochs = 4

for epoch in range(num_epochs):
    for images, labels in train_ds:
        loss_value, grads = calculate_gradient(model, images, labels)
    print(f"epoch {epoch}: last loss {float(loss_value):.4f}")
