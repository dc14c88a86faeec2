# expect: TL502
"""A digit-style classifier evaluated with `model.predict_classes(x_test)`, as in keras-team/keras#19888
("AttributeError: 'Sequential' object has no attribute 'predict_classes'. Did you mean: 'predict_step'?",
Keras 3) and keras-team/keras#15838. The method left Keras in TF 2.6; Keras 3 does not have it either.

Observed on TF 2.21 / Keras 3.15 (CPU): training runs (accuracy 0.54, 0.62, 0.73 over 3 epochs, seeded),
then `model.predict_classes(x_test)` raises AttributeError: 'Sequential' object has no attribute
'predict_classes'. Did you mean: 'predict_step'? `np.argmax(model.predict(x_test), axis=-1)` gives the
classes (test accuracy 0.72)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(320, 8)).astype("float32")
y = (x[:, 0] > 0).astype("int32") + (x[:, 1] > 0).astype("int32")
x_train, y_train, x_test, y_test = x[:256], y[:256], x[256:], y[256:]

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
history = model.fit(x_train, y_train, epochs=3, batch_size=32, verbose=0)
print(history.history["accuracy"])
predicted = model.predict_classes(x_test)
print("test accuracy", float(np.mean(predicted == y_test)))
