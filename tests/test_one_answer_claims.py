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


# ----------------------------------------------------------------------------- one reader of loss calls
# "Which loss does this call evaluate, on which (y_true, y_pred)?" had three readers that read some spellings
# differently: `tf.nn` cross-entropies by keyword only (TL103/TL104) or by position too (TL101/TL102), a
# name bound in two branches by its last assignment (none: a guess) or by the value model (unknown when
# the branches differ), and custom `keras.losses.Loss` subclasses not at all. Each group below is three
# spellings of one question, which now read alike in the analysis and in the rules.


def _evaluated(source: str) -> list[tuple[object, ...]]:
    import libcst as cst

    from tapelint.analysis.evaluations import evaluations
    from tapelint.analysis.facts import Facts

    text = textwrap.dedent(source)
    facts = Facts(cst.parse_module(text), text)
    module = cst.Module([])
    read = []
    for ev in evaluations(facts):
        loss = ev.loss
        read.append((ev.role, loss.name if loss else None, loss.kind.value if loss else None,
                     loss.from_logits if loss else None, ev.custom,
                     module.code_for_node(ev.y_true) if ev.y_true is not None else None,
                     module.code_for_node(ev.y_pred) if ev.y_pred is not None else None))
    return read


LOSS_SETUP = """
    import tensorflow as tf
    from tensorflow import keras

    model = keras.Sequential([keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
    optimizer = keras.optimizers.Adam()
"""

TF_NN_SPELLINGS = {
    "keyword": "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=model(x), logits=y)",
    "positional": "tf.nn.sparse_softmax_cross_entropy_with_logits(model(x), y)",
    "mixed": "tf.nn.sparse_softmax_cross_entropy_with_logits(model(x), logits=y)",
}


def _tf_nn_step(call: str) -> str:
    return LOSS_SETUP + f"""
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean({call})
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    train_step(tf.random.normal((8, 4)), tf.zeros((8,), tf.int32))
"""


def test_tf_nn_arguments_by_keyword_or_position_read_alike():
    read = {name: _evaluated(_tf_nn_step(call)) for name, call in TF_NN_SPELLINGS.items()}
    expected = [("op", "sparse_categorical_crossentropy", "sparse", True, False, "model(x)", "y")]
    assert read == {name: expected for name in TF_NN_SPELLINGS}


def test_swapped_tf_nn_arguments_are_reported_whichever_way_they_are_passed():
    """TL103 read `labels=`/`logits=` by keyword only: the positional swap went unreported."""
    for name, call in TF_NN_SPELLINGS.items():
        assert findings(_tf_nn_step(call), ("TL103",)) == [("TL103", 10)], name


def _branch_step(first: str, second: str | None) -> str:
    if second is None:
        binding = f"loss_fn = {first}"
    else:
        binding = f"if wide:\n        loss_fn = {first}\n    else:\n        loss_fn = {second}"
    return LOSS_SETUP.replace('keras.layers.Dense(10)', 'keras.layers.Dense(10, activation="softmax")') + f"""
    wide = bool(tf.random.uniform(()) > 0.5)
    {binding}

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    train_step(tf.random.normal((8, 4)), tf.zeros((8,), tf.int32))
"""


LOGITS_LOSS = "keras.losses.SparseCategoricalCrossentropy(from_logits=True)"
PROBABILITIES_LOSS = "keras.losses.SparseCategoricalCrossentropy()"


def test_a_loss_bound_once_or_in_two_agreeing_branches_reads_alike_and_two_that_differ_are_unknown():
    expected = [("loss", "sparse_categorical_crossentropy", "sparse", True, False, "y", "model(x)")]
    assert _evaluated(_branch_step(LOGITS_LOSS, None)) == expected
    assert _evaluated(_branch_step(LOGITS_LOSS, LOGITS_LOSS)) == expected
    assert _evaluated(_branch_step(LOGITS_LOSS, PROBABILITIES_LOSS)) == []  # unknown: no guess


def test_softmax_fed_to_a_logits_loss_is_reported_when_every_branch_agrees_and_not_when_they_differ():
    """The last assignment was read before: two branches gave no answer at all, agreeing or not."""
    assert findings(_branch_step(LOGITS_LOSS, None), ("TL101",)) == [("TL101", 9)]
    # one evaluation, one finding: at the first of the agreeing `from_logits=True` arguments
    assert findings(_branch_step(LOGITS_LOSS, LOGITS_LOSS), ("TL101",)) == [("TL101", 10)]
    assert findings(_branch_step(LOGITS_LOSS, PROBABILITIES_LOSS), ("TL101",)) == []


CUSTOM_LOSSES = {
    "a Loss subclass": """
    class Distance(keras.losses.Loss):
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)

    loss_fn = Distance()
""",
    "a subclass of a local Loss subclass": """
    class Base(keras.losses.Loss):
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)

    class Distance(Base):
        pass

    loss_fn = Distance()
""",
    "a Keras loss the vocabulary names": """
    loss_fn = keras.losses.MeanAbsoluteError()
""",
}


def _dropout_step(loss: str) -> str:
    return LOSS_SETUP.replace("keras.layers.Dense(10)])", "keras.layers.Dense(10), keras.layers.Dropout(0.5)])") \
        + loss + """
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    train_step(tf.random.normal((8, 4)), tf.zeros((8, 10)))
"""


def test_a_custom_loss_subclass_is_a_loss_evaluation_like_a_keras_loss():
    for name, loss in CUSTOM_LOSSES.items():
        read = _evaluated(_dropout_step(loss))
        assert [(role, y_true, y_pred) for role, *_, y_true, y_pred in read] == [
            ("loss", "y", "model(x, training=True)")], name
        custom = name != "a Keras loss the vocabulary names"
        assert [(r[1], r[4]) for r in read] == [("<custom>" if custom else "mean_absolute_error", custom)], name


def test_dropout_after_the_output_is_reported_whatever_loss_class_reads_the_output():
    """TL116 read custom subclasses as no loss at all: the model they train went unreported."""
    for name, loss in CUSTOM_LOSSES.items():
        assert findings(_dropout_step(loss), ("TL116",)) == [("TL116", 5)], name


def test_from_logits_is_read_where_each_loss_takes_it():
    """The focal losses take their focusing settings first: `BinaryFocalCrossentropy(True)` balances classes,
    it does not take logits (both former readers took a first positional argument as `from_logits`)."""
    read = _evaluated(LOSS_SETUP + """
    def step(x, y):
        keras.losses.CategoricalCrossentropy(True)(y, model(x))
        keras.losses.BinaryFocalCrossentropy(True)(y, model(x))
        keras.losses.binary_crossentropy(y, model(x), True)
        keras.losses.binary_focal_crossentropy(y, model(x), True)
        keras.losses.BinaryCrossentropy(**settings)(y, model(x))
""")
    assert [(name, from_logits) for _, name, _, from_logits, *_ in read] == [
        ("categorical_crossentropy", True), ("binary_focal_crossentropy", False), ("binary_crossentropy", True),
        ("binary_focal_crossentropy", False), ("binary_crossentropy", None)]
