"""The shared questions of tapelint/analysis/, each asked directly: what becomes of an optimizer, which
apply call steps what, is a result ever read, which models a tape trains, which functions run per step."""

from __future__ import annotations

import textwrap

import libcst as cst

from tapelint.analysis.facts import Facts
from tapelint.analysis.names import dotted
from tapelint.analysis.optimizers import (
    Fate,
    apply_sites,
    optimizer_creations,
    optimizer_fate,
    steps_only_plain_variables,
    trained_models,
)
from tapelint.analysis.reads import dropped_weight_gradients, result_discarded
from tapelint.analysis.steps import step_functions
from tapelint.analysis.training import head_weighted_layers, trained, trains_model
from tapelint.analysis.values import Kind, flatten, values_of


def _facts(source: str) -> Facts:
    return Facts(cst.parse_module(textwrap.dedent(source)))


def _fates(source: str) -> dict[str, Fate]:
    facts = _facts(source)
    return {c.holder.target if c.holder else c.cls: optimizer_fate(facts, c) for c in optimizer_creations(facts)}


GAN = """
    import tensorflow as tf
    gen = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    disc = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    g_opt = tf.keras.optimizers.Adam(1e-4)
    d_opt = tf.keras.optimizers.Adam(4e-4)
    spare = tf.keras.optimizers.SGD(0.1)
    def step(x, z):
        with tf.GradientTape(persistent=True) as tape:
            fake = gen(z, training=True)
            g_loss = -tf.reduce_mean(disc(fake, training=True))
            d_loss = tf.reduce_mean(disc(fake, training=True)) - tf.reduce_mean(disc(x, training=True))
        for net, loss, opt in ((gen, g_loss, g_opt), (disc, d_loss, d_opt)):
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
"""


def test_optimizers_applied_through_a_tuple_loop_and_an_unused_one():
    assert _fates(GAN) == {"g_opt": Fate.APPLIED, "d_opt": Fate.APPLIED, "spare": Fate.UNUSED}


def test_an_optimizer_handed_to_a_library_call_is_unknown_not_unused():
    fates = _fates("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()
        model.compile(optimizer=opt, loss="mse")
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    assert fates == {"opt": Fate.UNKNOWN}


def test_an_optimizer_read_but_never_applied():
    fates = _fates("""
        import tensorflow as tf
        opt = tf.keras.optimizers.Adam()
        print(opt.learning_rate)
    """)
    assert fates == {"opt": Fate.NEVER_APPLIED}


def test_apply_sites_say_which_optimizer_steps_which_weights():
    facts = _facts(GAN)
    (site,) = apply_sites(facts)
    assert {v.short_class for v in site.optimizers} == {"Adam"}
    owners = {o.short_class for v in flatten(site.variables) for w in v.owner for o in w.owner}
    assert owners == {"Sequential"}
    creations = {c.holder.target: c for c in optimizer_creations(facts)}
    models = trained_models(facts, creations["g_opt"])
    assert models is not None and {m.kind for m in models} == {Kind.MODEL}


def test_steps_only_plain_variables_for_pixel_optimisation():
    facts = _facts("""
        import tensorflow as tf
        image = tf.Variable(tf.zeros((1, 8, 8, 3)))
        opt = tf.keras.optimizers.Adam(0.02)
        def train_step(image):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(image)
            grad = tape.gradient(loss, image)
            opt.apply_gradients([(grad, image)])
        train_step(image)
    """)
    (creation,) = optimizer_creations(facts)
    assert steps_only_plain_variables(facts, creation)


def test_a_result_returned_to_an_unread_name_is_discarded():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            return loss, grads
        for x in data:
            loss, _ = step(x)
            print(loss)
    """)
    (site,) = facts.gradient_calls()
    assert result_discarded(facts, site)
    assert dropped_weight_gradients(facts) == [site]


def test_a_result_read_by_a_caller_is_not_discarded():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        def grads_of(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            return tape.gradient(loss, model.trainable_variables)
        opt = tf.keras.optimizers.SGD(0.1)
        g = grads_of(data)
        opt.apply_gradients(zip(g, model.trainable_variables))
    """)
    (site,) = facts.gradient_calls()
    assert not result_discarded(facts, site)


