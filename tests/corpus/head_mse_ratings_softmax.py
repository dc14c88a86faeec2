# expect: TL114
"""Rating predictor with two inputs (user and item features) and a 5-unit `softmax` head, compiled with
`mean_squared_error` against the integer ratings themselves. It follows
https://example-a.com/answer/53913641 ("Keras loss function does not decrease on mean squared error":
the 5-way softmax rating classifier trains with a categorical loss, then "I consider the problem as
regression and try to predict the value of user ratings"); here the softmax head is kept while the
loss becomes MSE on the rating ids 0..4. The features are synthetic; the ratings come from
`np.random.randint` and are shaped (n, 1) and tied to the features.

Observed on TF 2.21 (CPU): the (n, 1) ratings broadcast against the 5 probabilities and the loss is
frozen: 5.249 after the first epoch, 5.248 for the next four. The head collapses to 0.2 on every unit
for every sample (the point closest to all of 0..4 at once), so the argmax accuracy is 0.192, chance.
With `sparse_categorical_crossentropy` and nothing else changed: loss 0.283, 0.015, ..., 0.002 and
accuracy 0.999.
"""
import numpy as np
from tensorflow.keras.layers import Dense, Input, concatenate
from tensorflow.keras.models import Model
from tensorflow.keras.optimizers import Adam
from tensorflow.keras.utils import set_random_seed

set_random_seed(18)
features = 16
ratings = np.random.randint(0, 5, size=(3000, 1))
taste = np.random.normal(size=(5, features))
inputU = (taste[ratings[:, 0]] + np.random.normal(size=(3000, features))).astype("float32")
inputM = (taste[ratings[:, 0]] + np.random.normal(size=(3000, features))).astype("float32")

inputLayerU = Input(shape=(features,))
inputLayerM = Input(shape=(features,))
dense1 = Dense(features, activation="relu")
denseU = dense1(inputLayerU)
denseM = dense1(inputLayerM)
concatLayer = concatenate([denseU, denseM], axis=1)
denseLayer = Dense(features * 2, activation="relu")(concatLayer)
outputLayer = Dense(5, activation="softmax")(denseLayer)

model = Model(inputs=[inputLayerU, inputLayerM], outputs=outputLayer)
model.compile(loss="mean_squared_error", optimizer=Adam(learning_rate=0.01))
history = model.fit([inputU, inputM], ratings, epochs=5, batch_size=64, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
pred = model.predict([inputU, inputM], verbose=0)
print(f"argmax accuracy: {(pred.argmax(axis=1) == ratings[:, 0]).mean():.3f} (chance 0.2)")
print("mean output per unit:", np.round(pred.mean(axis=0), 3))
