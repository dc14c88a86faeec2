# expect: TL112
"""Binary sequence classifier whose LSTM feeds `Dense(n_outputs, activation="sigmoid")` with
`n_outputs = 1`, compiled with `categorical_crossentropy`, as in
https://stats.stackexchange.com/questions/565956/confused-with-binary-cross-entropy-vs-categorical-cross-entropy
("n_outputs is 1 and the model is predicting only class 0, not 1"; the answer: with one output neuron the
categorical loss "is minimized ... by setting p=1 regardless of the input"). The sequences (5 steps of
10 label-encoded features, as in the question) are synthetic; the 0/1 labels follow the sign of a
weighted sum of the features.

Observed on TF 2.21 (CPU): Keras only prints a `SyntaxWarning` ("expected y_pred.shape to be
(batch_size, num_classes) with num_classes > 1"). The loss reads 0.0 in every epoch, yet the weights do
move: the fused softmax cross-entropy over the one cached logit has gradient 1 - y, so every sample
labelled 0 pushes the output down and none pushes it up (a batch's gradient norm was 250 while its loss
read 0.0). After 3 epochs every output is about 2.6e-10, no sample is predicted as class 1, and the
accuracy is 0.5135, the share of class 0: "the model is predicting only class 0", as in the question.
"""
import numpy as np
from tensorflow.keras.layers import LSTM, Dense
from tensorflow.keras.models import Sequential
from tensorflow.keras.utils import set_random_seed

set_random_seed(7)
n_timesteps, n_features, n_outputs = 5, 10, 1

X_train = np.random.randint(0, 6, size=(4000, n_timesteps, n_features)).astype("float32")
weights = np.random.normal(size=(n_timesteps, n_features))
y_train = ((X_train * weights).sum(axis=(1, 2)) > (2.5 * weights.sum())).astype("float32").reshape(-1, 1)

model = Sequential()
model.add(LSTM(64, input_shape=(n_timesteps, n_features), recurrent_activation="hard_sigmoid"))
model.add(Dense(n_outputs, activation="sigmoid"))
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])

history = model.fit(X_train, y_train, epochs=3, batch_size=64, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
print("accuracy per epoch:", [round(v, 4) for v in history.history["accuracy"]])
scores = model.predict(X_train[:1000], verbose=0)
print(f"outputs: min {scores.min():.3g}, max {scores.max():.3g}; predicted class 1: {(scores > 0.5).mean():.3f}")
print(f"share of class 0 in the labels: {1 - y_train.mean():.4f}")
