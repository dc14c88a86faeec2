# expect: none
"""Multi-label tagger: each sample carries one to three of 8 tags at once, so the output is
`Dense(8, activation="sigmoid")` with `binary_crossentropy`, the answer given in
https://codehunter.cc/a/python/how-does-keras-handle-multilabel-classification ("Don't use softmax. Use
sigmoid for activation of your output layer. Use binary_crossentropy for loss function."). The near
miss of TL111: several sigmoid units, but no categorical loss. The features and the multi-hot tag rows
are synthetic (each tag adds its own direction to the features).

Observed on TF 2.21 (CPU): loss 0.68, 0.40, 0.27, 0.20, 0.15, 0.12 over 6 epochs, binary accuracy
0.98; thresholding the scores at 0.5 gives 1.86 tags per sample on average against 1.93 in the
targets, which is what a multi-label head should do.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(3)
NUM_TAGS, FEATURES = 8, 32

directions = np.random.normal(size=(NUM_TAGS, FEATURES))
tags = (np.random.rand(2000, NUM_TAGS) < 0.22).astype("float32")
tags[tags.sum(axis=1) == 0, 0] = 1.0
features = (tags @ directions + np.random.normal(0, 0.8, size=(2000, FEATURES))).astype("float32")

model = tf.keras.Sequential([
    tf.keras.Input(shape=(FEATURES,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(NUM_TAGS, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["binary_accuracy"])
history = model.fit(features, tags, epochs=6, batch_size=64, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("binary accuracy:", round(history.history["binary_accuracy"][-1], 3))

predicted = model.predict(features, verbose=0) >= 0.5
print(f"tags per sample: predicted {predicted.sum(axis=1).mean():.2f}, true {tags.sum(axis=1).mean():.2f}")
