from __future__ import annotations

import libcst as cst

from tapelint.analysis.optimizers import (
    builds_with_all_variables,
    conflicting_sets,
    optimizer_creations,
    optimizer_steps,
)
from tapelint.analysis.values import Value
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class OptimizerSharedAcrossModels(Rule):
    """
    ## What it does
    Reports one optimizer object that steps two different sets of variables: a GAN's generator and
    discriminator updated by the same `Adam`, an actor and a critic sharing one `RMSprop`, the same
    optimizer given to `compile()` of two models (the Keras-GAN `discriminator`/`combined` pattern), or a
    step function called with `generator` and then `discriminator` and one global optimizer.

    ## Why is this bad?
    A Keras 3 optimizer is built for the variables of its first apply call and refuses any other. Measured
    on TF 2.21 / Keras 3.15: the second network's update raises `ValueError: Unknown variable: <Variable
    path=sequential/dense/kernel ...>. This optimizer can only be called for the variables it was
    originally built with. When working with a new set of variables, you should recreate a new optimizer
    instance.`, eagerly and inside `tf.function` alike, also for `SGD`, which keeps no slots. TF 2.11-2.15 (Keras 2's new optimizers) raised `KeyError: The optimizer
    cannot recognize variable ...`; the legacy Keras 2 optimizers accepted it silently and shared one step
    counter (and its Adam bias correction) between the networks. (`tf_keras` is not installed here: that
    last behaviour is unmeasured.)

    ## Example
    ```python
    optimizer = keras.optimizers.Adam(2e-4)

    def train_step(real):
        ...
        d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
        optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
        optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))  # ValueError
    ```

    ## Use instead
    One optimizer per network:
    ```python
    d_optimizer = keras.optimizers.Adam(2e-4)
    g_optimizer = keras.optimizers.Adam(2e-4)
    ```
    Where one optimizer really should step both, build it for all of them first
    (`optimizer.build(generator.trainable_variables + discriminator.trainable_variables)`), or apply it
    once to the concatenated lists.

    ## Known problems
    Only optimizers created in this module are followed, and only apply calls whose receiver can only
    be that optimizer. One optimizer given to `compile()` of two models (the Keras-GAN
    `discriminator`/`combined` layout) is not judged: what `train_on_batch` steps depends on `trainable`
    flags read at run time (on Keras 3.15 a discriminator left at `trainable = False` trains nothing and
    nothing raises; set back to `True`, the combined model's update raises the error above). A model's own `self.optimizer` (set by `compile()`) applied to two sub-networks
    inside `train_step` is not seen. When one set contains the other (a concatenation, then one of its
    parts) the rule is silent: Keras 3 accepts that order. Two models that share layers, or a combined
    GAN model trained first, are treated as different sets.

    ## Options
    None.

    ## Fix safety
    No fix: a second optimizer needs its own settings, and where it is created is the author's choice.

    ## References
    - https://github.com/mrosol/Nonlincausality/pull/12 ("ValueError - Same optimizer for different
      data": `Unknown variable ... This optimizer can only be called for the variables it was originally
      built with`)
    - https://github.com/yzhao062/pyod/issues/459 (a GAN whose optimizer is reused across models: `The
      optimizer cannot recognize variable dense_3/kernel:0` on TF 2.11+)
    - https://github.com/lovedlim/tensorflow/issues/40 (knowledge distillation: one `opt` applied to a
      second student model raises the same error)
    - https://github.com/eriklindernoren/Keras-GAN/issues/128 (one optimizer used for both the generator
      and the discriminator)
    """

    code = "TL204"
    name = "optimizer-shared-across-models"
    message = ("`{holder}` ({cls}) steps {here} here but {there} at {where}: Keras 3 builds an optimizer for "
               "the variables of its first update and raises `ValueError: Unknown variable` for the other; "
               "give each model its own optimizer")
    severity = Severity.ERROR
    triggers = (("optimizers", "apply_gradients"), ("optimizers", ".apply("))

    def check(self) -> None:
        facts = self.facts
        for creation in optimizer_creations(facts):
            # `compile()` is left out: whether `fit`/`train_on_batch` then step two sets depends on
            # `trainable` flags read at run time (a Keras-GAN discriminator frozen for good never trains).
            steps = optimizer_steps(facts, creation, compiled=False)
            if not steps:
                continue
            conflict = conflicting_sets(steps, lambda owners: min(_order(facts, o) for o in owners))
            if conflict is None or builds_with_all_variables(facts, creation):
                continue
            (first, first_set), (second, second_set) = conflict
            holder = creation.holder.target if creation.holder is not None else creation.cls
            where = self.location(first.node) or "another line"
            if first is second:
                where = "another run of this same call"
            self.report(second.node, holder=holder, cls=creation.cls, here=self._describe(second_set),
                        there=self._describe(first_set), where=where)

    def _describe(self, owners: frozenset[Value]) -> str:
        names = sorted(_name(self.facts, o) for o in owners)
        return " + ".join(f"`{n}`" for n in names[:3]) + ("'s variables" if len(names) == 1 else " variables")


