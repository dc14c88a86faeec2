from __future__ import annotations

from tapelint.analysis.optimizers import Fate, apply_sites, optimizer_creations, optimizer_fate
from tapelint.analysis.reads import dropped_weight_gradients
from tapelint.analysis.values import flatten
from tapelint.diagnostic import Confidence, Severity
from tapelint.rule import Invalid, Rule, Valid


class OptimizerLeftUnused(Rule):
    """
    ## What it does
    Reports an optimizer that is created and never applied, in code where another optimizer does apply
    the gradients: a leftover, or a network that was meant to get its own optimizer.

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
    An optimizer handed to code this file cannot see (a library call, another module, a container that
    is passed on) is assumed to be applied there, and is not reported.

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
    message = "`{holder}` ({cls}) is never applied, while {others} applies the gradients: a leftover, or a network that was meant to get its own optimizer"
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
        for creation in optimizer_creations(facts):
            if creation.holder is None:
                continue
            fate = optimizer_fate(facts, creation)
            if fate not in (Fate.UNUSED, Fate.NEVER_APPLIED):
                continue
            if dropped_weight_gradients(facts):
                continue  # TL001 reports it as an error
            names = [o for o in others if o != f"`{creation.holder.target}`"]
            self.report(
                creation.node,
                holder=creation.holder.target,
                cls=creation.cls,
                others=" and ".join(names[:2]) if names else "another optimizer",
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
    ]
    INVALID = [
        Invalid(
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
            line=8,
            message_contains="`self.old_optimizer` (SGD) is never applied, while `self.optimizer` applies",
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

