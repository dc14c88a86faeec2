# expect: TL111
"""Six-category image classifier written with the functional API and a custom `tf.GradientTape` loop:
the output layer is `Dense(6, activation="sigmoid")` and the loss `SparseCategoricalCrossentropy()`,
as in https://datascience.stackexchange.com/questions/42568/should-estimated-probabilities-from-multi-class-classification-sum-to-1
("sigmoid activation ... classify image data into 6 categories ... the sums of the estimated
probability ... do not always sum to 1"). The 12x12 images are synthetic: each category lights its own
band of rows, under noise; labels are integer ids from `np.random.randint`.

Observed on TF 2.21 (CPU): the loss falls 1.63, 1.00, 0.61, 0.42, 0.34, 0.26 over 6 epochs and the
accuracy reaches 0.92, exactly as with `softmax` (Keras 3 on TensorFlow computes the loss from the
sigmoid layer's cached pre-activation values, as softmax logits). But what the model outputs are
sigmoid scores: the six "probabilities" of an image sum to 4.00 on average (2.28 to 5.34; softmax:
1.00), e.g. [0.97 0.22 0.86 0.36 0.12 1.00] for the first image, so reading them as class
probabilities, thresholding or ranking them across images is wrong.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(1)
NUM_CLASSES = 6

labels = np.random.randint(0, NUM_CLASSES, size=1500)
images = np.random.normal(0.0, 2.0, size=(1500, 12, 12, 1)).astype("float32")
for i, c in enumerate(labels):
    images[i, 2 * c:2 * c + 2, :, 0] += 1.0

dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(1500).batch(64)

inputs = tf.keras.Input(shape=(12, 12, 1))
x = tf.keras.layers.Conv2D(8, 3, activation="relu")(inputs)
x = tf.keras.layers.Flatten()(x)
x = tf.keras.layers.Dense(32, activation="relu")(x)
outputs = tf.keras.layers.Dense(NUM_CLASSES, activation="sigmoid")(x)
model = tf.keras.Model(inputs, outputs)

loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
optimizer = tf.keras.optimizers.Adam(1e-3)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(x_batch, y_batch):
    with tf.GradientTape() as tape:
        probs = model(x_batch, training=True)
        loss = loss_fn(y_batch, probs)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y_batch, probs)
    return loss


for epoch in range(6):
    accuracy.reset_state()
    losses = [float(train_step(xb, yb)) for xb, yb in dataset]
    print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, accuracy {float(accuracy.result()):.3f}")

scores = model.predict(images[:300], verbose=0)
sums = scores.sum(axis=1)
print(np.round(scores[:2], 2))
print(f"sum of the six scores: mean {sums.mean():.2f}, min {sums.min():.2f}, max {sums.max():.2f}")
