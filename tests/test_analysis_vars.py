"""Which variable sets an optimizer steps (optimizers.optimizer_steps), which tf.Variables a Keras 3 layer
does not track (tracking.py), and which weight lists are read before a model is built (model_build.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.optimizers import builds_with_all_variables, optimizer_creations, optimizer_steps
from tapelint.analysis.values import Kind, values
from tapelint.rules._tl305_tracking import untracked_variables
from tapelint.rules._tl306_model_build import unbuilt_at_creation, weights_read_before_build


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _step_names(facts: Facts, holder: str, compiled: bool = False) -> list[list[list[str]]] | None:
    creation = next(c for c in optimizer_creations(facts) if c.holder is not None and c.holder.target == holder)
    steps = optimizer_steps(facts, creation, compiled=compiled)
    if steps is None:
        return None
    out = []
    for step in steps:
        sets = []
        for one in step.sets:
            names = sorted(b.target for o in one for b in facts.bindings_of_value(o.node))
            sets.append(names)
        out.append(sorted(sets))
    return out


GAN = """
    import tensorflow as tf
    g = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    d = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.Adam()
    other = tf.keras.optimizers.Adam()
"""


def test_two_apply_calls_step_two_sets():
    facts = _facts(GAN + """
    def step(gt, dt, gl, dl):
        opt.apply_gradients(zip(dt.gradient(dl, d.trainable_variables), d.trainable_variables))
        opt.apply_gradients(zip(gt.gradient(gl, g.trainable_variables), g.trainable_variables))
    """)
    assert _step_names(facts, "opt") == [[["d"]], [["g"]]]


def test_a_concatenation_is_one_set():
    facts = _facts(GAN + """
    def step(tape, loss):
        vs = g.trainable_variables + d.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, vs), vs))
    """)
    assert _step_names(facts, "opt") == [[["d", "g"]]]


def test_a_parameter_given_two_models_splits_only_for_an_optimizer_made_once():
    shared = _facts(GAN + """
    def update(model, tape, loss):
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    update(g, t1, l1)
    update(d, t2, l2)
    """)
    assert _step_names(shared, "opt") == [[["d"], ["g"]]]
    per_call = _facts("""
    import tensorflow as tf
    g = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    d = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    def fit(model, tape, loss):
        opt = tf.keras.optimizers.Adam()
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    fit(g, t1, l1)
    fit(d, t2, l2)
    """)
    assert _step_names(per_call, "opt") == [[["d", "g"]]]


def test_an_apply_call_that_may_use_another_optimizer_is_left_out():
    facts = _facts(GAN + """
    def update(model, optimizer, tape, loss):
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    update(g, opt, t1, l1)
    update(d, other, t2, l2)
    """)
    assert _step_names(facts, "opt") == []


def test_compile_counts_only_when_asked_and_build_is_seen():
    facts = _facts(GAN + """
    g.compile(optimizer=opt, loss="mse")
    d.compile(optimizer=opt, loss="mse")
    opt.build(g.trainable_variables + d.trainable_variables)
    """)
    assert _step_names(facts, "opt") == []
    assert _step_names(facts, "opt", compiled=True) == [[["g"]], [["d"]]]
    creation = next(c for c in optimizer_creations(facts) if c.holder.target == "opt")
    assert builds_with_all_variables(facts, creation)


def test_untracked_variables_of_keras_layers_only():
    facts = _facts("""
    import tensorflow as tf
    import keras
    class A(tf.keras.layers.Layer):
        def build(self, shape):
            self.w = tf.Variable(tf.zeros((shape[-1], 1)))
            self.n = tf.Variable(0, trainable=False)
            self.k = keras.Variable(1.0)
            self.v = self.add_weight(shape=(1,))
    class B(tf.Module):
        def __init__(self):
            self.w = tf.Variable(1.0)
    class C(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.t = tf.Variable(1.0)
    """)
    found = {(u.cls, u.attribute): (u.kind, u.trainable) for u in untracked_variables(facts)}
    assert found == {("A", "w"): (Kind.LAYER, True), ("A", "n"): (Kind.LAYER, False), ("C", "t"): (Kind.MODEL, True)}


def test_an_untracked_variable_given_to_the_tape_is_differentiated():
    facts = _facts("""
    import tensorflow as tf
    class A(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(1.0)
    layer = A()
    with tf.GradientTape() as tape:
        loss = layer(x)
    grads = tape.gradient(loss, [layer.w])
    """)
    (found,) = untracked_variables(facts)
    assert found.differentiated


def test_unbuilt_models_at_creation():
    facts = _facts("""
    import tensorflow as tf
    a = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    b = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    c = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    d = tf.keras.Sequential()
    d.add(tf.keras.layers.Dense(1))
    e = tf.keras.Sequential()
    e.add(tf.keras.Input((3,)))
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(1)
    class Built(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(1)
            self(tf.zeros((1, 3)))
    f = Net()
    h = Built()
    i = tf.keras.Model(inp, out)
    """)
    resolver = values(facts)
    state = {}
    for name in "abcdefhi":
        (binding,) = [b for b in facts.bindings if b.target == name]
        (model,) = resolver.binding_values(binding)
        state[name] = unbuilt_at_creation(facts, model)
    assert state == {"a": True, "b": False, "c": False, "d": True, "e": False, "f": True, "h": False, "i": False}


def test_a_weight_list_read_before_the_first_call_and_differentiated():
    facts = _facts("""
    import tensorflow as tf
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    early = model.trainable_variables
    model(tf.zeros((1, 3)))
    late = model.trainable_variables
    with tf.GradientTape() as tape:
        loss = model(x)
    g1 = tape.gradient(loss, early)
    g2 = tape.gradient(loss, late)
    """)
    (found,) = weights_read_before_build(facts)
    assert found.binding.target == "early" and found.used_at.func == "tape.gradient"


def test_build_of_a_subclass_without_its_own_build_does_not_build_it():
    source = """
    import tensorflow as tf
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(1)
        def call(self, x):
            return self.d(x)
    net = Net()
    net.build((None, 3))
    params = net.trainable_variables
    with tf.GradientTape() as tape:
        loss = net(x)
    grads = tape.gradient(loss, params)
    """
    assert [f.binding.target for f in weights_read_before_build(_facts(source))] == ["params"]
    with_build = source.replace("        def call(self, x):", "        def build(self, shape):\n            self.d.build(shape)\n        def call(self, x):")
    assert weights_read_before_build(_facts(with_build)) == []


def test_a_model_class_trained_with_fit_is_fitted_even_if_a_loop_differentiates_its_variable():
    facts = _facts("""
    import tensorflow as tf
    class M(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(5.0)
        def call(self, x):
            return self.w * x
    def train(model, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        return tape.gradient(loss, [model.w])
    m = M()
    train(m, x, y)
    k = M()
    k.compile("sgd", "mse")
    k.fit(x, y)
    """)
    (found,) = untracked_variables(facts)
    assert found.differentiated and found.fitted
