"""Where a loss was computed, relative to its tape: the questions of tapelint/analysis/loss_flow.py."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.dataflow import render
from tapelint.analysis.facts import Facts
from tapelint.analysis.gradients import GradientCall, gradient_calls
from tapelint.analysis.values import latest_assignment
from tapelint.analysis.loss_flow import (
    calls_loss_or_metric_member,
    forward_pass_before_tape,
    is_computation,
    is_keras_optimizer,
    is_loss_or_metric,
    loss_assignment,
    loss_computed_outside,
    precomputed_minimize_loss,
    weights_combined_outside_call,
)


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _grad(source: str) -> tuple[Facts, GradientCall]:
    facts = _facts(source)
    (grad,) = gradient_calls(facts)
    return facts, grad


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


STEP = """
import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

def step(x, y):
{body}
"""


def _step(body: str) -> tuple[Facts, GradientCall]:
    return _grad(STEP.format(body=textwrap.indent(textwrap.dedent(body), "    ")))


def test_the_loss_assignment_is_the_last_one_before_the_gradient_call():
    facts, grad = _step("""
        loss = 0.0
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    binding = loss_assignment(facts, grad)
    assert binding is not None and grad.tape.encloses(binding.order)
    assert _code(binding.value) == "tf.reduce_mean(model(x) - y)"
    assert latest_assignment(facts, "loss", grad.site.scope, grad.tape.order) is not binding


def test_a_loss_written_into_the_gradient_call_has_no_assignment():
    facts, grad = _step("""
        with tf.GradientTape() as tape:
            loss = model(x)
        grads = tape.gradient(-loss, model.trainable_variables)
    """)
    assert loss_assignment(facts, grad) is None


