# expect: TL106
"""Binary sentiment classifier whose output layer is a one-unit softmax (always 1.0)."""
import tensorflow as tf
from tensorflow.keras import layers

VOCAB = 20000
MAXLEN = 200

(x_train, y_train), (x_val, y_val) = tf.keras.datasets.imdb.load_data(num_words=VOCAB)
x_train = tf.keras.utils.pad_sequences(x_train, maxlen=MAXLEN)
x_val = tf.keras.utils.pad_sequences(x_val, maxlen=MAXLEN)

inputs = layers.Input(shape=(None,), dtype="int32")
x = layers.Embedding(VOCAB, 128)(inputs)
x = layers.Bidirectional(layers.LSTM(64))(x)
x = layers.Dense(64, activation="relu")(x)
outputs = layers.Dense(1, activation="softmax")(x)
model = tf.keras.Model(inputs, outputs)

model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val))
