from __future__ import annotations

from tapelint.analysis.dataflow import render
from tapelint.analysis.epochs import fresh_iterator_reads
from tapelint.analysis.purpose import only_in_unit_tests, reach
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class DatasetIteratorRecreated(Rule):
    """
    ## What it does
    Reports `next(iter(ds))` (or `iter(ds).get_next()`) on a `tf.data.Dataset` inside a loop of training
    steps: a loop that runs a `GradientTape` block, an apply call or `train_on_batch` (directly or
    through the functions it calls) and is not itself the epoch loop around such a loop. The dataset
    must be provably a `tf.data.Dataset`: made by `tf.data.Dataset.*`, `TFRecordDataset`, a Keras
    `*_dataset_from_*` helper, and any chain of dataset methods (`shuffle`, `batch`, `map`, ...).

    ## Why is this bad?
    `iter(ds)` starts a new pass over the dataset each time it is called, so `next(iter(ds))` always
    returns the first element of a fresh pass. Without shuffling, every step trains on the same first
    batch: the model memorises it and never sees the rest of the data. With `shuffle(buffer)`, each new
    iterator draws only from the first `buffer` elements, and the whole input pipeline is set up again
    on every step. Measured on TF 2.21: in `tests/corpus/iterreset_first_batch_every_step.py` the loop
    trains on 1 of 64 batches for three epochs (its batch loss falls to 0.0014 while the accuracy on the
    whole set stays at 0.80; a persistent iterator reaches 0.95), and in
    `tests/corpus/iterreset_shuffled_pipeline.py` (shuffle buffer 256 over 4096 examples) only 317
    distinct examples are ever drawn in two epochs, at 72-88 ms per step instead of 15-36 ms.

    ## Example
    ```python
    for step in range(steps):
        x, y = next(iter(train_ds))
        train_step(x, y)
    ```

    ## Use instead
    ```python
    batches = iter(train_ds.repeat())
    for step in range(steps):
        x, y = next(batches)
        train_step(x, y)
    ```
    or `for x, y in train_ds.take(steps): train_step(x, y)`.

    ## Known problems
    Only datasets the value model can trace to a tf.data constructor are judged; a dataset passed in as
    a parameter from outside the file, or from `tfds.load`, is not. A read under an `if` inside the
    loop (`if step % 100 == 0: preview = next(iter(val_ds))`) is a periodic sample and is not reported,
    nor is a per-epoch preview batch taken in the epoch loop.

    Only a batch that reaches the training update is reported: what `next(iter(ds))` returns must be
    followed (through names, unpacking, helpers and their returns; `analysis/purpose.py`) to the loss a
    tape differentiates, an optimizer's apply call, or `fit`/`train_on_batch`. A fixed batch fetched in the
    loop only to be plotted, printed, written to a summary or measured with a metric is the same batch on
    purpose and is not reported, nor is one handed to code the linter cannot follow (a method of an object
    of unknown type), nor a loop in a unit test (methods of a `TestCase`, and functions only they call).

    ## Options
    None.

    ## Fix safety
    No fix. Hoisting `iter(ds)` out of the loop changes what happens at the end of the data: a finite
    dataset then raises `StopIteration` after one pass unless it is `.repeat()`ed, and which of the two
    the loop wants (one pass per epoch, or a fixed number of steps) is the author's choice.

    ## References
    - https://www.tensorflow.org/guide/data (iterating with `for` or with a persistent `iter(dataset)`)
    - https://github.com/skhu101/GM-NAS/issues/4 (`next(iter(train_queue))` inside the batch loop:
      "it grabs the first sample, then reinitializes")
    - https://github.com/awslabs/gluonts/issues/281 ("`next(iter(train_ds))` always gives you the first
      element of the dataset")
    - https://github.com/tensorflow/tensorflow/issues/40285 (why a tf.data.Dataset has no `.next()`)
    """

    code = "TL603"
    name = "dataset-iterator-recreated"
    message = ("`{call}` makes a new iterator over `{dataset}` on every pass of the training loop at {loop}, "
               "so each step gets the first batch again: create the iterator once, before the loop")
    severity = Severity.ERROR
    triggers = (("next", "iter(", "data"), ("get_next", "iter(", "data"))

    def check(self) -> None:
        for finding in fresh_iterator_reads(self.facts):
            if not reach(self.facts, finding.site.node, finding.site.scope, finding.site.order).judged_as_training:
                continue  # a batch to plot, print or measure: the training steps never see it
            if only_in_unit_tests(self.facts, finding.site.scope):
                continue  # a unit test that fits the same batch again and again does so on purpose
            self.report(finding.site.node, call=render(finding.site.node), dataset=render(finding.dataset),
                        loop=self.location(finding.loop.node) or "the loop")

    VALID = [
        Valid(
            """
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(1000).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
batches = iter(train_ds.repeat())
for step in range(1000):
    x, y = next(batches)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the iterator is made once, before the loop",
        ),
        Valid(
            """
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)
sample_x, sample_y = next(iter(train_ds))
model = tf.keras.Sequential([tf.keras.layers.Dense(sample_y.shape[-1])])
optimizer = tf.keras.optimizers.Adam()
for epoch in range(10):
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: one sample batch before the loop, for shapes; the loop iterates with `for`",
        ),
        Valid(
            """
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)
test_ds = tf.data.Dataset.from_tensor_slices((test_features, test_labels)).batch(8)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
for epoch in range(10):
    preview_x, preview_y = next(iter(test_ds.take(1)))
    print(epoch, model(preview_x, training=False)[:3], preview_y[:3])
    for x, y in train_ds:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the same preview batch once per epoch, on purpose",
        ),
        Valid(
            """
import matplotlib.pyplot as plt
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices(images).shuffle(60000).batch(64).repeat()
test_ds = tf.data.Dataset.from_tensor_slices(test_images).batch(8)
autoencoder = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(784)])
optimizer = tf.keras.optimizers.Adam(1e-3)
batches = iter(train_ds)
for epoch in range(20):
    x = next(batches)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(autoencoder(x, training=True) - x))
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, autoencoder.trainable_variables))
    samples = next(iter(test_ds))
    plt.imshow(tf.reshape(autoencoder(samples, training=False)[0], (28, 28)))
    plt.savefig(f"epoch_{epoch}.png")
