"""Layer and model outputs: where a tensor came from, its last-axis units, guards around a probability,
and which models a gradient is taken for.

Each program marks the questions with `probe(expr)` calls; the tests ask about `expr` there.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tapelint.analysis.facts import Facts
from tapelint.analysis.keras import SAME_WIDTH_LAYERS, Output
from tapelint.analysis.models import model_reader
from tapelint.analysis.outputs import (
    gradient_owners,
    is_model,
    last_axis_units,
    origins,
    output_model,
    prediction_kind,
    single_output,
    strip_guards,
)


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _probes(facts: Facts):  # type: ignore[no-untyped-def]
    return [(site.node.args[0].value, site.scope, site.order) for site in facts.calls_to("probe")]


def _code(facts: Facts, node: cst.CSTNode | None) -> str | None:
    return None if node is None else facts.module.code_for_node(node)


# ----------------------------------------------------------------------------- origins


def test_a_name_is_followed_through_a_chain_of_assignments_to_the_call_that_made_it():
    facts = _facts("""
        import tensorflow as tf
        logits = model(x)
        scores = logits
        probe(scores)
    """)
    ((expr, scope, order),) = _probes(facts)
    found = origins(facts, expr, scope, order)
    assert [_code(facts, o.expr) for o in found] == ["model(x)"]


def test_a_conditional_rebinding_gives_both_origins():
    facts = _facts("""
        h = first(x)
        if training:
            h = second(x)
        probe(h)
    """)
    ((expr, scope, order),) = _probes(facts)
    assert sorted(_code(facts, o.expr) for o in origins(facts, expr, scope, order)) == ["first(x)", "second(x)"]


def test_a_parameter_is_followed_to_its_call_sites_only_when_asked():
    facts = _facts("""
        def head(t):
            probe(t)
        head(dense(x))
    """)
    ((expr, scope, order),) = _probes(facts)
    assert [_code(facts, o.expr) for o in origins(facts, expr, scope, order)] == ["dense(x)"]
    assert origins(facts, expr, scope, order, through_params=False) is None


def test_unpacked_and_augmented_names_have_no_known_origin():
    facts = _facts("""
        a, b = pair()
        probe(a)
        c = start()
        c += 1
        probe(c)
    """)
    (a, c) = _probes(facts)
    assert origins(facts, *a) is None
    assert origins(facts, *c) is None


def test_a_very_long_chain_of_assignments_neither_overflows_nor_answers_wrongly():
    lines = ["x0 = make()"] + [f"x{i} = x{i - 1}" for i in range(1, 3000)] + ["probe(x2999)"]
    facts = _facts("\n".join(lines))
    ((expr, scope, order),) = _probes(facts)
    found = origins(facts, expr, scope, order)
    assert found is None or [_code(facts, o.expr) for o in found] == ["make()"]


# ----------------------------------------------------------------------------- units


def test_units_of_a_functional_layer_application_and_of_a_name_bound_to_it():
    facts = _facts("""
        import tensorflow as tf
        n = 1
        h = tf.keras.layers.Dense(n)(x)
        probe(h)
        probe(tf.keras.layers.Conv2D(4, 3)(x))
    """)
    (h, conv) = _probes(facts)
    assert last_axis_units(facts, *h) == 1
    assert last_axis_units(facts, *conv) == 4


def test_units_of_a_layer_held_by_self_are_read_through_the_value_model():
    facts = _facts("""
        import tensorflow as tf
        class Scorer(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.score = tf.keras.layers.Dense(1)
            def call(self, x):
                logit = self.score(x)
                probe(logit)
    """)
    ((expr, scope, order),) = _probes(facts)
    assert last_axis_units(facts, expr, scope, order) == 1


def test_units_that_differ_between_branches_are_unknown_and_a_sequential_gives_its_last_layers():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(1), tf.keras.layers.Dropout(0.1)])
        opaque = build_somewhere_else()
        h = tf.keras.layers.Dense(1)(x)
        if wide:
            h = tf.keras.layers.Dense(3)(x)
        probe(h)
        probe(model(x))
        probe(opaque(x))
    """)
    (branch, from_model, from_opaque) = _probes(facts)
    assert last_axis_units(facts, *branch) is None
    assert last_axis_units(facts, *from_model) == 1
    assert last_axis_units(facts, *from_opaque) is None


