# expect: TL117
"""Review sentiment classifier (Embedding, pooling, then `Dense(2, activation="softmax")`) compiled with
`tf.keras.losses.BinaryCrossentropy()` and fitted on one 0/1 label per review, the combination the
answer in https://boohere.com/it/detail/80265.html separates ("Poiché hai due classi, devi calcolare
softmax + categorical_crossentropy su due output ... Il tuo modello sigmoid + binary_crossentropy ... è
già corretto"). IMDB is not downloaded: the padded reviews are synthetic token ids (positive reviews
draw more often from one half of the vocabulary); labels from `np.random.randint`.

Observed on TF 2.21 (CPU): the first batch fails with `ValueError: Arguments `target` and `output` must
have the same rank (ndim). Received: target.shape=(64,), output.shape=(64, 2)`.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(25)
VOCAB, MAXLEN = 2000, 80

y_train = np.random.randint(0, 2, size=2000)
words = np.random.randint(1, VOCAB // 2, size=(2000, MAXLEN)) + (VOCAB // 2) * (np.random.rand(2000, MAXLEN) < (0.3 + 0.4 * y_train[:, None]))
x_train = tf.keras.utils.pad_sequences(list(words), maxlen=MAXLEN)

model = tf.keras.Sequential([
    tf.keras.layers.Embedding(VOCAB, 16),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(2, activation="softmax"),
])
model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
model.fit(x_train, y_train, epochs=3, batch_size=64, validation_split=0.2)
