"""The value model: what an expression may be at a program point.

Each program marks the questions with `probe(expr)` calls; the tests ask what `expr` may be there.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.values import Kind, flatten, is_unknown, values_of


def _probes(source: str) -> list[frozenset]:
    facts = Facts(cst.parse_module(textwrap.dedent(source)))
    return [values_of(facts, site.node.args[0].value, site.scope, site.order) for site in facts.calls_to("probe")]


def _kinds(values: frozenset) -> set[str]:
    return {v.kind.value for v in values}


def _classes(values: frozenset) -> set[str | None]:
    return {v.short_class for v in values}


def test_optimizers_unpacked_from_a_literal_tuple_of_pairs_in_a_for_loop():
    (opt,) = _probes("""
        import tensorflow as tf
        gen_opt = tf.keras.optimizers.Adam(1e-4)
        disc_opt = tf.keras.optimizers.RMSprop(1e-4)
        for layers, opt in ((gen_layers, gen_opt), (disc_layers, disc_opt)):
            probe(opt)
    """)
    assert _kinds(opt) == {"optimizer"}
    assert _classes(opt) == {"Adam", "RMSprop"}


def test_dict_of_optimizers_by_key_values_and_items():
    by_key, from_values, from_items = _probes("""
        import tensorflow as tf
        optimizers = {"gen": tf.keras.optimizers.Adam(1e-4), "disc": tf.keras.optimizers.SGD(0.1)}
        probe(optimizers["gen"])
        for o in optimizers.values():
            probe(o)
        for name, o2 in optimizers.items():
            probe(o2)
    """)
    assert _classes(by_key) == {"Adam"}
    assert _classes(from_values) == {"Adam", "SGD"}
    assert _classes(from_items) == {"Adam", "SGD"}


def test_list_concatenation_keeps_every_metric():
    (metric,) = _probes("""
        import tensorflow as tf
        mean_loss = tf.keras.metrics.Mean()
        metrics = [tf.keras.metrics.SparseCategoricalAccuracy()]
        for m in [mean_loss] + metrics:
            probe(m)
    """)
    assert _kinds(metric) == {"metric"}
    assert _classes(metric) == {"Mean", "SparseCategoricalAccuracy"}


def test_a_default_argument_is_the_object_made_once_at_def_time():
    inside, = _probes("""
        import tensorflow as tf
        def train(model, data, opt=tf.optimizers.Adam()):
            probe(opt)
    """)
    # No call site in sight: the default, or whatever an unseen caller passes.
    assert "optimizer" in _kinds(inside) and is_unknown(inside)


def test_parameters_follow_their_call_sites_and_defaults():
    (units,) = _probes("""
        class Agent:
            def __init__(self, action_dim=1):
                probe(action_dim)
        agent = Agent()
        other = Agent(action_dim=4)
    """)
    assert {v.const for v in units} == {1, 4}


def test_instance_attribute_set_by_a_factory_method():
    (model,) = _probes("""
        import tensorflow as tf
        class Trainer:
            def __init__(self):
                self.model = self.create_model()
            def create_model(self):
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])
            def step(self):
                probe(self.model)
    """)
    assert _kinds(model) == {"model"}


def test_class_attribute_versus_instance_attribute_and_module_name():
    class_attr, module_name = _probes("""
        import tensorflow as tf
        lr = 0.5
        class Config:
            lr = 1e-3
            def opt(self):
                probe(self.lr)
        probe(lr)
    """)
    assert {v.const for v in class_attr} == {1e-3}
    assert {v.const for v in module_name} == {0.5}


def test_comprehension_target_does_not_leak_into_the_enclosing_scope():
    inner, outer = _probes("""
        import tensorflow as tf
        z = tf.keras.optimizers.Adam()
        zs = [1, 2]
        ys = [probe(z) for z in zs]
        probe(z)
    """)
    assert _kinds(inner) == {"constant"}
    assert _kinds(outer) == {"optimizer"}


def test_a_name_means_its_latest_binding_in_document_order():
    first, second = _probes("""
        import tensorflow as tf
        model = tf.keras.applications.VGG16(weights=None)
        probe(model)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        probe(model)
    """)
    assert _classes(first) == {"VGG16"}
    assert _classes(second) == {"Sequential"}


def test_a_function_reads_the_global_it_sees_when_it_is_called():
    (seen,) = _probes("""
        import tensorflow as tf
        model = tf.keras.applications.VGG16(weights=None)
        def step():
            probe(model)
        step()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    """)
    assert _classes(seen) == {"VGG16"}


def test_conditional_rebinding_keeps_both_possibilities():
    (opt,) = _probes("""
        import tensorflow as tf
        opt = tf.keras.optimizers.SGD(0.1)
        if use_adam:
            opt = tf.keras.optimizers.Adam(1e-3)
        probe(opt)
    """)
    assert _classes(opt) == {"SGD", "Adam"}


def test_returned_model_from_a_factory_function():
    (model,) = _probes("""
        import tensorflow as tf
        def build(units):
            inputs = tf.keras.Input((4,))
            return tf.keras.Model(inputs, tf.keras.layers.Dense(units)(inputs))
        m = build(3)
        probe(m)
    """)
    assert _kinds(model) == {"model"}


def test_zip_pairs_and_weights():
    (pair,) = _probes("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for g, v in zip(grads, model.trainable_variables):
            probe(v)
    """)
    assert _kinds(pair) == {"variable"}
    (weights,) = {o for v in pair for o in v.owner}
    assert weights.kind is Kind.WEIGHTS