@pytest.mark.parametrize("layer", sorted(SAME_WIDTH_LAYERS))
def test_every_width_keeping_layer_keeps_the_width_in_a_sequential_and_in_a_functional_graph(layer):
    facts = _facts(f"""
        import tensorflow as tf
        stacked = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dense(3), tf.keras.layers.{layer}()])
        added = tf.keras.Sequential()
        added.add(tf.keras.layers.Dense(3))
        added.add(tf.keras.layers.{layer}())
        probe(stacked(x))
        probe(added(x))
        probe(tf.keras.layers.{layer}()(tf.keras.layers.Dense(3)(x)))
        kept = tf.keras.layers.{layer}()
        h = tf.keras.layers.Dense(3)(x)
        probe(kept(h))
    """)
    assert [last_axis_units(facts, *probed) for probed in _probes(facts)] == [3, 3, 3, 3]


def test_a_layer_that_may_change_the_width_after_the_last_dense_leaves_it_unknown():
    facts = _facts("""
        import tensorflow as tf
        from mylib import Head
        h = tf.keras.layers.Dense(3)(x)
        probe(tf.keras.layers.Lambda(lambda t: t)(h))
        probe(tf.keras.layers.Reshape((3, 1))(h))
        probe(tf.keras.layers.Flatten()(h))
        probe(Head()(h))
        probe(tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Permute((2, 1))])(x))
    """)
    assert [last_axis_units(facts, *probed) for probed in _probes(facts)] == [None] * 5


def test_a_model_applied_in_a_graph_gives_the_width_its_output_has():
    facts = _facts("""
        import tensorflow as tf
        inputs = tf.keras.Input((4,))
        head = tf.keras.Model(inputs, tf.keras.layers.Softmax()(tf.keras.layers.Dense(5)(inputs)))
        nested = tf.keras.Sequential([tf.keras.layers.Dense(8), head, tf.keras.layers.Dropout(0.1)])
        class Net(tf.keras.Model):
            def call(self, x):
                return tf.keras.layers.Activation("sigmoid")(tf.keras.layers.Dense(5)(x))
        probe(head(x))
        probe(nested(x))
        probe(Net()(x))
    """)
    assert [last_axis_units(facts, *probed) for probed in _probes(facts)] == [5, 5, 5]


# ----------------------------------------------------------------------------- guards and probabilities


def test_guards_around_a_probability_are_stripped():
    facts = _facts("""
        import tensorflow as tf
        from tensorflow.keras import backend as K
        EPS = 1e-7
        probe(p + 1e-10)
        probe(tf.clip_by_value(p, 1e-7, 1 - 1e-7))
        probe(tf.maximum(EPS, p))
        probe(1 - p)
        probe(p + K.epsilon())
        probe(tf.clip_by_value(p + EPS, 0.0, 1.0))
    """)
    for expr, scope, order in _probes(facts):
        assert _code(facts, strip_guards(facts, expr, scope, order)) == "p"


def test_a_sum_of_two_tensors_is_not_a_guard():
    facts = _facts("""
        probe(p + q)
        probe(tf.maximum(p, q))
    """)
    for expr, scope, order in _probes(facts):
        assert strip_guards(facts, expr, scope, order) is expr


def test_a_clipped_parameter_of_a_loss_helper_holds_what_its_call_sites_pass():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
        def bce(y_true, y_pred):
            y_pred = tf.clip_by_value(y_pred, 1e-7, 1 - 1e-7)
            probe(y_pred)
        bce(y, model(x))
    """)
    ((expr, scope, order),) = _probes(facts)
    info = prediction_kind(facts, expr, scope, order)
    assert info.kind is Output.PROBABILITIES and info.activation == "sigmoid"


def test_a_loss_given_to_compile_receives_the_model_output():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax")])
        def my_loss(y_true, y_pred):
            probe(y_pred + 1e-9)
        model.compile(optimizer="adam", loss=my_loss)
    """)
    ((expr, scope, order),) = _probes(facts)
    assert prediction_kind(facts, expr, scope, order).kind is Output.PROBABILITIES


def test_call_sites_that_disagree_give_unknown():
    facts = _facts("""
        import tensorflow as tf
        def xent(y, p):
            probe(p)
        xent(y, tf.nn.softmax(z))
        xent(y, z2)
    """)
    ((expr, scope, order),) = _probes(facts)
    assert prediction_kind(facts, expr, scope, order).kind is Output.UNKNOWN


# ----------------------------------------------------------------------------- models


def test_the_model_behind_an_output_and_whether_it_has_one_output():
    facts = _facts("""
        import tensorflow as tf
        seq = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        inputs = tf.keras.Input(shape=(4,))
        two = tf.keras.Model(inputs, [tf.keras.layers.Dense(3)(inputs), tf.keras.layers.Dense(1)(inputs)])
        logits = seq(x)
        probe(logits)
        probe(two(x))
        probe(other(x))
    """)
    (single, double, unknown) = _probes(facts)
    model = output_model(facts, *single)
    assert model is not None and single_output(model)
    model = output_model(facts, *double)
    assert model is not None and not single_output(model)
    assert output_model(facts, *unknown) is None


