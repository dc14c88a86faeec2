# expect: none
"""VQ-VAE quantizer with the straight-through estimator and a commitment loss. The codebook comes from
`add_weight`, which Keras 3 tracks (the keras-io original's raw `tf.Variable` would not train: TL305).

Observed on TF 2.21 (CPU): runs to the end without an error."""
import tensorflow as tf
from tensorflow.keras import layers


class VectorQuantizer(layers.Layer):
    def __init__(self, num_embeddings, embedding_dim, beta=0.25, **kwargs):
        super().__init__(**kwargs)
        self.embedding_dim = embedding_dim
        self.num_embeddings = num_embeddings
        self.beta = beta
        self.embeddings = self.add_weight(
            shape=(embedding_dim, num_embeddings), initializer="random_uniform", trainable=True, name="embeddings"
        )

    def call(self, x):
        flat = tf.reshape(x, [-1, self.embedding_dim])
        distances = (tf.reduce_sum(flat ** 2, axis=1, keepdims=True) + tf.reduce_sum(self.embeddings ** 2, axis=0)
                     - 2 * tf.matmul(flat, self.embeddings))
        indices = tf.argmin(distances, axis=1)
        encodings = tf.one_hot(indices, self.num_embeddings)
        quantized = tf.reshape(tf.matmul(encodings, self.embeddings, transpose_b=True), tf.shape(x))
        commitment = tf.reduce_mean((tf.stop_gradient(quantized) - x) ** 2)
        codebook = tf.reduce_mean((quantized - tf.stop_gradient(x)) ** 2)
        self.add_loss(self.beta * commitment + codebook)
        return x + tf.stop_gradient(quantized - x)


encoder = tf.keras.Sequential([layers.Dense(64, activation="relu"), layers.Dense(16)])
quantizer = VectorQuantizer(128, 16)
decoder = tf.keras.Sequential([layers.Dense(64, activation="relu"), layers.Dense(784)])
optimizer = tf.keras.optimizers.Adam(2e-4)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        z = encoder(x)
        z_q = quantizer(z)
        reconstruction = decoder(z_q)
        loss = tf.reduce_mean((x - reconstruction) ** 2) + sum(quantizer.losses)
    variables = encoder.trainable_variables + quantizer.trainable_variables + decoder.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


for batch in tf.data.Dataset.from_tensor_slices(tf.random.uniform((256, 784))).batch(32):
    train_step(batch)