""",
            "near miss: the same test batch fetched again each step, only to plot its reconstruction",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(1000).batch(32)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
for step in range(1000):
    x, y = next(iter(train_ds))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=8,
            message_contains="`next(iter(train_ds))` makes a new iterator over `train_ds`",
        ),
        Invalid(
            """
import tensorflow as tf

images = tf.keras.utils.image_dataset_from_directory("data/train", batch_size=16)
generator = tf.keras.Sequential([tf.keras.layers.Dense(64)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
g_opt = tf.keras.optimizers.Adam(2e-4)
d_opt = tf.keras.optimizers.Adam(2e-4)

def real_batch():
    batch, _ = next(iter(images))
    return batch / 255.0

@tf.function
def train_step(real):
    with tf.GradientTape() as d_tape:
        d_loss = -tf.reduce_mean(discriminator(real))
    d_opt.apply_gradients(zip(d_tape.gradient(d_loss, discriminator.trainable_variables),
                              discriminator.trainable_variables))

for epoch in range(20):
    for step in range(100):
        train_step(real_batch())
""",
            line=11,
        ),
        Invalid(
            """
import tensorflow as tf

dataset = tf.data.TFRecordDataset(files).map(parse).batch(64).prefetch(1)
model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
step = 0
while step < 500:
    x, y = iter(dataset).get_next()
    model.train_on_batch(x, y)
    step += 1
""",
            line=9,
        ),
    ]