def test_a_loss_computed_after_the_block_is_outside():
    facts, grad = _step("""
        with tf.GradientTape() as tape:
            logits = model(x)
        loss = tf.reduce_mean(logits - y)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    outside = loss_computed_outside(facts, grad)
    assert outside is not None
    assert (outside.name, outside.where, _code(outside.node)) == ("loss", "after", "loss")


def test_an_alias_of_a_loss_computed_before_the_block_is_followed():
    facts, grad = _step("""
        total = tf.reduce_mean(model(x) - y)
        loss = total
        with tf.GradientTape() as tape:
            tape.watch(x)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    outside = loss_computed_outside(facts, grad)
    assert outside is not None and outside.where == "before" and _code(outside.node) == "total"


def test_an_expression_written_into_the_gradient_call_after_the_block_is_outside():
    facts, grad = _step("""
        with tf.GradientTape() as tape:
            loss = model(x)
        grads = tape.gradient(-loss, model.trainable_variables)
    """)
    outside = loss_computed_outside(facts, grad)
    assert outside is not None and (outside.name, outside.where) == ("-loss", "after")


def test_a_loss_computed_inside_the_block_or_only_renamed_after_it_is_not_outside():
    inside = _step("""
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    renamed = _step("""
        with tf.GradientTape() as tape:
            total = tf.reduce_mean(model(x) - y)
        loss = total
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    assert loss_computed_outside(*inside) is None
    assert loss_computed_outside(*renamed) is None


def test_the_forward_pass_before_the_tape_is_found_through_assignments_in_the_block():
    facts, grad = _step("""
        preds = model(x, training=True)
        with tf.GradientTape() as tape:
            error = preds - y
            loss = tf.reduce_mean(error * error)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    forward = forward_pass_before_tape(facts, grad, "model")
    assert forward is not None and render(forward.node) == "model(x, training=True)"
    assert forward_pass_before_tape(facts, grad, "other") is None


def test_no_forward_pass_before_the_tape_when_the_model_runs_inside_it():
    facts, grad = _step("""
        with tf.GradientTape() as tape:
            preds = model(x, training=True)
            loss = tf.reduce_mean(preds - y)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    assert forward_pass_before_tape(facts, grad, "model") is None


def test_a_long_chain_of_assignments_in_the_block_is_followed_without_recursion():
    chain = "\n".join(f"            v{i + 1} = v{i} + v{i}" for i in range(600))
    facts, grad = _step(f"""
        v0 = model(x)
        with tf.GradientTape() as tape:
{chain}
            loss = tf.reduce_sum(v600)
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    # Too far from the loss to be followed: a bounded answer, not a crash.
    assert forward_pass_before_tape(facts, grad, "model") is None


def test_an_attribute_holding_a_keras_loss_or_metric_is_not_a_forward_pass():
    facts = _facts("""
        import tensorflow as tf

        class Trainer(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.loss_fn = tf.keras.losses.MeanSquaredError()
                self.tracker = tf.keras.metrics.Mean()
                self.head = tf.keras.layers.Dense(1)

            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = self.loss_fn(y, self.head(x))
                self.tracker.update_state(loss)
                self.other(x)
    """)
    calls = {c.func: c for c in facts.calls}
    assert calls_loss_or_metric_member(facts, calls["self.loss_fn"], "self.loss_fn")
    assert calls_loss_or_metric_member(facts, calls["self.tracker.update_state"], "self.tracker")
    assert not calls_loss_or_metric_member(facts, calls["self.head"], "self.head")
    assert not calls_loss_or_metric_member(facts, calls["self.other"], "self.other")  # unknown: in doubt
    site = calls["self.loss_fn"]
    assert not is_loss_or_metric(facts, site.node.args[0].value, site.scope, site.order)


MINIMIZE = """
import tensorflow as tf
w = tf.Variable(1.0)
opt = tf.keras.optimizers.Adam(0.1)
{body}
"""


def _minimize(body: str):  # type: ignore[no-untyped-def]
    facts = _facts(MINIMIZE.format(body=textwrap.dedent(body)))
    (site,) = [c for c in facts.calls if c.method == "minimize"]
    return facts, site


def test_minimize_of_a_finished_tensor_without_a_tape_is_precomputed():
    found = precomputed_minimize_loss(*_minimize("""
        error = tf.square(w - 3.0)
        opt.minimize(error, var_list=[w])
    """))
    assert found is not None and (found.name, found.form, _code(found.node)) == ("error", "tensor", "error")


def test_minimize_of_a_lambda_returning_a_finished_tensor_is_precomputed():
    found = precomputed_minimize_loss(*_minimize("""
        cost = tf.square(w - 3.0)
        opt.minimize(lambda: cost, var_list=[w])
    """))
    assert found is not None and (found.name, found.form, _code(found.node)) == ("cost", "callable", "lambda: cost")


def test_minimize_that_computes_its_loss_or_gets_a_tape_is_not_precomputed():
    computes = _minimize("opt.minimize(lambda: tf.square(w - 3.0), var_list=[w])\n")
    with_tape = _minimize("""
        error = tf.square(w - 3.0)
        opt.minimize(error, var_list=[w], tape=tf.GradientTape())
    """)
    assert precomputed_minimize_loss(*computes) is None
    assert precomputed_minimize_loss(*with_tape) is None


def test_only_a_keras_optimizer_receiver_counts():
    facts, site = _minimize("""
        other = make_optimizer()
        other.minimize(tf.square(w), var_list=[w])
    """)
    assert not is_keras_optimizer(facts, site.node.func.value, site)
    facts, site = _minimize("opt.minimize(lambda: w, var_list=[w])\n")
    assert is_keras_optimizer(facts, site.node.func.value, site)


def test_variables_combined_in_build_and_read_in_call_are_found():
    facts = _facts("""
        import tensorflow as tf

        class NoisyDense(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w_mu = self.add_weight(shape=(3, 4))
                self.w_sigma = self.add_weight(shape=(3, 4))
                self.kernel = self.w_mu + self.w_sigma * tf.random.normal((3, 4))
                self.scale = 2.0

            def call(self, x):
                return tf.matmul(x, self.kernel) * self.scale
    """)
    (combined,) = weights_combined_outside_call(facts)
    assert (combined.binding.target, combined.variable, combined.method) == ("self.kernel", "self.w_mu", "build")


def test_variables_combined_again_in_call_are_not_found():
    facts = _facts("""
        import tensorflow as tf

        class NoisyDense(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w_mu = self.add_weight(shape=(3, 4))
                self.kernel = self.w_mu * 2.0

            def call(self, x):
                self.kernel = self.w_mu * tf.random.normal((3, 4))
                return tf.matmul(x, self.kernel)
    """)
    assert weights_combined_outside_call(facts) == []


def test_names_constants_elements_and_new_variables_are_no_computation():
    facts = _facts("import tensorflow as tf\n")

    def expr(text: str) -> cst.BaseExpression:
        return cst.parse_expression(text)

    for text in ("loss", "1.0", "model.losses", "outputs[0]", "(a, [b, 'c'])", "tf.Variable(0.0)", "list(xs)"):
        assert not is_computation(facts, expr(text)), text
    for text in ("a + b", "-a", "f(a)", "(a, b * 2)", "a if c else b"):
        assert is_computation(facts, expr(text)), text
    nested = "(" * 300 + "a + b" + ",)" * 300
    assert is_computation(facts, expr(nested))


def test_an_attribute_assigned_from_a_parameter_is_not_taken_for_a_loss():
    facts = _facts("""
        import tensorflow as tf

        class Trainer(tf.keras.Model):
            def __init__(self, loss_fn):
                super().__init__()
                self.loss_fn = loss_fn

            def train_step(self, data):
                return self.loss_fn(data)
    """)
    (site,) = facts.calls_to("self.loss_fn")
    assert not calls_loss_or_metric_member(facts, site, "self.loss_fn")


def test_a_loss_object_handed_in_through_the_constructor_is_a_loss():
    facts = _facts("""
        import tensorflow as tf

        class Trainer:
            def __init__(self, model, loss_fn):
                self.model = model
                self.loss_fn = loss_fn

            def step(self, x, y):
                return self.loss_fn(y, self.model(x))

        trainer = Trainer(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.losses.MeanSquaredError())
    """)
    calls = {c.func: c for c in facts.calls}
    assert calls_loss_or_metric_member(facts, calls["self.loss_fn"], "self.loss_fn")
    assert not calls_loss_or_metric_member(facts, calls["self.model"], "self.model")
