# expect: none
"""Knowledge distillation: a teacher with a 10-unit `softmax` head is trained on the labels, then a
smaller student with its own `softmax` head is trained in a `tf.GradientTape` loop to match the
teacher's probabilities with `MeanSquaredError()`, one of the distillation losses described in
https://software.intel.com/content/www/us/en/develop/articles/knowledge-distillation-with-keras.html
("we train a small network with the help of the cumbersome model"). The near miss of TL114: MSE on a
softmax head, but its targets are another model's probabilities, not class ids. The data are synthetic.

Observed on TF 2.21 (CPU): teacher accuracy 0.925; the distillation loss falls 0.0503, 0.0037, 0.0017
at epochs 1, 3, 5 and the student, which never saw a label, agrees with the teacher's argmax on 0.970
of the samples.
"""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(22)
labels = np.random.randint(0, 10, size=2000)
centres = np.random.normal(0, 0.7, size=(10, 20))
x_train = (centres[labels] + np.random.normal(size=(2000, 20))).astype("float32")

teacher = tf.keras.Sequential([
    tf.keras.Input(shape=(20,)),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10, activation="softmax"),
])
teacher.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
teacher.fit(x_train, labels, epochs=5, batch_size=64, verbose=0)
print("teacher accuracy:", round(teacher.evaluate(x_train, labels, verbose=0)[1], 3))

student = tf.keras.Sequential([
    tf.keras.Input(shape=(20,)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(10, activation="softmax"),
])
mse = tf.keras.losses.MeanSquaredError()
optimizer = tf.keras.optimizers.Adam(1e-2)
images = tf.data.Dataset.from_tensor_slices(x_train).shuffle(2000).batch(64)


@tf.function
def distill_step(x):
    soft_targets = teacher(x, training=False)
    with tf.GradientTape() as tape:
        loss = mse(soft_targets, student(x, training=True))
    grads = tape.gradient(loss, student.trainable_variables)
    optimizer.apply_gradients(zip(grads, student.trainable_variables))
    return loss


for epoch in range(5):
    losses = [float(distill_step(x)) for x in images]
    if epoch in (0, 2, 4):
        print(f"epoch {epoch + 1}: distillation loss {np.mean(losses):.4f}")

agree = (student.predict(x_train, verbose=0).argmax(1) == teacher.predict(x_train, verbose=0).argmax(1)).mean()
print(f"student agrees with teacher on {agree:.3f} of the samples")
