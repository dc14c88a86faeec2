# expect: none
"""The fix given in the answer to
https://datascience.stackexchange.com/questions/91069/the-sum-of-multi-class-prediction-is-not-1-using-tensorflow-and-keras
("To get the summation in the last layer to be one, you need to use Softmax activation not Sigmoid"):
a functional-API model with a 4-unit `softmax` output and `CategoricalCrossentropy()`, fed by a
`tf.data` pipeline that one-hot encodes the labels with `tf.one_hot`. The features are synthetic
(four Gaussian clusters); the labels come from `np.random.randint`.

Observed on TF 2.21 (CPU): loss 1.02, 0.24, 0.10, 0.06, 0.04 over 5 epochs, accuracy 1.00, and the
four outputs of every sample sum to 1.000.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(4)
NUM_CLASSES = 4

centres = np.random.normal(0, 2.0, size=(NUM_CLASSES, 10))
labels = np.random.randint(0, NUM_CLASSES, size=1600)
features = (centres[labels] + np.random.normal(size=(1600, 10))).astype("float32")

train_ds = (tf.data.Dataset.from_tensor_slices((features, labels))
            .shuffle(1600)
            .map(lambda x, y: (x, tf.one_hot(y, NUM_CLASSES)))
            .batch(32))

inputs = tf.keras.Input(shape=(10,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(NUM_CLASSES, activation="softmax")(hidden)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer="adam", loss=tf.keras.losses.CategoricalCrossentropy(), metrics=["accuracy"])
history = model.fit(train_ds, epochs=5, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("accuracy:", round(history.history["accuracy"][-1], 3))
sums = model.predict(features[:200], verbose=0).sum(axis=1)
print(f"sum of the outputs: min {sums.min():.3f}, max {sums.max():.3f}")
