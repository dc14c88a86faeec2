# expect: TL502
"""A Keras 2 tutorial's imports: the layers from their private submodules (`tensorflow.keras.layers.core`,
as in michelpf/fiap-ml-visao-computacional-auditoria-video#18, "ModuleNotFoundError: No module named
'tensorflow.keras.layers.core'") and `np_utils` for the one-hot labels.

Observed on TF 2.21 / Keras 3.15 (CPU): the program stops at its imports, ModuleNotFoundError: No module
named 'tensorflow.keras.layers.core' (`from keras.utils import np_utils` raises ImportError: cannot import
name 'np_utils' from 'keras.utils'). Imported from `tensorflow.keras.layers`, with
`tf.keras.utils.to_categorical`, the model trains: accuracy 0.48, 0.65, 0.71 over 3 epochs (seeded)."""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers.core import Dense, Dropout
from tensorflow.keras.utils import np_utils

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
labels = (x[:, 0] > 0).astype("int32") + (x[:, 1] > 0).astype("int32")
y = np_utils.to_categorical(labels, 3)

model = tf.keras.Sequential([tf.keras.Input((8,)), Dense(32, activation="relu"), Dropout(0.2),
                             Dense(3, activation="softmax")])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="categorical_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
print(history.history["accuracy"])
