"""One question, one answer: "is this metric reset each epoch?" has one answer whatever the spelling of the
reset. An attempted reset is a reset for TL601 (metric-never-reset); whether the spelling still exists is
TL502's question (removed-keras-api). Found on ageron/handson-ml2, chapter 12: `for metric in [mean_loss] +
metrics: metric.reset_states()` at the end of each epoch, where TL502 rightly reported the tf_keras spelling
and TL601 wrongly reported the same metrics as never reset.

The same notebook applies two optimizers in a loop over `((lower_layers, lower_optimizer), (upper_layers,
upper_optimizer))`: that loop applies the parts of one step, it is no loop over batches, so the loop of
steps around it is no epoch loop."""

from __future__ import annotations

import textwrap

from tapelint.config import parse
from tapelint.engine import lint_source


def findings(source: str, codes: tuple[str, ...] = ("TL601", "TL502")) -> list[tuple[str, int]]:
    config = parse({"select": list(codes), "preview": True}, "test", None)
    return [(d.code, d.line) for d in lint_source(textwrap.dedent(source), "train.py", config)]


SETUP = """
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras

    X_train = np.random.rand(512, 28, 28).astype("float32")
    y_train = np.random.randint(0, 10, size=(512,))
    dataset = tf.data.Dataset.from_tensor_slices((X_train, y_train)).shuffle(512).batch(32)
    lower_layers = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(100, activation="relu")])
    upper_layers = keras.Sequential([keras.layers.Dense(10, activation="softmax")])
    model = keras.Sequential([lower_layers, upper_layers])
    lower_optimizer = keras.optimizers.SGD(learning_rate=1e-4)
    upper_optimizer = keras.optimizers.Nadam(learning_rate=1e-3)
    loss_fn = keras.losses.sparse_categorical_crossentropy
    mean_loss = keras.metrics.Mean()
    metrics = [keras.metrics.SparseCategoricalAccuracy()]
"""

LOOP = """
    for epoch in range(1, 6):
        for X_batch, y_batch in dataset:
            with tf.GradientTape(persistent=True) as tape:
                y_pred = model(X_batch)
                loss = tf.reduce_mean(loss_fn(y_batch, y_pred))
            for layers, optimizer in ((lower_layers, lower_optimizer), (upper_layers, upper_optimizer)):
                gradients = tape.gradient(loss, layers.trainable_variables)
                optimizer.apply_gradients(zip(gradients, layers.trainable_variables))
            del tape
            mean_loss(loss)
            status = {"loss": mean_loss.result().numpy()}
            for metric in metrics:
                metric(y_batch, y_pred)
                status[metric.name] = metric.result().numpy()
        print(epoch, status)
"""


def test_reset_through_a_concatenated_list_with_the_tf_keras_spelling_is_a_reset():
    """The notebook as written: TL601 silent; TL502 reports the removed spelling, once."""
    assert findings(SETUP + LOOP + """
        for metric in [mean_loss] + metrics:
            metric.reset_states()
    """) == [("TL502", 35)]


def test_reset_through_a_tuple_of_metrics_is_a_reset():
    assert findings(SETUP + LOOP + """
        for m in (mean_loss, *metrics):
            m.reset_state()
    """) == []


def test_reset_through_a_dict_of_metrics_is_a_reset():
    source = SETUP.replace("metrics = [keras.metrics.SparseCategoricalAccuracy()]",
                           'metrics = {"accuracy": keras.metrics.SparseCategoricalAccuracy()}')
    loop = LOOP.replace("for metric in metrics:", "for metric in metrics.values():")
    assert findings(source + loop + """
        mean_loss.reset_state()
        for name, metric in metrics.items():
            metric.reset_state()
    """) == []


def test_reset_in_a_helper_called_each_epoch_is_a_reset():
    assert findings(SETUP + """
    def reset_all(*trackers):
        for tracker in trackers:
            tracker.reset_state()
    """ + LOOP + """
        reset_all(mean_loss, *metrics)
    """) == []


def test_the_same_loop_without_any_reset_is_reported_for_each_metric():
    """The buggy twin: nothing resets, so each epoch's figures are running values since epoch 1."""
    assert findings(SETUP + LOOP) == [("TL601", 27), ("TL601", 30)]
