# expect: TL201
"""A sentiment classifier trained with RMSprop at a learning rate taken from a config dict."""
import tensorflow as tf

CONFIG = {"epochs": 2}
LEARNING_RATE = 0.05

vocab_size, seq_len = 5000, 40
model = tf.keras.Sequential([
    tf.keras.Input(shape=(seq_len,), dtype="int32"),
    tf.keras.layers.Embedding(vocab_size, 32),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(1),
])
loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.RMSprop(learning_rate=LEARNING_RATE)

tokens = tf.random.uniform((256, seq_len), maxval=vocab_size, dtype=tf.int32)
labels = tf.cast(tf.random.uniform((256, 1), maxval=2, dtype=tf.int32), tf.float32)
dataset = tf.data.Dataset.from_tensor_slices((tokens, labels)).batch(32)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for epoch in range(CONFIG["epochs"]):
    for x, y in dataset:
        train_step(x, y)
