# expect: none
"""Rating predictor treated as a regression: integer ratings 1..5 as the targets, a single linear output
unit and `loss="mse"`, the second approach of https://example-a.com/answer/53913641 ("Then I consider the
problem as regression and try to predict the value of user ratings"). The near miss of TL114: MSE on
integer class-like targets, but the head is one unbounded unit, not a distribution over classes. The
user and item features are synthetic; the ratings come from `np.random.randint`.

Observed on TF 2.21 (CPU): loss 1.319, 0.339, 0.264, 0.238 at epochs 1, 3, 6, 10; the rounded
prediction equals the rating for 0.704 of the samples.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(23)
ratings = np.random.randint(1, 6, size=(3000, 1)).astype("float32")
user = (ratings * 0.5 + np.random.normal(size=(3000, 8))).astype("float32")
item = (ratings * 0.5 + np.random.normal(size=(3000, 8))).astype("float32")

user_in = tf.keras.Input(shape=(8,), name="user")
item_in = tf.keras.Input(shape=(8,), name="item")
merged = tf.keras.layers.Concatenate()([tf.keras.layers.Dense(16, activation="relu")(user_in),
                                        tf.keras.layers.Dense(16, activation="relu")(item_in)])
rating = tf.keras.layers.Dense(1)(tf.keras.layers.Dense(32, activation="relu")(merged))
model = tf.keras.Model([user_in, item_in], rating)
model.compile(optimizer="adam", loss="mse", metrics=["mae"])
history = model.fit([user, item], ratings, epochs=10, batch_size=64, verbose=0)
print("loss, epochs 1, 3, 6, 10:", [round(history.history["loss"][i], 3) for i in (0, 2, 5, 9)])
pred = model.predict([user, item], verbose=0)
print(f"rounded prediction equals the rating: {(np.round(pred) == ratings).mean():.3f}")
