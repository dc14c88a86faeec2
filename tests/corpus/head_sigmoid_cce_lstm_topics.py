# expect: TL111
"""Topic classifier (4 exclusive topics) whose output layer is `Dense(4, activation="sigmoid")` trained
with `categorical_crossentropy`, the model of
https://datascience.stackexchange.com/questions/91069/the-sum-of-multi-class-prediction-is-not-1-using-tensorflow-and-keras
("I have 4 classes ... the sum of them is not 1"). The tokenised texts are synthetic (each topic draws
most of its words from its own quarter of the vocabulary); the labels are one-hot via `to_categorical`.

Observed on TF 2.21 (CPU): it trains (loss 1.30, 0.55, 0.10, 0.05 over 4 epochs, categorical accuracy
1.00), but the four "probabilities" of a sample sum to 1.75 on average (from 1.49 to 1.97), not 1: the
winning topic gets 0.98 and the others up to 0.46 each, so the scores cannot be read as a distribution.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
VOCAB, MAXLEN, TOPICS = 400, 24, 4

topic = np.random.randint(0, TOPICS, size=1200)
own_words = topic[:, None] * (VOCAB // TOPICS) + np.random.randint(0, VOCAB // TOPICS, size=(1200, MAXLEN))
noise = np.random.randint(0, VOCAB, size=(1200, MAXLEN))
x_train = np.where(np.random.rand(1200, MAXLEN) < 0.6, own_words, noise)
y_train = tf.keras.utils.to_categorical(topic, TOPICS)

model = tf.keras.Sequential([
    tf.keras.layers.Embedding(VOCAB, 32),
    tf.keras.layers.LSTM(32),
    tf.keras.layers.Dense(4, activation="sigmoid"),
])
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=[tf.keras.metrics.CategoricalAccuracy()])
history = model.fit(x_train, y_train, epochs=4, batch_size=32, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("accuracy:", round(history.history["categorical_accuracy"][-1], 3))

pred = model.predict(x_train[:300], verbose=0)
print(pred[:3])
sums = pred.sum(axis=1)
print(f"sum of the 4 outputs per sample: mean {sums.mean():.2f}, min {sums.min():.2f}, max {sums.max():.2f}")
