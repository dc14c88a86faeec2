# expect: TL114
"""Custom `tf.GradientTape` loop that regresses integer class ids onto a 4-unit `sigmoid` head with
`MeanAbsoluteError()`: the labels are recovered with `np.argmax` from one-hot rows, then compared with
the network's class scores. It follows
http://pullrequest.ru/14126136/polzovatelskaya-funktsiya-poter-dlya-prognozirovaniya-vyhodnyh-dannyh-interget
(a mean squared error on integer class outputs; the answer, translated from Russian: you are using the
wrong loss, MSE is for regression and this is a classification problem; use a softmax output with
`sparse_categorical_crossentropy`). The features and one-hot rows are synthetic.

Observed on TF 2.21 (CPU): with one id per sample (shape (64,)) against four scores (64, 4) the first
step stops: `InvalidArgumentError: Incompatible shapes: [64] vs. [64,4] [Op:Sub]` in
`mean_absolute_error`. With the ids reshaped to a column (64, 1) it runs instead, silently: the loss
falls 1.22, 1.02, 0.89, 0.83, 0.80 over 5 epochs while every unit drifts to the same score (0.73-0.74)
and the argmax accuracy is 0.18, below chance (0.25).
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(19)
NUM_CLASSES = 4

onehot = np.eye(NUM_CLASSES)[np.random.randint(0, NUM_CLASSES, size=2048)]
labels = np.argmax(onehot, axis=1)
centres = np.random.normal(0, 2.0, size=(NUM_CLASSES, 16))
features = (centres[labels] + np.random.normal(size=(2048, 16))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(2048).batch(64)

inputs = tf.keras.Input(shape=(16,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
outputs = tf.keras.layers.Dense(NUM_CLASSES, activation="sigmoid")(hidden)
model = tf.keras.Model(inputs, outputs)
loss_fn = tf.keras.losses.MeanAbsoluteError()
optimizer = tf.keras.optimizers.Adam()

for epoch in range(5):
    losses = []
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}")

scores = model.predict(features, verbose=0)
print(f"argmax accuracy {(scores.argmax(axis=1) == labels).mean():.3f} (chance 0.25)")
print("mean score per unit:", np.round(scores.mean(axis=0), 3))