def test_the_models_a_gradient_is_taken_for_come_from_the_weights_among_its_sources():
    facts = _facts("""
        import tensorflow as tf
        gen = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        disc = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        with tf.GradientTape() as tape:
            loss = disc(gen(z))
        gen_vars = gen.trainable_variables
        tape.gradient(loss, gen_vars)
        tape.gradient(loss, gen.trainable_variables + disc.trainable_variables)
        tape.gradient(loss, [*disc.trainable_variables])
        tape.gradient(loss, mystery)
    """)
    reader = model_reader(facts)
    gen_site = next(s for s in facts.calls if s.func == "gen")
    disc_site = next(s for s in facts.calls if s.func == "disc")
    gen = reader.model_of(gen_site.node.func, gen_site.scope, gen_site.order)
    disc = reader.model_of(disc_site.node.func, disc_site.scope, disc_site.order)
    one, both, starred, unknown = (gradient_owners(facts, s) for s in facts.gradient_calls())

    def names(owners):  # type: ignore[no-untyped-def]
        return {label for label, info in (("gen", gen), ("disc", disc)) if any(is_model(v, info) for v in owners.models)}

    assert names(one) == {"gen"} and not one.unknown
    assert names(both) == {"gen", "disc"}
    assert names(starred) == {"disc"}
    assert names(unknown) == set() and unknown.unknown


def test_a_subclass_trained_through_self_is_the_model_read_for_its_class():
    facts = _facts("""
        import tensorflow as tf
        class Net(tf.keras.Model):
            def train_step(self, data):
                with tf.GradientTape() as tape:
                    loss = self(data)
                tape.gradient(loss, self.trainable_weights)
    """)
    (site,) = facts.gradient_calls()
    info = model_reader(facts).model_of(cst.parse_expression("self"), site.scope, site.order)
    owners = gradient_owners(facts, site)
    assert info is not None and any(is_model(v, info) for v in owners.models)


# ----------------------------------------------------------------------------- values assigned in a branch


def test_a_prediction_rebound_in_a_branch_is_known_only_when_every_definition_reaching_it_agrees():
    facts = _facts("""
        import tensorflow as tf

        dense = tf.keras.layers.Dense(10)

        def head(x, training):
            logits = dense(x)
            out = logits
            if not training:
                out = tf.nn.softmax(logits)
            probe(out)

        def agreed(x, training):
            out = tf.nn.softmax(dense(x))
            if training:
                out = tf.nn.softmax(dense(x) * 2.0)
            probe(out)

        def nested(x, flag, other):
            out = dense(x)
            for step in range(3):
                if flag:
                    out = tf.nn.softmax(out)
                    probe(out)
            probe(out)

        def inside_the_same_branch(x, flag):
            if flag:
                out = tf.nn.softmax(dense(x))
                probe(out)
    """)
    reader = model_reader(facts)
    kinds = [reader.value_kind(expr, scope, order).kind for expr, scope, order in _probes(facts)]
    assert kinds == [
        Output.UNKNOWN,  # logits or probabilities, depending on the branch taken
        Output.PROBABILITIES,  # both definitions are probabilities
        Output.PROBABILITIES,  # read in the branch that made it
        Output.UNKNOWN,  # after the loop: the softmax may or may not have run
        Output.PROBABILITIES,  # made and read in the same branch
    ]


def test_a_prediction_rebound_in_a_branch_at_module_level():
    # A script's top-level code: the blocks around a read and a definition are found statement by statement.
    facts = _facts("""
        import tensorflow as tf

        dense = tf.keras.layers.Dense(10)
        x = tf.zeros((2, 3))
        evaluate = False

        out = dense(x)
        if evaluate:
            out = tf.nn.softmax(out)
        probe(out)

        agreed = tf.nn.softmax(dense(x))
        for _ in range(2):
            agreed = tf.nn.softmax(dense(x) * 2.0)
        probe(agreed)

        if evaluate:
            inside = tf.nn.softmax(dense(x))
            probe(inside)
        else:
            inside = dense(x)
            probe(inside)

        def later():
            probe(out)

        made = tf.nn.softmax(dense(x))
        probe(made)
    """)
    reader = model_reader(facts)
    kinds = [reader.value_kind(expr, scope, order).kind for expr, scope, order in _probes(facts)]
    assert kinds == [
        Output.UNKNOWN,  # logits, or probabilities when `evaluate` was set
        Output.PROBABILITIES,  # both definitions are probabilities
        Output.PROBABILITIES,  # read in the branch that made it
        Output.LOGITS,  # the `else` branch's own definition
        Output.UNKNOWN,  # in a function nobody calls here: it sees whichever definition the module left, logits or probabilities
        Output.PROBABILITIES,  # no branch at all
    ]