FROZEN = """
    import tensorflow as tf
    base = tf.keras.applications.MobileNetV2(include_top=False, weights=None)
    base.trainable = False
    model = tf.keras.Sequential([base, tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(2)])
    teacher = tf.keras.applications.ResNet50(weights=None)
    teacher.trainable = False
    opt = tf.keras.optimizers.Adam(1e-4)
    for x, y in data:
        soft = teacher(x, training=False)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - soft))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_which_models_a_tape_trains_and_what_they_are_built_from():
    facts = _facts(FROZEN)
    state = trained(facts)
    assert {m.short_class for m in state.models} == {"Sequential"} and not state.unknown
    base, teacher = (next(iter(values_of(facts, cst.Name(n), facts.module_scope, 10 ** 9))) for n in ("base", "teacher"))
    assert trains_model(facts, base) is True
    assert trains_model(facts, teacher) is False


def test_head_layers_after_a_frozen_backbone():
    assert head_weighted_layers(_facts(FROZEN), "base") == 2


def test_step_functions_are_found_by_what_they_do_not_by_their_names():
    facts = _facts("""
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        def update_everything(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            return tape.gradient(loss, model.trainable_variables)
        @tf.function
        def fit_batch(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            return tape.gradient(loss, model.trainable_variables)
        def train_step_once(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            return tape.gradient(loss, model.trainable_variables)
        for x in data:
            update_everything(x)
        train_step_once(x0)
    """)
    assert sorted(s.simple_name for s in step_functions(facts)) == ["fit_batch", "update_everything"]


def test_under_tape_follows_helpers_any_or_every_caller():
    from tapelint.analysis.gradients import under_tape

    facts = _facts("""
        import tensorflow as tf
        def loss_of(model, x):
            return tf.reduce_mean(model(x))
        def evaluate(model, x):
            return loss_of(model, x)
        with tf.GradientTape() as tape:
            a = loss_of(m, x)
        b = evaluate(m, x)
    """)
    (inner,) = [s for s in facts.calls if s.func == "model"]
    assert under_tape(facts, inner, every_caller=False, levels=2)
    assert not under_tape(facts, inner, every_caller=True, levels=2)


def test_rules_keep_no_private_tracers():
    """'What is this name here?' has one home (tapelint/analysis/values.py): rules never follow bindings
    themselves, never recurse through them with a depth counter, and never decide from source text."""
    import re
    from pathlib import Path

    rules = Path(__file__).resolve().parent.parent / "rules"
    pattern = re.compile(r"binding_before\(|visible_bindings\(|loop_bindings|depth \+ 1|depth > \d")
    offenders = []
    for path in sorted(rules.glob("tl*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_value_kept_for_statements_unpacking_and_comprehensions():
    from tapelint.analysis.reads import value_kept

    facts = _facts("""
        import tensorflow as tf
        tf.clip_by_global_norm(grads, 1.0)
        clipped, norm = tf.clip_by_global_norm(grads, 1.0)
        print(norm)
        kept = [tf.clip_by_norm(g, 1.0) for g in grads]
        print(kept)
        dropped = [tf.clip_by_norm(g, 1.0) for g in grads]
        opt.apply_gradients(zip([tf.clip_by_value(g, -1, 1) for g in grads], variables))
    """)
    bare, unpacked, kept, dropped, passed = [s for s in facts.calls if s.func and s.func.startswith("tf.clip")]
    assert value_kept(facts, bare, 0) is False
    assert value_kept(facts, unpacked, 0) is False and value_kept(facts, unpacked, 1) is True
    assert value_kept(facts, kept) is True
    assert value_kept(facts, dropped) is False
    assert value_kept(facts, passed) is None  # handed to a call: used, as far as we can tell


def test_a_dataset_apply_is_not_an_optimizer_step():
    from tapelint.analysis.optimizers import apply_sites

    facts = _facts("""
        import tensorflow as tf

        ds = tf.data.Dataset.range(10).batch(2)
        ds = ds.apply(tf.data.experimental.unbatch())
    """)
    assert apply_sites(facts) == []


def test_the_binding_a_read_sees_depends_on_where_the_read_is():
    # Answers are kept per name, scope and read: asking again, or at another read, gives that read's own.
    facts = _facts("""
        import tensorflow as tf
        lr = 1e-3
        opt = tf.keras.optimizers.Adam(lr)
        lr = 0.5
        def step(x):
            lr = 1.0
            return x * lr
        def other(x):
            return x * lr
    """)
    reads = {(use.scope.simple_name, use.order): use for use in facts.name_uses if use.name == "lr"}
    module = facts.module_scope
    first_read = min(order for (scope, order) in reads if scope == "<module>")
    for _ in range(2):
        seen = facts.binding_before("lr", module, first_read)
        assert seen is not None and seen.value.value == "1e-3"
        late = facts.binding_before("lr", module, 10**6)
        assert late is not None and late.value.value == "0.5"
        step_scope = next(s for s in facts.scopes if s.simple_name == "step")
        inner = facts.binding_before("lr", step_scope, 10**6)
        assert inner is not None and inner.value.value == "1.0"
        assert [b.value.value for b in facts.visible_bindings("lr", step_scope)] == ["1.0"]
        other_scope = next(s for s in facts.scopes if s.simple_name == "other")
        assert [b.value.value for b in facts.visible_bindings("lr", other_scope)] == ["1e-3", "0.5"]
        assert facts.binding_before("lr", step_scope, step_scope.order) is None  # before its own `lr = 1.0`


def test_every_attribute_of_a_chain_is_a_use_spelled_in_full():
    # The collector spells a chain once and hands each inner attribute its prefix: the uses must be the
    # ones spelling every attribute afresh would give, calls and chains on a call's result included.
    facts = _facts("""
        import tensorflow as tf
        def step(model, x):
            y = tf.keras.layers.Dense(4)(x)
            z = model.encoder.block.norm(y)
            w = make().head.out
            return self.opt.inner.apply_gradients(zip(g, v)), tf.nn.relu(z).shape.rank
        """)
    spelled = sorted(use.name for use in facts.attribute_uses)
    assert spelled == sorted([
        "tf.keras.layers.Dense", "tf.keras.layers", "tf.keras",
        "model.encoder.block.norm", "model.encoder.block", "model.encoder",
        "self.opt.inner.apply_gradients", "self.opt.inner", "self.opt",
        "tf.nn.relu", "tf.nn",
    ])
    for use in facts.attribute_uses:
        assert use.name == dotted(use.node)
