# expect: TL106
"""A spam classifier written the way most questions write it: a Sequential built with model.add, whose
last layer is one unit followed by a separate softmax layer. Every prediction is 1.0; the loss is constant."""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Activation, Dense, Dropout


def build_classifier(vocabulary_size=2000):
    model = tf.keras.Sequential()
    model.add(Dense(128, input_shape=(vocabulary_size,)))
    model.add(Activation("relu"))
    model.add(Dropout(0.3))
    model.add(Dense(1))
    model.add(Activation("softmax"))
    return model


classifier = build_classifier()
loss_fn = tf.keras.losses.BinaryCrossentropy()
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)

features = np.random.rand(256, 2000).astype("float32")
labels = np.random.randint(0, 2, size=(256, 1)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(256).batch(32)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        probabilities = classifier(x, training=True)
        loss = loss_fn(y, probabilities)
    gradients = tape.gradient(loss, classifier.trainable_variables)
    optimizer.apply_gradients(zip(gradients, classifier.trainable_variables))
    return loss


for epoch in range(3):
    for batch_x, batch_y in dataset:
        loss = train_step(batch_x, batch_y)
    print(f"epoch {epoch}: loss {float(loss):.4f}")
