# expect: TL204
"""Knowledge distillation into two students, one after the other, with the one `opt` made for the first
(after https://github.com/lovedlim/tensorflow/issues/40: `opt.apply_gradients(zip(grad, vars))` for
`s_model_2` fails with "The optimizer cannot recognize variable dense_1/kernel:0").

Observed on TF 2.21 (CPU): the first student trains (its distillation loss falls each epoch, e.g. 0.082, 0.075, 0.069); the
second student's first update raises `ValueError: Unknown variable: <Variable path=sequential_2/dense_4/kernel
...>. This optimizer can only be called for the variables it was originally built with.`"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(4)
x_train = rng.normal(size=(512, 16)).astype("float32")
y_train = rng.integers(0, 4, size=512)

teacher = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(64, activation="relu"),
                               tf.keras.layers.Dense(4)])
teacher.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
teacher.fit(x_train, y_train, epochs=2, verbose=0)


s_model_1 = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(4)])
s_model_2 = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(4)])
kl = tf.keras.losses.KLDivergence()
opt = tf.keras.optimizers.Adam(1e-3)
dataset = tf.data.Dataset.from_tensor_slices(x_train).batch(64)

for student in (s_model_1, s_model_2):
    for epoch in range(3):
        for x in dataset:
            soft_targets = tf.nn.softmax(teacher(x, training=False) / 2.0)
            with tf.GradientTape() as tape:
                student_loss = kl(soft_targets, tf.nn.softmax(student(x, training=True) / 2.0))
            variables = student.trainable_variables
            grad = tape.gradient(student_loss, variables)
            opt.apply_gradients(zip(grad, variables))
        print(epoch, float(student_loss))
