"""Which functions run per replica, under which strategy, and whether their loss is scaled for it."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.gradients import gradient_calls
from tapelint.rules._tl701_distribution import Scaling, loss_scaling, per_replica, replica_runs


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _scaling(source: str) -> Scaling:
    facts = _facts(source)
    (grad,) = gradient_calls(facts)
    return loss_scaling(facts, grad.target, grad.site.scope, grad.site.order).scaling


STEP = """
    import tensorflow as tf
    import keras
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        mse = tf.keras.losses.MeanSquaredError()
        per_example_mse = tf.keras.losses.MeanSquaredError(reduction=None)
    def step(x, y):
        with tf.GradientTape() as tape:
            LOSS
        grads = tape.gradient(loss, model.trainable_variables)
    strategy.run(step, args=(x, y))
"""


def _step(loss: str) -> str:
    return STEP.replace("LOSS", loss)


def test_the_function_given_to_strategy_run_runs_per_replica_and_knows_its_strategy():
    facts = _facts(_step("loss = 0.0"))
    (run,) = replica_runs(facts)
    assert run.function.name == "step"
    assert run.multi_replica and run.strategy.cls == "tensorflow.distribute.MirroredStrategy"


def test_helpers_called_from_a_replica_function_run_per_replica_too():
    facts = _facts("""
        import tensorflow as tf
        strategy = tf.distribute.TPUStrategy(resolver)
        def update(x):
            return x
        def unrelated(x):
            return x
        @tf.function
        def train(iterator):
            def step_fn(x):
                return update(x)
            strategy.run(step_fn, args=(next(iterator),))
    """)
    scopes = {s.name: s for s in facts.scopes}
    assert per_replica(facts, scopes["train.step_fn"]) is not None
    assert per_replica(facts, scopes["update"]) is not None
    assert per_replica(facts, scopes["unrelated"]) is None
    assert per_replica(facts, scopes["train"]) is None


def test_one_device_strategies_have_one_replica_and_unknown_strategies_none():
    one = _facts("""
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy(devices=["/gpu:0"])
        def step(x):
            return x
        strategy.run(step, args=(1,))
    """)
    assert not replica_runs(one)[0].multi_replica
    default = _facts("""
        import tensorflow as tf
        strategy = tf.distribute.get_strategy()
        def step(x):
            return x
        strategy.run(step, args=(1,))
    """)
    assert replica_runs(default) == []


def test_a_per_replica_mean_is_unscaled():
    assert _scaling(_step("loss = tf.reduce_mean(tf.square(model(x) - y))")) is Scaling.MEAN
    assert _scaling(_step("loss = keras.ops.mean(per_example_mse(y, model(x)))")) is Scaling.MEAN
    assert _scaling(_step("loss = 0.5 * tf.reduce_mean(tf.square(model(x) - y))")) is Scaling.MEAN


def test_losses_scaled_for_distribution_are_recognised():
    assert _scaling(_step(
        "loss = tf.nn.compute_average_loss(tf.square(model(x) - y), global_batch_size=64)")) is Scaling.SCALED
    assert _scaling(_step("loss = mse(y, model(x))")) is Scaling.SCALED
    assert _scaling(_step(
        "loss = tf.reduce_mean(tf.square(model(x) - y)) / strategy.num_replicas_in_sync")) is Scaling.SCALED
    assert _scaling(_step("loss = tf.reduce_sum(tf.square(model(x) - y)) / 64")) is Scaling.SCALED


def test_a_mean_of_an_already_scaled_loss_or_of_an_unknown_helper_is_not_judged():
    assert _scaling(_step("loss = tf.reduce_mean(mse(y, model(x)))")) is Scaling.UNSURE
    assert _scaling(_step("loss = tf.reduce_mean(helper(y, model(x)))")) is Scaling.UNSURE
    assert _scaling(_step("loss = tf.reduce_mean(tf.square(model(x) - y)) * scale")) is Scaling.UNSURE
    assert _scaling(_step("loss = tf.reduce_mean(tf.square(model(x) - y), axis=0)")) is Scaling.UNSURE
