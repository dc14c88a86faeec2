# expect: TL501
"""A tutorial-era loop: the optimizer is configured with Keras 2 argument names."""
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.Input(shape=(28, 28)),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10),
])
optimizer = tf.keras.optimizers.SGD(lr=0.01, momentum=0.9, decay=1e-6, nesterov=True)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

x = tf.random.uniform((64, 28, 28))
y = tf.random.uniform((64,), maxval=10, dtype=tf.int32)
for step in range(5):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
