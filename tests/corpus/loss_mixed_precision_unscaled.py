# expect: TL203
"""Mixed-precision image classifier: the policy is set, the loop never scales the loss."""
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers, mixed_precision

mixed_precision.set_global_policy("mixed_float16")

inputs = keras.Input(shape=(784,))
x = layers.Dense(4096, activation="relu")(inputs)
x = layers.Dense(4096, activation="relu")(x)
x = layers.Dense(10)(x)
outputs = layers.Activation("linear", dtype="float32")(x)
model = keras.Model(inputs, outputs)

optimizer = keras.optimizers.RMSprop(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

(x_train, y_train), _ = keras.datasets.mnist.load_data()
x_train = x_train.reshape(60000, 784).astype("float32") / 255
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(8192)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_fn(y, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


for epoch in range(5):
    for x, y in train_ds:
        loss = train_step(x, y)
    print("epoch", epoch, "loss", float(loss))
