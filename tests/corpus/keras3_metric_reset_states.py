# expect: TL502
"""The TF-2.x tutorial loop: metrics reset with `reset_states()`, which Keras 3 removed."""
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input(shape=(10,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(3)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()
train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

features = tf.random.normal((200, 10))
targets = tf.random.uniform((200,), maxval=3, dtype=tf.int32)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x, training=True)
        loss = loss_object(y, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    train_accuracy(y, predictions)


for epoch in range(3):
    train_loss.reset_states()
    train_accuracy.reset_states()
    for x, y in tf.data.Dataset.from_tensor_slices((features, targets)).batch(20):
        train_step(x, y)
    print(epoch, float(train_loss.result()), float(train_accuracy.result()))
