"""Which functions run traced by tf.function, how often their entries run, and which arguments are
Python numbers that change every iteration (tapelint/analysis/tracing.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.tracing import (
    Runs,
    changes_per_iteration,
    created_per_iteration,
    entry_calls,
    entry_runs,
    keras_step_traced,
    python_number,
    traced_scope,
    tracing,
)


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _traced_names(facts: Facts) -> list[str]:
    return sorted(t.scope.name for t in tracing(facts).scopes.values())


def _scope(facts: Facts, name: str):  # type: ignore[no-untyped-def]
    return next(s for s in facts.scopes if s.name == name)


PROGRAM = """
    import tensorflow as tf

    def helper(x):
        return x * 2

    def eager_only(x):
        return x + 1

    @tf.function
    def step(x, lr):
        def inner(y):
            return y
        return helper(inner(x)) * lr

    def plain(x):
        return x

    fast = tf.function(plain)

    class Trainer:
        def __init__(self):
            self.fn = tf.function(self.update)

        def update(self, x):
            return self.scale(x)

        def scale(self, x):
            return x

    for epoch in range(10):
        step(1.0, 0.1)
        fast(eager_only(2.0))
    fast(3.0)
"""


def test_decorated_wrapped_and_method_entries_and_the_helpers_they_call_run_traced():
    facts = _facts(PROGRAM)
    assert sorted((e.scope.name, e.how) for e in tracing(facts).entries) == [
        ("Trainer.update", "wrapped"), ("plain", "wrapped"), ("step", "decorated")]
    assert _traced_names(facts) == ["Trainer.scale", "Trainer.update", "helper", "plain", "step", "step.inner"]
    assert traced_scope(facts, _scope(facts, "eager_only")) is None
    via = traced_scope(facts, _scope(facts, "helper")).via
    assert [site.func for site in via] == ["helper"]


def test_entries_called_in_a_loop_run_many_times_and_unseen_callers_are_unknown():
    facts = _facts(PROGRAM)
    entries = {e.scope.name: e for e in tracing(facts).entries}
    assert entry_runs(facts, entries["step"]) is Runs.MANY
    assert [s.func for s in entry_calls(facts, entries["plain"])] == ["fast", "fast"]
    assert entry_runs(facts, entries["Trainer.update"]) is Runs.UNKNOWN


def test_a_function_called_once_at_module_level_runs_once():
    facts = _facts("""
        import tensorflow as tf

        @tf.function
        def export(x):
            return x
        export(1.0)
    """)
    (entry,) = tracing(facts).entries
    assert entry_runs(facts, entry) is Runs.ONCE


def test_calls_that_each_pass_a_new_object_traced_by_identity_trace_anew_and_share_no_trace():
    # tf.function tells a new Generator / tf.Module / model / plain object apart by identity (a new
    # trace per call, measured on TF 2.21), but not a new tf.Variable of the same spec (one trace).
    facts = _facts("""
        import tensorflow as tf

        @tf.function
        def draw(g):
            return g.normal([])
        draw(tf.random.Generator.from_seed(1))
        draw(tf.random.Generator.from_seed(2))

        @tf.function
        def read(v):
            return v.read_value()
        read(tf.Variable(1))
        read(tf.Variable(2))
    """)
    entries = {e.scope.name: e for e in tracing(facts).entries}
    assert entry_runs(facts, entries["draw"]) is Runs.ONCE
    assert entry_runs(facts, entries["read"]) is Runs.MANY


def test_run_functions_eagerly_makes_nothing_traced():
    facts = _facts("""
        import tensorflow as tf
        tf.config.run_functions_eagerly(True)

        @tf.function
        def step(x):
            return x
    """)
    assert tracing(facts).eager_switch and not tracing(facts).entries


KERAS = """
    import keras
    import tensorflow as tf

    class Net(keras.Model):
        def train_step(self, data):
            return self.log(data)

        def log(self, data):
            return {}

    model = Net()
    model.compile(optimizer="adam"{extra})
"""


def test_keras_train_step_is_traced_when_compiled_without_run_eagerly():
    facts = _facts(KERAS.replace("{extra}", ""))
    assert keras_step_traced(facts, _scope(facts, "Net.train_step")) is True
    assert _traced_names(facts) == ["Net.log", "Net.train_step"]


def test_keras_train_step_compiled_with_run_eagerly_is_not_traced():
    facts = _facts(KERAS.replace("{extra}", ", run_eagerly=True"))
    assert keras_step_traced(facts, _scope(facts, "Net.train_step")) is False
    assert _traced_names(facts) == []


def test_keras_train_step_with_an_unknown_compile_setting_is_unknown():
    facts = _facts(KERAS.replace("{extra}", ", run_eagerly=debug"))
    assert keras_step_traced(facts, _scope(facts, "Net.train_step")) is None
    uncompiled = _facts("""
        import keras

        class Net(keras.Model):
            def train_step(self, data):
                return {}
    """)
    assert keras_step_traced(uncompiled, _scope(uncompiled, "Net.train_step")) is None


def test_keras_train_step_under_another_backend_is_unknown():
    facts = _facts("""
        import os
        os.environ["KERAS_BACKEND"] = "jax"
        import keras

        class Net(keras.Model):
            def train_step(self, state, data):
                return {}

        Net().compile(optimizer="adam")
    """)
    assert keras_step_traced(facts, _scope(facts, "Net.train_step")) is None


def test_loop_counters_and_values_computed_from_them_change_every_iteration():
    facts = _facts("""
        import tensorflow as tf
        count = 0
        flag = True
        for epoch in range(5):
            lr = 0.1 * 0.5 ** epoch
            count += 1
            for i, batch in enumerate(data):
                f(epoch, lr, count, i, tf.constant(epoch), epoch % 2, 0.1, flag, batch)
    """)
    site = next(s for s in facts.calls if s.func == "f")
    drivers = [changes_per_iteration(facts, a.value, site.scope, site.order) for a in site.node.args]
    assert drivers == ["epoch", "epoch", "count", "i", None, None, None, None, None]
    assert python_number(facts, site.node.args[6].value, site.scope, site.order)
    assert not python_number(facts, site.node.args[7].value, site.scope, site.order)


def test_a_counter_started_from_a_tensor_is_not_a_python_number():
    facts = _facts("""
        import tensorflow as tf
        step = tf.constant(0)
        for x in data:
            step += 1
            f(step)
    """)
    site = next(s for s in facts.calls if s.func == "f")
    assert changes_per_iteration(facts, site.node.args[0].value, site.scope, site.order) is None


def test_a_tf_function_made_and_called_in_each_iteration_is_created_per_iteration():
    facts = _facts("""
        import tensorflow as tf

        def body(x):
            return x

        for x in data:
            once = tf.function(body)
            once(x)

        for model in models:
            per_model = tf.function(body)
            for x in data:
                per_model(x)
    """)
    found = {e.node: created_per_iteration(facts, e) for e in tracing(facts).entries}
    assert sorted(loop is not None for loop in found.values()) == [False, True]