def test_unknown_is_an_answer():
    param, attribute, call = _probes("""
        def f(opt):
            probe(opt)
        probe(some_module_object.optimizer)
        probe(mystery())
    """)
    assert is_unknown(param) and is_unknown(attribute) and is_unknown(call)


def test_attribute_of_a_local_object_assigned_from_outside():
    (opt,) = _probes("""
        import tensorflow as tf
        class Agent:
            pass
        agent = Agent()
        agent.opt = tf.keras.optimizers.Adam()
        probe(agent.opt)
    """)
    assert _kinds(opt) == {"optimizer"}


def test_subclassed_keras_model_is_a_model():
    (model,) = _probes("""
        import tensorflow as tf
        class Net(tf.keras.Model):
            def call(self, x):
                return x
        net = Net()
        probe(net)
    """)
    assert _kinds(model) == {"model"} and _classes(model) == {"Net"}


def test_flatten_reaches_into_nested_containers():
    (nested,) = _probes("""
        import tensorflow as tf
        a = tf.keras.optimizers.Adam()
        probe([(1, [a])])
    """)
    assert "optimizer" in {v.kind.value for v in flatten(nested)}


def test_deep_chains_exhaust_the_budget_without_crashing():
    lines = ["import tensorflow as tf", "x0 = tf.keras.optimizers.Adam()"]
    lines += [f"x{i} = x{i - 1}" for i in range(1, 3000)]
    lines.append("probe(x2999)")
    (result,) = _probes("\n".join(lines))
    assert is_unknown(result) or _kinds(result) == {"optimizer"}


def test_gradients_keep_their_origin_through_clipping_zip_and_comprehensions():
    from tapelint.analysis.optimizers import applies_gradients_of

    source = textwrap.dedent("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        saliency_opt = tf.keras.optimizers.SGD()
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        saliency = tape.gradient(loss, x)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        grads = [tf.clip_by_norm(g, 0.5) for g in grads]
        opt.apply_gradients(zip(grads, model.trainable_variables))
    """)
    facts = Facts(cst.parse_module(source))
    first, second = [site.node for site in facts.gradient_calls()]
    assert [a.site.receiver for a in applies_gradients_of(facts, first)] == ["opt"]
    assert applies_gradients_of(facts, second) == []
