# expect: none
"""A correct text classifier with a large vocabulary: Embedding(300_000, 16), mean pooling, a Dense head. A batch
of 32 sequences of 40 tokens touches about 1,280 of the 300,000 rows. After "Vanishing gradients in the embedding
layer?" (Stack Overflow 55645953). Issue 12 measured TL805 here: the mean |gradient| was taken over all 300k rows.
On TF 2.21 CPU the embedding's gradient is row-sparse (IndexedSlices). Expected: nothing."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

VOCAB = 300_000
rng = np.random.default_rng(30)
tokens = rng.integers(1, VOCAB, size=(256, 40))
labels = rng.integers(0, 2, size=256)
model = keras.Sequential([
    keras.Input((40,), dtype="int32"),
    keras.layers.Embedding(VOCAB, 16),
    keras.layers.GlobalAveragePooling1D(),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1),
])
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)

for i in range(0, 256, 32):
    with tf.GradientTape() as tape:
        logits = model(tokens[i:i + 32], training=True)
        loss = loss_fn(labels[i:i + 32, None], logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