def _order(facts, value: Value) -> int:  # type: ignore[no-untyped-def]
    site = facts.call_site(value.node) if isinstance(value.node, cst.Call) else None
    return site.order if site is not None else 0


def _name(facts, value: Value) -> str:  # type: ignore[no-untyped-def]
    """How the code names a model: the name its creation is bound to, else its class."""
    if isinstance(value.node, cst.Call):
        for binding in facts.bindings_of_value(value.node):
            return binding.target
    if value.node is None and value.cls:
        return f"self ({value.cls})" if value.cls in facts.classes else value.cls
    return value.short_class or value.kind.value


OptimizerSharedAcrossModels.VALID = [
    Valid(
        """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
g_optimizer = tf.keras.optimizers.Adam(2e-4)
d_optimizer = tf.keras.optimizers.Adam(2e-4)

def train_step(real, noise):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        d_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
        g_loss = -tf.reduce_mean(discriminator(fake, training=True))
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    g_optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
""",
        "one optimizer per network",
    ),
    Valid(
        """
import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
decoder = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(8)])
optimizer = tf.keras.optimizers.Adam(1e-3)

def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(decoder(encoder(x)) - x))
    variables = encoder.trainable_variables + decoder.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
""",
        "near miss: one optimizer, one application to the concatenated variables",
    ),
    Valid(
        """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(2e-4)
optimizer.build(generator.trainable_variables + discriminator.trainable_variables)

def update(tape, loss, model):
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

def train_step(real, noise):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        d_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
        g_loss = -tf.reduce_mean(discriminator(fake, training=True))
    update(d_tape, d_loss, discriminator)
    update(g_tape, g_loss, generator)
""",
        "near miss: built for both variable lists first, which Keras 3 accepts",
    ),
    Valid(
        """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)

def train(x, y, epochs):
    for _ in range(epochs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

def fine_tune(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
""",
        "near miss: the same model updated in two places",
    ),
    Valid(
        """
import tensorflow as tf

actor = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])

def fit(model, x, y):
    optimizer = tf.keras.optimizers.Adam(1e-3)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

fit(actor, states, targets)
fit(critic, states, returns)
""",
        "near miss: a new optimizer per call, so per model",
    ),
    Valid(
        """
import numpy as np
from tensorflow import keras

optimizer = keras.optimizers.Adam(0.0002, 0.5)
discriminator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
discriminator.compile(loss="binary_crossentropy", optimizer=optimizer)
generator = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
z = keras.Input((8,))
discriminator.trainable = False
combined = keras.Model(z, discriminator(generator(z)))
combined.compile(loss="binary_crossentropy", optimizer=optimizer)
""",
        "not judged: with `compile()` what is stepped depends on `trainable` at run time (here the frozen "
        "discriminator never trains on Keras 3, and nothing raises)",
    ),
]

OptimizerSharedAcrossModels.INVALID = [
    Invalid(
        """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(2e-4)

def train_step(real, noise):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        d_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
        g_loss = -tf.reduce_mean(discriminator(fake, training=True))
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
""",
        line=16,
        message_contains="`optimizer` (Adam) steps `generator`'s variables here but `discriminator`'s variables at line 14",
    ),
    Invalid(
        """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(2e-4)

def update(tape, loss, model):
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

def train_step(real, noise):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        d_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
        g_loss = -tf.reduce_mean(discriminator(fake, training=True))
    update(d_tape, d_loss, discriminator)
    update(g_tape, g_loss, generator)
""",
        line=10,
    ),
    Invalid(
        """
import tensorflow as tf

class Trainer:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic
        self.optimizer = tf.keras.optimizers.RMSprop(7e-4)

    def learn(self, states, returns):
        with tf.GradientTape(persistent=True) as tape:
            values = self.critic(states, training=True)
            probs = self.actor(states, training=True)
            critic_loss = tf.reduce_mean(tf.square(returns - values))
            actor_loss = -tf.reduce_mean(tf.math.log(probs) * (returns - values))
        self.optimizer.apply_gradients(zip(tape.gradient(critic_loss, self.critic.trainable_variables),
                                           self.critic.trainable_variables))
        self.optimizer.apply_gradients(zip(tape.gradient(actor_loss, self.actor.trainable_variables),
                                           self.actor.trainable_variables))

trainer = Trainer(tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")]),
                  tf.keras.Sequential([tf.keras.layers.Dense(1)]))
""",
        line=18,
    ),
]
