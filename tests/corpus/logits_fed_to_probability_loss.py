# expect: TL102
"""An MLP classifier whose last Dense has no activation, trained with a probability cross-entropy."""
import numpy as np
import keras

rng = np.random.default_rng(1)
x_train = rng.normal(size=(1024, 20)).astype("float32")
y_train = rng.integers(0, 5, size=1024)

model = keras.Sequential()
model.add(keras.Input(shape=(20,)))
model.add(keras.layers.Dense(64, activation="relu"))
model.add(keras.layers.Dropout(0.1))
model.add(keras.layers.Dense(5))

loss_object = keras.losses.SparseCategoricalCrossentropy()
optimizer = keras.optimizers.Adam(learning_rate=3e-4)


def train_step(x, y):
    import tensorflow as tf

    with tf.GradientTape() as tape:
        scores = model(x, training=True)
        loss = loss_object(y, scores)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for start in range(0, 1024, 128):
    train_step(x_train[start:start + 128], y_train[start:start + 128])
