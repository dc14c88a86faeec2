"""Seed 1, small: the loss is computed in a helper inside the tape, the gradients are computed, and the
Adam optimizer (learning rate 0.01) is never applied."""
import tensorflow as tf
from tensorflow import keras

from _seed1_model import images, labels, model

optimizer = keras.optimizers.Adam(learning_rate=0.01)
loss_fn = keras.losses.CategoricalCrossentropy()


def compute_loss(x, y):
    predictions = model(x)
    return loss_fn(y, predictions)


losses = []
for epoch in range(20):
    with tf.GradientTape() as tape:
        loss = compute_loss(images, labels)
    grads = tape.gradient(loss, model.trainable_variables)
    losses.append(float(loss))
print("last loss", losses[-1])
# expect: TL807
