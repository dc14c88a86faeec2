"""What kind of tensor a `tape.gradient` source is (rules/_tl007_sources.py).

Each program asks about the sources of its `tape.gradient` calls, in order.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.gradients import gradient_calls
from tapelint.rules._tl007_sources import copied_from, recorded_in, source_kind


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _kinds(source: str, watches_variables: bool | None = True) -> list:
    facts = _facts(source)
    return [source_kind(facts, g.sources, g.site.scope, g.site.order, watches_variables)
            for g in gradient_calls(facts)]


def test_tensor_from_a_factory_is_a_certain_plain_tensor():
    (kind,) = _kinds("""
        import tensorflow as tf
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            y = x * x
        tape.gradient(y, x)
    """)
    assert kind is not None and kind.certain and not kind.variable
    assert "from `tf.constant`" in kind.what


def test_trainable_variable_is_not_reported_unless_the_tape_ignores_accessed_variables():
    source = """
        import tensorflow as tf
        w = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            y = w * w
        tape.gradient(y, w)
    """
    assert _kinds(source) == [None]
    (kind,) = _kinds(source, watches_variables=False)
    assert kind is not None and kind.variable and "watch_accessed_variables=False" in kind.what


def test_non_trainable_variable_held_on_self_is_reported():
    (kind,) = _kinds("""
        import tensorflow as tf
        class Search:
            def __init__(self):
                self.z = tf.Variable(tf.zeros(3), trainable=False)
            def step(self):
                with tf.GradientTape() as tape:
                    y = tf.reduce_sum(self.z)
                return tape.gradient(y, self.z)
    """)
    assert kind is not None and kind.variable and "trainable=False" in kind.what


def test_arithmetic_on_a_variable_and_on_a_tensor_are_plain_tensors():
    on_variable, on_tensor = _kinds("""
        import tensorflow as tf
        a = tf.Variable(2.0) + 1.0
        b = tf.ones(3) * 2.0
        with tf.GradientTape(persistent=True) as tape:
            y = a * b
        tape.gradient(y, a)
        tape.gradient(y, b)
    """)
    assert on_variable is not None and "arithmetic on a `tf.Variable`" in on_variable.what
    assert on_tensor is not None and "arithmetic result" in on_tensor.what


def test_sum_of_weight_collections_is_a_list_not_a_tensor():
    assert _kinds("""
        import tensorflow as tf
        enc = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        dec = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        params = enc.trainable_variables + dec.trainable_variables
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(dec(enc(tf.ones((1, 2)))))
        tape.gradient(y, params)
    """) == [None]


def test_tensor_returned_by_a_helper_and_by_a_renamed_library_function():
    from_helper, from_alias = _kinds("""
        import numpy as np
        import tensorflow as tf
        preprocess = tf.keras.applications.resnet50.preprocess_input
        def load(path):
            return tf.convert_to_tensor(np.zeros(3))
        image = load("cat.png")
        batch = preprocess(np.zeros((1, 224, 224, 3)))
        with tf.GradientTape(persistent=True) as tape:
            y = tf.reduce_sum(image) + tf.reduce_sum(batch)
        tape.gradient(y, image)
        tape.gradient(y, batch)
    """)
    assert from_helper is not None and "tf.convert_to_tensor" in from_helper.what
    assert from_alias is not None and "keras.applications.resnet50.preprocess_input" in from_alias.what


def test_parameter_is_a_tensor_only_when_every_caller_passes_one():
    (every,) = _kinds("""
        import tensorflow as tf
        def saliency(model, x):
            with tf.GradientTape() as tape:
                y = model(x)
            return tape.gradient(y, x)
        saliency(None, tf.constant([1.0]))
        saliency(None, tf.random.normal((1,)))
    """)
    assert every is not None and not every.certain and "passed in as `x`" in every.what
    assert _kinds("""
        import tensorflow as tf
        def saliency(model, x):
            with tf.GradientTape() as tape:
                y = model(x)
            return tape.gradient(y, x)
        saliency(None, tf.constant([1.0]))
        saliency(None, tf.Variable([1.0]))
    """) == [None]


def test_batch_of_a_dataset_is_a_tensor_but_a_loop_over_weights_is_not():
    batch, weight = _kinds("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        dataset = tf.data.Dataset.from_tensor_slices(tf.zeros((8, 4))).batch(4)
        for images in dataset:
            with tf.GradientTape() as tape:
                y = model(images)
            tape.gradient(y, images)
        for v in model.trainable_variables:
            with tf.GradientTape() as tape:
                y = v * 2.0
            tape.gradient(y, v)
    """)
    assert batch is not None and batch.certain and "`tf.data` pipeline" in batch.what
    assert weight is None


def test_a_loop_over_something_named_like_data_is_not_evidence():
    """`loader`, `train_ds`, `batches`: names prove nothing (a generator may yield variables)."""
    assert _kinds("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for images in train_loader:
            with tf.GradientTape() as tape:
                y = model(images)
            tape.gradient(y, images)
        for images in make_dataset().batch(4):
            with tf.GradientTape() as tape:
                y = model(images)
            tape.gradient(y, images)
    """) == [None, None]


def test_a_name_that_may_hold_a_variable_on_one_path_is_not_reported():
    assert _kinds("""
        import tensorflow as tf
        x = tf.constant(1.0)
        if flag:
            x = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            y = x * x
        tape.gradient(y, x)
    """) == [None]


def test_a_chain_of_names_that_refer_to_each_other_ends():
    assert _kinds("""
        import tensorflow as tf
        def f(a):
            return f(a)
        x = f(1)
        with tf.GradientTape() as tape:
            y = x * x
        tape.gradient(y, x)
    """) == [None]


def test_copies_and_intermediate_results():
    facts = _facts("""
        import tensorflow as tf
        x = tf.constant(1.0)
        inp = x
        with tf.GradientTape() as tape:
            z = inp * 2.0
        tape.gradient(z, [inp, z])
    """)
    (grad,) = gradient_calls(facts)
    site = grad.site
    assert copied_from(facts, "inp", site.scope, site.order) == {"inp", "x"}
    assert recorded_in(facts, grad.tape, "z", site.scope, site.order)
    assert not recorded_in(facts, grad.tape, "inp", site.scope, site.order)
