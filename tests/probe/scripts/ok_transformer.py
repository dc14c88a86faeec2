# expect: none
"""A correct loop: one pre-norm transformer encoder block (MultiHeadAttention, LayerNormalization, a GELU MLP)
as a subclassed model over random embeddings, a per-token regression loss, AdamW, a @tf.function step."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(23)
rng = np.random.default_rng(23)
x = rng.normal(size=(32, 10, 16)).astype("float32")
y = rng.normal(size=(32, 10, 16)).astype("float32")


class Block(keras.Model):
    def __init__(self):
        super().__init__()
        self.norm1 = keras.layers.LayerNormalization()
        self.attention = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)
        self.norm2 = keras.layers.LayerNormalization()
        self.mlp_in = keras.layers.Dense(32, activation="gelu")
        self.mlp_out = keras.layers.Dense(16)
        self.dropout = keras.layers.Dropout(0.1)

    def call(self, inputs, training=False):
        h = self.norm1(inputs)
        inputs = inputs + self.dropout(self.attention(h, h, training=training), training=training)
        h = self.norm2(inputs)
        return inputs + self.mlp_out(self.mlp_in(h))


model = Block()
model(x[:1])
optimizer = keras.optimizers.AdamW(learning_rate=1e-3, weight_decay=1e-4)


@tf.function
def train_step(inputs, targets):
    with tf.GradientTape() as tape:
        outputs = model(inputs, training=True)
        loss = tf.reduce_mean(tf.square(outputs - targets))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(20):
    train_step(x, y)
