from __future__ import annotations

from tapelint.analysis.closed_world import where_checked
from tapelint.analysis.optimizers import Fate, apply_sites, optimizer_creations, optimizer_fate
from tapelint.analysis.reads import dropped_weight_gradients
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, Rule, Valid


class OptimizerNeverApplied(Rule):
    """
    ## What it does
    Reports an optimizer that is created in a file whose training loop computes gradients with a
    `tf.GradientTape`, but that never reaches `apply_gradients`, `apply` or `minimize`; and gradients
    of a model's weights that are computed and then thrown away.

    ## Why is this bad?
    `tape.gradient` only computes the gradients. Nothing changes until an optimizer applies them, so the
    loss stays flat forever while the gradients look perfectly healthy. This is the first thing wrong
    in the Stack Overflow question "Gradients are zero except first iteration in tensorflow" (reproduced in
    `examples/seed1_frozen_vgg_head.py`): `Adam(learning_rate=0.01)` is created, the loop calls
    `tape.gradient` and appends the loss, and the weights never move.
    In a GAN, forgetting one of the two `apply_gradients` calls leaves that network untrained.

    ## Example
    ```python
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
    ```

    ## Use instead
    ```python
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Known problems
    Each optimizer is followed with the value model (`tapelint.analysis.values`): through names,
    tuples and dicts (`for net, opt in ((gen, g_opt), (disc, d_opt))`, `optimizers["gen"]`), helper
    parameters, `self.` attributes and the methods of this file. It is reported only with evidence
    that nothing trains: no apply call at all, or gradients of a model's weights that are computed
    and never read. When another optimizer does apply the gradients, the unused one is TL002's
    (info) finding instead. An optimizer that reaches code this file cannot see (a library call such
    as `model.compile(optimizer=...)`, another module, a subscript store, an attribute of another
    object, a function nobody here calls) is assumed to be applied there. The claim is made in a closed
    world only: a module-level optimizer of a module that another module of the project imports (by name,
    `import m`, `from pkg import m`, relative imports), and an attribute of a class that another module
    imports, may be applied there and are not reported; the message says what was read. The project is
    searched from the folder above the outermost package (at most 3,000 files; past that the answer is
    unknown and nothing is reported). An optimizer whose name is bound again before anything reads it
    (`opt = SGD()`, then `opt = Adam()`) is not reported. Files that never use a `GradientTape` are not
    checked.

    ## Options
    None.

    ## Fix safety
    No fix: where the update belongs is a decision about the training loop.

    ## References
    - https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch
    - https://www.tensorflow.org/api_docs/python/tf/keras/optimizers/Optimizer#apply_gradients
    - `examples/seed1_frozen_vgg_head.py`, a reproduction of the Stack Overflow question "Gradients are
      zero except first iteration in tensorflow", where
      `optimizer.apply_gradients` is never called
    - https://github.com/google-deepmind/weathernext/issues/118 (gradients computed but never applied)
    """

    code = "TL001"
    name = "optimizer-never-applied"
    message = "`{holder}` ({cls}) is created but never applied: no `apply_gradients`, `apply` or `minimize` uses it, so the weights never change ({checked})"
    severity = Severity.ERROR
    claims_absence = True
    triggers = ("GradientTape",)
    probe = "Confirmed when no weight changed after the step's gradients were computed (TL807)."

    def check(self) -> None:
        facts = self.facts
        gradient_calls = facts.gradient_calls()
        if not gradient_calls:
            return
        # Gradients of weights that are computed and thrown away: the evidence that nothing trains.
        dropped = dropped_weight_gradients(facts)
        nothing_applies = not apply_sites(facts)
        if not dropped and not nothing_applies:
            return  # something applies gradients and none are dropped: any unused optimizer is TL002's
        unapplied = [
            c for c in optimizer_creations(facts)
            if c.holder is not None and optimizer_fate(facts, c) in (Fate.UNUSED, Fate.NEVER_APPLIED)
        ]
        if dropped or nothing_applies:
            # Another optimizer applying gradients elsewhere is TL002's finding (a leftover), not this one.
            for creation in unapplied:
                assert creation.holder is not None
                self.report(creation.node, holder=creation.holder.target, cls=creation.cls, checked=where_checked(facts),
                            related=[(site.node, "gradients computed and never applied") for site in dropped[:3]])
        if unapplied:
            return
        for site in dropped:
            self.report(
                site.node,
                "Gradients of the model's weights are computed here and never used: no optimizer "
                "applies them, so the weights never change",
            )

    VALID = [
        Valid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.01)

def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
""",
            "the TF guide's loop",
        ),
        Valid(
            """
import tensorflow as tf

def train_step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

optimizer = tf.keras.optimizers.Adam(1e-3)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
train_step(model, optimizer, tf.zeros((4, 3)), tf.zeros((4, 1)))
""",
            "applied in a helper through a parameter",
        ),
        Valid(
            """
import tensorflow as tf

class Trainer(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}

model = Trainer()
model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="mse")
""",
            "train_step override using self.optimizer after compile",
        ),
        Valid(
            """
import tensorflow as tf

x = tf.Variable(3.0)
optimizer = tf.keras.optimizers.Adam(0.1)
with tf.GradientTape() as tape:
    y = x * x
dy_dx = tape.gradient(y, x)
optimizer.minimize(lambda: x * x, var_list=[x])
""",
            "minimize counts as applying",
        ),
        Valid(
            """
import tensorflow as tf

images = tf.random.uniform((1, 28, 28, 1))
model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
with tf.GradientTape() as tape:
    tape.watch(images)
    top = tf.reduce_max(model(images), axis=-1)
saliency = tape.gradient(top, images)
print(saliency.shape)
""",
            "a saliency map: gradients of the input, no optimizer at all",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])
loss_object = tf.keras.losses.CategoricalCrossentropy()

def calculate_gradient(model, x, y):
    with tf.GradientTape() as tape:
        loss_value = loss_object(y, model(x, training=True))
    return loss_value, tape.gradient(loss_value, model.trainable_variables)

optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
for step in range(50):
    loss_value, grads = calculate_gradient(model, tf.zeros((1, 8)), tf.constant([[0.0, 1.0]]))
""",
            line=12,
            column=13,
            message_contains="`optimizer` (Adam)",
        ),
        Invalid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
gen_opt = tf.keras.optimizers.Adam(1e-4)
disc_opt = tf.keras.optimizers.Adam(1e-4)

def train_step(noise, real):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        fake = generator(noise, training=True)
        gen_loss = -tf.reduce_mean(discriminator(fake, training=True))
        disc_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
""",
            line=6,
            message_contains="`gen_opt`",
        ),
        Invalid(
            """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

for x, y in [(tf.zeros((2, 3)), tf.zeros((2, 1)))]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    print(float(loss))
""",
            line=9,
            message_contains="never used",
        ),
    ]
