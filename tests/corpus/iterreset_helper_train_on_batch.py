# expect: TL603
"""A `train_on_batch` loop whose batch comes from a helper that calls `next(iter(ds))`: the helper looks
like a batch sampler, but each call starts the dataset over (awslabs/gluonts#281: "A dataset is an
iterable collection and not a generator. This means that `next(iter(train_ds))` always gives you the
first element of the dataset").

Observed on TF 2.21 (CPU): `train_on_batch` reports a loss of 0.0249, 0.0027, 0.0014 (it memorises
the first batch) while the accuracy on all data stays at 0.777-0.783; with one iterator made before the
loop the accuracy is 0.897, 0.941, 0.960."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(11)
tf.random.set_seed(11)
images = rng.normal(size=(1536, 6, 6, 1)).astype("float32")
labels = (images.mean(axis=(1, 2, 3)) > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((images, labels)).batch(48)

model = tf.keras.Sequential([
    tf.keras.Input((6, 6, 1)),
    tf.keras.layers.Conv2D(8, 3, activation="relu"),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(2),
])
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])


def sample_batch(ds):
    return next(iter(ds))


for epoch in range(3):
    for step in range(len(images) // 48):
        xb, yb = sample_batch(train_ds)
        logs = model.train_on_batch(xb, yb, return_dict=True)
    _, accuracy = model.evaluate(images, labels, verbose=0)
    print(f"epoch {epoch}: train_on_batch loss {logs['loss']:.4f}  accuracy on all data {accuracy:.3f}")
