# expect: TL004
"""Rating predictor that turns class scores into a rating with argmax before the loss."""
import numpy as np
import tensorflow as tf

NUM_RATINGS = 5

model = tf.keras.Sequential([
    tf.keras.layers.Embedding(10000, 64),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(NUM_RATINGS),
])
optimizer = tf.keras.optimizers.Adam(1e-3)


def predicted_rating(scores):
    best = tf.argmax(scores, axis=-1)
    return tf.cast(best, tf.float32) + 1.0


@tf.function
def train_step(tokens, ratings):
    with tf.GradientTape() as tape:
        scores = model(tokens, training=True)
        rating = predicted_rating(scores)
        loss = tf.reduce_mean(tf.square(rating - ratings))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


tokens = np.random.randint(0, 10000, size=(256, 40))
ratings = np.random.randint(1, 6, size=(256,)).astype("float32")
for start in range(0, 256, 32):
    print(train_step(tokens[start:start + 32], ratings[start:start + 32]).numpy())
