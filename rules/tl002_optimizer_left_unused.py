from __future__ import annotations

from tapelint.analysis.closed_world import where_checked
from tapelint.analysis.optimizers import Fate, apply_sites, optimizer_creations, optimizer_fate, steps_several_networks
from tapelint.analysis.reads import dropped_weight_gradients
from tapelint.analysis.values import flatten
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid


class OptimizerLeftUnused(Rule):
    """
    ## What it does
    Reports an optimizer that is created and never applied, in code where another optimizer does apply
    the gradients, when there is a sign that it was meant for something: its name is read (it was meant
    to be used), or the optimizer that does apply the gradients steps more than one network (so one of
    them lacks its own optimizer).

    ## Why is this bad?
    It is usually harmless: the model trains with the other optimizer. But it is worth a look, because
    the same shape of code is also how a GAN or an actor-critic loses one of its two updates: the
    second optimizer is created with its own learning rate and the code applies the first one to both
    networks (so the settings the author chose for the second never take effect). When the gradients of
    some weights are computed and dropped as well, TL001 reports the error instead.

    ## Example
    ```python
    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = tf.keras.optimizers.Adam(1e-3)
            self.old_optimizer = tf.keras.optimizers.SGD(0.1)  # never used

        def step(self, x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, self.model(x, training=True))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
    ```

    ## Use instead
    Delete the leftover, or apply it to the variables it was meant for.

    ## Known problems
    A leftover that nothing reads, beside networks that each apply their own optimizer, is dead code and
    harmless: it is not reported (real PPO agents keep an unused `actor_opt` while the actor applies its
    own `self.opt`). Neither is an optimizer replaced before anything reads it (`opt = SGD()`, then `opt =
    Adam()`). An optimizer handed to code this file cannot see (a library call, a container that is passed
    on, `self.__dict__.update(kwargs)`, `setattr`) is assumed to be applied there, and so is a
    module-level optimizer of a module that another module of the project imports, or an attribute of a
    class another module imports: the claim is made in a closed world only, and the message says what was
    read.

    ## Options
    None.

    ## Fix safety
    No fix: deleting an object is safe only when it is really a leftover.

    ## References
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
    - https://github.com/eriklindernoren/Keras-GAN/issues/128 (one optimizer used for both the generator and the
      discriminator, where each network should have its own)
    """

    code = "TL002"
    name = "optimizer-left-unused"
    message = "`{holder}` ({cls}) is never applied, while {others} applies the gradients: a leftover, or a network that was meant to get its own optimizer ({checked})"
    severity = Severity.INFO
    claims_absence = True
    confidence = Confidence.INFERRED
    triggers = ("GradientTape",)
    probe = ""

    def check(self) -> None:
        facts = self.facts
        if not facts.gradient_calls():
            return
        applying = apply_sites(facts)
        if not applying:
            return  # nothing applies anything: TL001's finding
        others = sorted({
            f"`{apply.site.receiver}`" for apply in applying
            if apply.site.receiver and any(v.kind.value == "optimizer" for v in flatten(apply.optimizers))
        })
        creations = optimizer_creations(facts)
        fates = {id(c): optimizer_fate(facts, c) for c in creations if c.holder is not None}
        shared: bool | None = None
        for creation in creations:
            if creation.holder is None:
                continue
            fate = fates[id(creation)]
            if fate not in (Fate.UNUSED, Fate.NEVER_APPLIED):
                continue
            if dropped_weight_gradients(facts):
                continue  # TL001 reports it as an error
            if fate is Fate.UNUSED:
                # Never even read: dead code, harmless unless some network lacks its own optimizer, which
                # shows as another optimizer stepping two networks (a GAN's one optimizer for both).
                if shared is None:
                    shared = any(fates.get(id(c)) is Fate.APPLIED and steps_several_networks(facts, c)
                                 for c in creations if c is not creation)
                if not shared:
                    continue
            names = [o for o in others if o != f"`{creation.holder.target}`"]
            self.report(
                creation.node,
                holder=creation.holder.target,
                cls=creation.cls,
                others=" and ".join(names[:2]) if names else "another optimizer",
                checked=where_checked(facts),
                confidence=Confidence.HIGH if fate is Fate.UNUSED else Confidence.INFERRED,
            )

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3)

