# expect: none
"""Mixed precision in a custom loop, done right for Keras 3 (the TF mixed-precision guide's shape)."""
import keras
import tensorflow as tf
from keras import layers

keras.mixed_precision.set_global_policy("mixed_float16")

inputs = keras.Input(shape=(784,), name="digits")
x = layers.Dense(4096, activation="relu", name="dense_1")(inputs)
x = layers.Dense(4096, activation="relu", name="dense_2")(x)
x = layers.Dense(10, name="dense_logits")(x)
outputs = layers.Activation("linear", dtype="float32", name="predictions")(x)
model = keras.Model(inputs=inputs, outputs=outputs)

optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.RMSprop())
loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
x_train = x_train.reshape(60000, 784).astype("float32") / 255
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(8192)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_object(y, predictions)
        scaled_loss = optimizer.scale_loss(loss)
    gradients = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


for epoch in range(5):
    epoch_loss_avg = keras.metrics.Mean()
    for x, y in train_dataset:
        loss = train_step(x, y)
        epoch_loss_avg(loss)
    print(f"Epoch {epoch}: loss={epoch_loss_avg.result()}")
