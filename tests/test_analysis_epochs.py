"""Loop placement (batch and epoch loops, through calls), metric uses, fresh dataset iterators and
training-mode evaluation calls, asked directly of tapelint/analysis/epochs.py and evaluation.py."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.epochs import fresh_iterator_reads, loops, metric_uses, metrics_never_reset
from tapelint.analysis.facts import Facts
from tapelint.analysis.values import Kind, values_of
from tapelint.rules._tl602_evaluation import training_mode_evaluations


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _first_line(facts: Facts, node: cst.CSTNode) -> str:
    return facts.module.code_for_node(node).strip().splitlines()[0]


STEP_FUNCTION_LOOP = """
    import tensorflow as tf
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.Adam()
    loss_metric = tf.keras.metrics.Mean()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        loss_metric(loss)

    def run_epoch(ds):
        for x, y in ds:
            train_step(x, y)

    for epoch in range(3):
        run_epoch(ds)
        print(loss_metric.result())
"""


def test_epoch_loop_is_found_through_two_levels_of_calls():
    facts = _facts(STEP_FUNCTION_LOOP)
    placement = loops(facts)
    assert [_first_line(facts, l.node) for l in placement.epoch_loops()] == ["for epoch in range(3):"]
    batch = {_first_line(facts, l.node) for l, _ in placement.batch_loops()}
    assert batch == {"for epoch in range(3):", "for x, y in ds:"}


def test_metric_called_directly_is_an_update_and_result_is_a_read():
    facts = _facts(STEP_FUNCTION_LOOP)
    assert [(u.what, u.site.func) for u in metric_uses(facts)] == [("update", "loss_metric"), ("read", "loss_metric.result")]
    (finding,) = metrics_never_reset(facts)
    assert finding.update.func == "loss_metric"


def test_reset_through_an_unreadable_receiver_counts_as_a_reset():
    facts = _facts(STEP_FUNCTION_LOOP.replace("        run_epoch(ds)\n",
                                               "        run_epoch(ds)\n        for m in tracked: m.reset_state()\n"))
    assert metrics_never_reset(facts) == []


def test_a_loop_without_an_inner_loop_of_steps_is_not_an_epoch_loop():
    facts = _facts("""
        import tensorflow as tf
        acc = tf.keras.metrics.Mean()
        for step in range(100):
            with tf.GradientTape() as tape:
                loss = f(x)
            acc(loss)
            print(acc.result())
    """)
    assert loops(facts).epoch_loops() == []
    assert metrics_never_reset(facts) == []


def test_tf_data_chains_are_datasets_in_the_value_model():
    facts = _facts("""
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices(x).shuffle(10).map(f).batch(4).prefetch(1)
        images = tf.keras.utils.image_dataset_from_directory("d").cache()
        probe(ds)
        probe(images)
        probe(other.batch(4))
    """)
    found = [values_of(facts, c.node.args[0].value, c.scope, c.order) for c in facts.calls_to("probe")]
    assert [{v.kind for v in f} for f in found] == [{Kind.DATASET}, {Kind.DATASET}, {Kind.UNKNOWN}]


def test_fresh_iterator_in_the_step_loop_but_not_in_the_epoch_loop_or_under_an_if():
    facts = _facts("""
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices(x).batch(4)
        val = tf.data.Dataset.from_tensor_slices(v).batch(4)
        for epoch in range(3):
            preview = next(iter(val))
            for step in range(10):
                xb = next(iter(ds))
                if step % 5 == 0:
                    sample = next(iter(val))
                with tf.GradientTape() as tape:
                    loss = f(xb)
    """)
    (found,) = fresh_iterator_reads(facts)
    assert _first_line(facts, found.site.node) == "next(iter(ds))"
    assert _first_line(facts, found.loop.node) == "for step in range(10):"


def test_training_mode_call_feeding_a_metric_is_evaluation_but_not_inside_the_step_loop():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dropout(0.5)])
        acc = tf.keras.metrics.Accuracy()
        for epoch in range(3):
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = f(model(x, training=True))
                acc.update_state(y, model(x, training=True))
            for x, y in val:
                out = model(x, training=True)
                acc.update_state(y, out)
    """)
    (found,) = training_mode_evaluations(facts)
    assert _first_line(facts, found.site.node) == "model(x, training=True)"
    assert found.site.order > facts.calls_to("acc.update_state")[0].order
    assert found.why == "its output feeds a metric update"