for x, y in [(tf.zeros((2, 3)), tf.zeros((2, 1)))]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
            "the one optimizer is applied",
        ),
        Valid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizers = {"gen": tf.keras.optimizers.Adam(1e-4), "disc": tf.keras.optimizers.Adam(4e-4)}

def train_step(noise, real):
    with tf.GradientTape(persistent=True) as tape:
        fake = generator(noise, training=True)
        gen_loss = -tf.reduce_mean(discriminator(fake, training=True))
        disc_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
    for net, loss, key in ((generator, gen_loss, "gen"), (discriminator, disc_loss, "disc")):
        grads = tape.gradient(loss, net.trainable_variables)
        optimizers[key].apply_gradients(zip(grads, net.trainable_variables))
""",
            "near miss: both optimizers are applied, through a dict indexed in a loop",
        ),
        Valid(
            """
import tensorflow as tf

class GAN(tf.keras.Model):
    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer

    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.discriminator(data))
        grads = tape.gradient(loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        return {"loss": loss}

gan = GAN()
gan.compile(d_optimizer=tf.keras.optimizers.Adam(1e-4), g_optimizer=tf.keras.optimizers.Adam(1e-4))
""",
            "near miss: handed to a method that stores it; not provably unused",
        ),
        Valid(
            """
import tensorflow as tf

class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.old_optimizer = tf.keras.optimizers.SGD(0.1)

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss
""",
            "near miss: a leftover nothing reads, while the one network has its own optimizer: dead code, harmless",
        ),
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.SGD(0.01)
opt = tf.keras.optimizers.Adam(1e-2)  # replaced before training

for x, y in [(tf.zeros((2, 3)), tf.zeros((2, 1)))]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
            "near miss: the SGD is replaced before anything reads it",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

class GANTrainer:
    def __init__(self):
        self.generator = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(4)])
        self.discriminator = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
        self.g_optimizer = tf.keras.optimizers.Adam(1e-4)
        self.d_optimizer = tf.keras.optimizers.Adam(4e-4)

    def step(self, noise, real):
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            fake = self.generator(noise, training=True)
            fake_score = self.discriminator(fake, training=True)
            real_score = self.discriminator(real, training=True)
            g_loss = -tf.reduce_mean(fake_score)
            d_loss = tf.reduce_mean(fake_score) - tf.reduce_mean(real_score)
        g_grads = g_tape.gradient(g_loss, self.generator.trainable_variables)
        d_grads = d_tape.gradient(d_loss, self.discriminator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(g_grads, self.generator.trainable_variables))
        self.g_optimizer.apply_gradients(zip(d_grads, self.discriminator.trainable_variables))
""",
            line=9,
            message_contains="`self.d_optimizer` (Adam) is never applied, while `self.g_optimizer` applies",
        ),
        Invalid(
            """
import tensorflow as tf

actor = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
actor_opt = tf.keras.optimizers.Adam(1e-4)
critic_opt = tf.keras.optimizers.Adam(1e-3)

def update(states, returns):
    with tf.GradientTape() as tape:
        values = critic(states, training=True)
        probs = actor(states, training=True)
        loss = tf.reduce_mean(tf.square(returns - values)) - tf.reduce_mean(tf.math.log(probs))
    variables = actor.trainable_variables + critic.trainable_variables
    grads = tape.gradient(loss, variables)
    actor_opt.apply_gradients(zip(grads, variables))
    return loss
""",
            line=7,
            message_contains="`critic_opt` (Adam)",
        ),
    ]

