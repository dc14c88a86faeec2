"""Seed 1 with the missing optimizer step added: Adam at 0.01 on 0..255 images kills the ReLU head."""
import tensorflow as tf
from tensorflow import keras

from _seed1_model import images, labels, model

optimizer = keras.optimizers.Adam(learning_rate=0.01)
loss_fn = keras.losses.CategoricalCrossentropy()

for epoch in range(20):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
# expect: TL804, TL808, TL809
