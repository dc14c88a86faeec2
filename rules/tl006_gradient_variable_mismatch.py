from __future__ import annotations

from tapelint.analysis.dataflow import render
from tapelint.analysis.facts import CallSite, Facts, arg_value
from tapelint.analysis.modes import mode_layers
from tapelint.analysis.purpose import only_in_unit_tests
from tapelint.analysis.variable_sets import VariableList, gradient_origin, variable_list, zipped_lists
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid
from tapelint.rules._tl006_twins import same_object, structural_twins


class GradientVariableMismatch(Rule):
    """
    ## What it does
    Follows the gradients handed to `apply_gradients(zip(grads, variables))` back to the
    `tape.gradient(loss, sources)` call that computed them and compares `sources` with `variables`.
    Reports gradients of one model applied to another's variables (the critic's gradients applied to
    the actor), gradients taken on `model.variables`/`model.weights` (non-trainable included) applied
    to `model.trainable_variables`, `model.variables` on both sides for a model with BatchNormalization,
    lists of different length or order, and `zip(variables, grads)` with the two swapped.

    ## Why is this bad?
    `apply_gradients` pairs gradients and variables by position. With the wrong list, each gradient
    lands on a variable it was not computed for. If the shapes differ it fails with a shape error; if
    they happen to match (two networks of the same architecture, a GAN) it silently trains the wrong
    network with nonsense updates. `model.variables` includes BatchNorm's moving statistics, so its
    gradient list is longer and shifted against `model.trainable_variables`.

    ## Example
    ```python
    actor_grads = tape.gradient(actor_loss, actor.trainable_variables)
    actor_opt.apply_gradients(zip(actor_grads, critic.trainable_variables))
    ```

    ## Use instead
    ```python
    actor_grads = tape.gradient(actor_loss, actor.trainable_variables)
    actor_opt.apply_gradients(zip(actor_grads, actor.trainable_variables))
    ```

    ## Known problems
    Lists are compared as written: two different names for the same list built elsewhere are not
    recognised as equal, so the rule only reports when both sides are model weight collections or
    lists of named variables it can read. Gradients returned by a helper function are not followed.

    Gradients applied to a structural twin are not reported: A3C computes gradients on a worker's copy
    of the network and applies them to the global network, which has the same variables in the same
    order. Two models are twins when the same code builds both, part for part: one `Model` subclass of
    the file, one builder function or method (when its parameters shape the model, the two calls must
    not pass provably different numbers or strings: `make_mlp(64, 4)` and `make_mlp(64, 1)` are no twins,
    while sizes under other names, read from the environment, are not told apart), one library
    constructor written the same way in the same function, or a `clone_model` of the other. Other models, even with matching shapes (a GAN's generator and
    discriminator from two builders), are still reported. In unit tests (methods of a `TestCase`, and
    functions only they call), `variables` on both sides of a model with BatchNormalization is not
    reported: Keras skips the None gradients with a warning, which matters to a long run only; the
    mismatches that can crash are reported there too.

    ## Options
    None.

    ## Fix safety
    No fix: which of the two lists is the intended one is the author's decision.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/keras/optimizers/Optimizer#apply_gradients
    - https://github.com/tensorflow/tensorflow/issues/26404 (use `trainable_variables`, not `variables`)
    - https://github.com/soumik12345/tf2_gans/issues/15 (gradient and variable lists of a GAN fixed in review)
    """

    code = "TL006"
    name = "gradient-variable-mismatch"
    message = "Gradients of `{sources}` are applied to `{variables}`: {why}"
    severity = Severity.ERROR
    triggers = ("apply_gradients",)
    probe = "Confirmed when the gradient and variable shapes differ, or other variables than the differentiated ones change."

    def check(self) -> None:
        facts = self.facts
        for zipped in zipped_lists(facts):
            site = zipped.apply.site
            grads_expr, vars_expr = zipped.grads, zipped.variables
            swapped = gradient_origin(facts, vars_expr, zipped.scope, zipped.order)
            if swapped is not None and variable_list(facts, grads_expr, zipped.scope, zipped.order) is not None:
                self.report(site.node.args[0].value if site.node.args else site.node,
                            f"`zip({render(grads_expr)}, {render(vars_expr)})` pairs variables with gradients "
                            "in the wrong order: `apply_gradients` expects `(gradient, variable)` pairs")
                continue
            grad_site = gradient_origin(facts, grads_expr, zipped.scope, zipped.order)
            if grad_site is None:
                continue
            sources = arg_value(grad_site.node, 1, "sources")
            source_list = variable_list(facts, sources, grad_site.scope, grad_site.order)
            var_list = variable_list(facts, vars_expr, zipped.scope, zipped.order)
            if source_list is None or var_list is None:
                continue
            if structural_twins(facts, source_list, var_list):
                continue  # A3C: a worker's gradients applied to the global network built by the same code
            why = self._difference(source_list, var_list)
            if why is not None and why.startswith("both lists hold every variable") and (
                    not self._has_batchnorm(facts, source_list, grad_site) or only_in_unit_tests(facts, zipped.scope)):
                # Without BatchNorm, `variables` is `trainable_variables` (a `tf.Module`, a plain MLP). With it,
                # the moving statistics get None gradients, which Keras skips with a warning: no crash, so a
                # unit test is not told about it.
                continue
            if why is not None:
                self.report(vars_expr, sources=render(sources), variables=render(vars_expr), why=why)

    @staticmethod
    def _has_batchnorm(facts: Facts, sources: VariableList, site: CallSite) -> bool:
        return any(any("BatchNormalization" in layer for layer in mode_layers(facts, part.node, site.scope, site.order))
                   for part in sources.parts)

    @staticmethod
    def _difference(sources: VariableList, variables: VariableList) -> str | None:
        a = [(p.key, p.kind) for p in sources.parts]
        b = [(p.key, p.kind) for p in variables.parts]
        if len(a) == len(b) and all(same_object(x[0], y[0]) and x[1] == y[1] for x, y in zip(a, b)):
            if any(x[1] == "all" for x in a):
                return ("both lists hold every variable, the non-trainable ones too (BatchNorm moving statistics, "
                        "frozen layers); their gradients are None and they are not the optimizer's to change: use "
                        "`trainable_variables` on both sides")
            return None
        if len(a) == len(b) and all(same_object(x[0], y[0]) for x, y in zip(a, b)):
            if any(x[1] == "all" and y[1] == "trainable" for x, y in zip(a, b)):
                return ("the gradients include the non-trainable variables (BatchNorm statistics), so the two "
                        "lists differ in length and order; differentiate `trainable_variables`")
            return ("the variable list includes non-trainable variables (BatchNorm statistics) that the "
                    "gradients were not computed for, so the two lists differ in length and order; apply them "
                    "to `trainable_variables`")
        if sorted(p[0] for p in a) == sorted(p[0] for p in b):
            return "the same variables in another order, so each gradient lands on the wrong variable"
        owners_a = {p[0].split("#")[0] for p in a}
        owners_b = {p[0].split("#")[0] for p in b}
        if any(same_object(x, y) for x in owners_a for y in owners_b):
            return "the two lists differ, so gradients land on variables they were not computed for"
        return ("they were computed for other variables, so each gradient lands on a variable it was not "
                "computed for (a shape error, or silent nonsense updates when the shapes match)")

    VALID = [
        Valid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
gen_opt = tf.keras.optimizers.Adam(1e-4)
disc_opt = tf.keras.optimizers.Adam(1e-4)

def train_step(real, noise):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        fake = generator(noise, training=True)
        gen_loss = -tf.reduce_mean(discriminator(fake, training=True))
        disc_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    gen_grads, _ = tf.clip_by_global_norm(gen_grads, 5.0)
    gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
    disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
""",
            "a GAN: each network's gradients applied to its own variables, one clipped",
        ),
        Valid(
            """
import tensorflow as tf

class Trainer(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        gradients = [tf.clip_by_norm(g, 1.0) for g in gradients]
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"loss": loss}
""",
            "near miss: the same list through a name and a clipping comprehension",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))
""",
            "`variables` on both sides of a model without BatchNorm: every variable is trainable",
        ),
        Valid(
            """
import threading
import tensorflow as tf

class ActorCritic(tf.keras.Model):
    def __init__(self, actions):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.policy = tf.keras.layers.Dense(actions)

    def call(self, x):
        return self.policy(self.hidden(x))

class Worker(threading.Thread):
    def __init__(self, global_model, optimizer):
        super().__init__()
        self.global_model = global_model
        self.local_model = ActorCritic(4)
        self.optimizer = optimizer

    def run(self):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.local_model(tf.zeros((8, 6)))))
        grads = tape.gradient(loss, self.local_model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.global_model.trainable_variables))
        self.local_model.set_weights(self.global_model.get_weights())

Worker(ActorCritic(4), tf.keras.optimizers.Adam(1e-4)).start()
""",
            "near miss: A3C applies a worker's gradients to the global network, a twin of the same class",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

actor = tf.keras.Sequential([tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
actor_opt = tf.keras.optimizers.Adam(1e-4)
critic_opt = tf.keras.optimizers.Adam(1e-3)

def train_step(states, returns):
    with tf.GradientTape() as actor_tape, tf.GradientTape() as critic_tape:
        values = critic(states, training=True)
        advantage = returns - values
        actor_loss = -tf.reduce_mean(actor(states, training=True) * tf.stop_gradient(advantage))
        critic_loss = tf.reduce_mean(tf.square(advantage))
    actor_grads = actor_tape.gradient(actor_loss, actor.trainable_variables)
    critic_grads = critic_tape.gradient(critic_loss, critic.trainable_variables)
    actor_opt.apply_gradients(zip(actor_grads, critic.trainable_variables))
    critic_opt.apply_gradients(zip(critic_grads, critic.trainable_variables))
""",
            line=17,
            column=48,
            message_contains="Gradients of `actor.trainable_variables` are applied to `critic.trainable_variables`",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            line=11,
            message_contains="non-trainable",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(model.trainable_variables, grads))
""",
            line=11,
            message_contains="wrong order",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(16, 3),
    tf.keras.layers.BatchNormalization(),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dense(10),
])
optimizer = tf.keras.optimizers.SGD(0.01)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))
""",
            line=16,
            message_contains="the non-trainable ones too",
        ),
    ]
