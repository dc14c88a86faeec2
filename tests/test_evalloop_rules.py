"""Behaviour of the metrics and evaluation rules (TL601-TL603) beyond their examples: the bug reached
through helpers, methods and wrappers, and the correct near misses that must stay silent."""

from __future__ import annotations

import textwrap

from tapelint.config import parse
from tapelint.engine import lint_source

CODES = ["TL601", "TL602", "TL603"]


def codes(source: str) -> list[str]:
    config = parse({"select": [*CODES, "TL999"], "preview": True}, "test", None)
    found = lint_source(textwrap.dedent(source), "t.py", config)
    assert not [d for d in found if d.code == "TL999"], found
    return [d.code for d in found]


TRAINER = """
    import tensorflow as tf

    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = tf.keras.optimizers.Adam()
            self.train_loss = tf.keras.metrics.Mean()

        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            self.train_loss.update_state(loss)

        def fit(self, ds, epochs):
            for epoch in range(epochs):
                RESET
                for x, y in ds:
                    self.train_step(x, y)
                print(epoch, self.train_loss.result())
"""


def test_metric_on_a_trainer_object_never_reset_is_reported():
    assert codes(TRAINER.replace("RESET", "pass")) == ["TL601"]


def test_metric_on_a_trainer_object_reset_each_epoch_is_silent():
    assert codes(TRAINER.replace("RESET", "self.train_loss.reset_state()")) == []


def test_tf_keras_reset_states_counts_as_a_reset():
    assert codes(TRAINER.replace("RESET", "self.train_loss.reset_states()")) == []


def test_model_reset_metrics_counts_as_a_reset():
    assert codes(TRAINER.replace("RESET", "self.model.reset_metrics()")) == []


DISTRIBUTED = """
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        optimizer = tf.keras.optimizers.SGD()
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def step_fn(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.nn.compute_average_loss(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_accuracy.update_state(y, logits)

    @tf.function
    def distributed_step(x, y):
        strategy.run(step_fn, args=(x, y))

    for epoch in range(5):
        for x, y in dist_ds:
            distributed_step(x, y)
        print(epoch, train_accuracy.result())
"""


def test_metric_updated_in_a_function_run_by_strategy_run_is_reported():
    assert codes(DISTRIBUTED) == ["TL601"]


def test_metric_read_only_after_training_is_silent():
    assert codes(DISTRIBUTED.replace("        print(epoch, train_accuracy.result())\n", "") + "    print(train_accuracy.result())\n") == []


def test_next_iter_through_a_tf_function_wrapper_in_the_step_loop_is_reported():
    assert codes("""
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(100).batch(8)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()

        def step(xb, yb):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        fast_step = tf.function(step)
        for i in range(1000):
            xb, yb = next(iter(ds))
            fast_step(xb, yb)
    """) == ["TL603"]


def test_next_on_a_persistent_iterator_and_for_loops_are_silent():
    assert codes("""
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(100).batch(8).repeat()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        it = iter(ds)
        for i in range(1000):
            xb, yb = next(it)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        for xb, yb in ds.take(1):
            print(xb.shape)
    """) == []


def test_next_iter_on_something_not_known_to_be_a_dataset_is_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        for i in range(1000):
            xb, yb = next(iter(loader))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    """) == []


EVALUATE = """
    import tensorflow as tf
    model = tf.keras.Sequential([tf.keras.layers.Dense(32), tf.keras.layers.BatchNormalization(),
                                 tf.keras.layers.Dense(2)])
    optimizer = tf.keras.optimizers.Adam()
    val_acc = tf.keras.metrics.SparseCategoricalAccuracy()

    def evaluate(ds):
        val_acc.reset_state()
        for x, y in ds:
            logits = model(x, training=FLAG)
            val_acc.update_state(y, logits)
        return val_acc.result()

    for epoch in range(5):
        for x, y in train_ds:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x, training=True), from_logits=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print(epoch, evaluate(val_ds))
"""


def test_evaluation_helper_with_training_true_is_reported():
    assert codes(EVALUATE.replace("FLAG", "True")) == ["TL602"]


def test_evaluation_helper_with_training_false_is_silent():
    assert codes(EVALUATE.replace("FLAG", "False")) == []


def test_batchnorm_recalibration_pass_whose_output_is_dropped_is_silent():
    assert codes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(32), tf.keras.layers.BatchNormalization()])
        optimizer = tf.keras.optimizers.Adam()
        for epoch in range(5):
            for x, y in train_ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            for x, _ in train_ds:
                model(x, training=True)
    """) == []
