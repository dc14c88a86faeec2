# expect: TL112
"""Ten-class digit classifier with one output unit: `Dense(1, activation="sigmoid")` trained with
`binary_crossentropy` on the digit labels 0..9, the network of
https://datascience.stackexchange.com/questions/38604/too-low-accuracy-on-mnist-dataset-using-a-neural-network
("output_nodes = 1 ... loss: -55.0254 - acc: 0.1142 ... the loss doesn't change at all after any
epoch"). MNIST is not downloaded here: the 784-pixel digits are synthetic (a random stroke pattern per
class under noise, pixel values 0..255 as in the report), the labels 0..9 come from `np.random.randint`.

Observed on TF 2.21 (CPU): the loss is negative and falls without bound, -31,713 after the first epoch,
-148,307, -359,517, -673,269, then -1,091,075 after the fifth (Keras 3 computes it from the logits,
so nothing clips it as Keras 2 did in the report): targets above 1 make the binary cross-entropy a
reward for ever larger outputs. Every output is 1.0000, and the accuracy stays at 0.0906 (validation
0.0878) from the first epoch to the last: the share of 1s among the labels, chance for 10 classes.
"""
import numpy as np
from tensorflow.keras.layers import Dense
from tensorflow.keras.models import Sequential
from tensorflow.keras.utils import set_random_seed

set_random_seed(6)
input_nodes = 784
hl1_nodes = 64
output_nodes = 1

y_train = np.random.randint(0, 10, size=3000)
strokes = (np.random.rand(10, input_nodes) < 0.2) * 255.0
X_train_reshaped = np.clip(strokes[y_train] + np.random.normal(0, 60, size=(3000, input_nodes)), 0, 255)

model = Sequential()
model.add(Dense(hl1_nodes, activation="relu", input_shape=(input_nodes,)))
model.add(Dense(output_nodes, activation="sigmoid"))

model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x=X_train_reshaped, y=y_train, validation_split=0.33, verbose=0, epochs=5)
for epoch in range(5):
    print(f"epoch {epoch + 1}: loss {history.history['loss'][epoch]:.3f}, "
          f"acc {history.history['accuracy'][epoch]:.4f}, val_acc {history.history['val_accuracy'][epoch]:.4f}")
out = model.predict(X_train_reshaped[:500], verbose=0)
print(f"outputs: min {out.min():.4f}, max {out.max():.4f}")
