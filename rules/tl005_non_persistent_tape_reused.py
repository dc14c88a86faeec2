from __future__ import annotations

import libcst as cst

from tapelint.analysis.blocks import blocks
from tapelint.analysis.facts import GRADIENT_METHODS, keyword_arg
from tapelint.analysis.gradients import GradientCall, gradient_calls
from tapelint.analysis.values import Kind, Value, values_of
from tapelint.diagnostic import Severity
from tapelint.rule import Invalid, PendingFix, Rule, Valid


class NonPersistentTapeReused(Rule):
    """
    ## What it does
    Reports a second `gradient` (or `jacobian`) call on a `GradientTape` created without
    `persistent=True`, and a single call that runs more than once because it sits in a loop or a
    comprehension after the tape opened (`[tape.gradient(loss, v) for v in variables]`).

    ## Why is this bad?
    A non-persistent tape releases what it recorded as soon as `gradient` returns. The second call
    raises `RuntimeError: A non-persistent GradientTape can only be used to compute one set of
    gradients (or jacobians)`. It usually appears when one tape records both losses of a GAN or of an
    actor-critic pair.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        gen_loss, disc_loss = losses(generator, discriminator, noise, real)
    gen_grads = tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = tape.gradient(disc_loss, discriminator.trainable_variables)  # RuntimeError
    ```

    ## Use instead
    ```python
    with tf.GradientTape(persistent=True) as tape:
        gen_loss, disc_loss = losses(generator, discriminator, noise, real)
    gen_grads = tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = tape.gradient(disc_loss, discriminator.trainable_variables)
    del tape
    ```
    or one tape per loss, as in the TF DCGAN tutorial.

    ## Known problems
    `persistent=` given as a variable is assumed to be true. Calls in the two branches of one `if`,
    or a first call in a `return` statement, are known not to run together; other exclusive paths
    (early `break`, exceptions) are not.

    ## Options
    None.

    ## Fix safety
    Adding `persistent=True` is unsafe: it keeps the tape's memory alive until the tape is deleted, so
    add `del tape` after the last `gradient` call.

    ## References
    - https://www.tensorflow.org/api_docs/python/tf/GradientTape
    - https://www.tensorflow.org/guide/autodiff (persistent tapes)
    - https://github.com/tensorflow/tensorflow/issues/31265 (two losses on one tape)
    - https://github.com/tensorflow/tensorflow/issues/46487 (the RuntimeError)
    """

    code = "TL005"
    name = "non-persistent-tape-reused"
    message = "`{tape}` is not persistent, but `{tape}.{method}` runs {how}: this raises RuntimeError"
    severity = Severity.ERROR
    triggers = ("GradientTape",)
    fixable = True
    probe = "Confirmed when the script stops with the RuntimeError at this call; refuted when the call runs twice without one (a new tape each time)."

    def check(self) -> None:
        self._through_helpers()
        facts = self.facts
        spans = blocks(facts)
        by_tape: dict[int, list[GradientCall]] = {}
        for grad in gradient_calls(facts):
            persistent = keyword_arg(grad.tape.call, "persistent")
            if persistent is not None and not (
                isinstance(persistent.value, cst.Name) and persistent.value.value == "False"
            ):
                continue
            by_tape.setdefault(id(grad.tape), []).append(grad)
        for grads in by_tape.values():
            tape = grads[0].tape
            first = grads[0]
            reported = False
            for later in grads[1:]:
                if spans.exclusive(first.site.order, later.site.order):
                    continue
                if spans.caught(later.site.order, "RuntimeError"):
                    continue  # `try: tape.gradient(...) except RuntimeError:` shows or handles the error
                where = self.location(first.site.node)
                how = f"a second time (the first at {where})" if where else "a second time"
                self.report(later.site.node, tape=tape.name, method=later.method, how=how, fix=self._fix(tape))
                reported = True
                break
            if reported:
                continue
            for grad in grads:
                if self._in_comprehension(grad):
                    self.report(grad.site.node, tape=tape.name, method=grad.method,
                                how="once per element of the comprehension around it", fix=self._fix(tape))
                    break
                loop = spans.innermost_loop(grad.site.order)
                tape_loop = spans.innermost_loop(tape.order)
                if loop is not None and loop is not tape_loop and loop.order > tape.order:
                    self.report(grad.site.node, tape=tape.name, method=grad.method,
                                how="once per iteration of the loop around it", fix=self._fix(tape))
                    break

    def _through_helpers(self) -> None:
        """`def step(tape, loss, model): tape.gradient(...)` called twice with one tape."""
        facts = self.facts
        spans = blocks(facts)
        for site in facts.calls:
            scope = site.scope
            if site.method not in GRADIENT_METHODS or scope.is_module or site.receiver not in scope.params:
                continue
            passed: dict[Value, list] = {}
            for caller in facts.call_sites_of_scope(scope):
                arg = facts.argument_for_param(caller.node, scope, site.receiver)
                for value in values_of(facts, arg, caller.scope, caller.order):
                    if value.kind is Kind.TAPE:
                        passed.setdefault(value, []).append(caller)
            for value, callers in passed.items():
                block = next((t for t in facts.tapes if t.call is value.node), None)
                if block is None or block.persistent or len(callers) < 2:
                    continue
                first, later = callers[0], callers[1]
                if spans.exclusive(first.order, later.order):
                    continue
                where = self.location(first.node)
                self.report(later.node, tape=block.name or "tape", method=site.method,
                            how=f"a second time, through `{scope.simple_name}`" + (f" (the first at {where})" if where else ""),
                            fix=self._fix(block))

    def _in_comprehension(self, grad: GradientCall) -> bool:
        """`[tape.gradient(loss, v) for v in variables]`: the call is the element of a comprehension."""
        order = grad.site.order
        return any(start < order <= end for start, end in self.facts.comprehension_elements)

    @staticmethod
    def _fix(tape) -> PendingFix:  # type: ignore[no-untyped-def]
        call: cst.Call = tape.call
        args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == "persistent")]
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        args.append(cst.Arg(value=cst.Name("True"), keyword=cst.Name("persistent"),
                            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                  whitespace_after=cst.SimpleWhitespace(""))))
        return PendingFix("Make the tape persistent (then `del` it after the last gradient)", False,
                          [(call, call.with_changes(args=args))])

    VALID = [
        Valid(
            """
import tensorflow as tf

actor = tf.keras.Sequential([tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam(1e-3)

def apply_grads(tape, loss, model):
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))

for states, returns in batches:
    with tf.GradientTape() as tape:
        actor_loss = -tf.reduce_mean(actor(states))
    apply_grads(tape, actor_loss, actor)
    with tf.GradientTape() as tape:
        critic_loss = tf.reduce_mean(tf.square(returns - critic(states)))
    apply_grads(tape, critic_loss, critic)
""",
            "near miss: a helper called twice, each time with a tape of its own",
        ),
        Valid(
            """
import tensorflow as tf

x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = x * x
dy_dx = tape.gradient(y, x)
try:
    tape.gradient(y, x)
except RuntimeError as error:
    print("A non-persistent tape can compute gradients only once:", error)
""",
            "near miss: the second call demonstrates the error inside `try/except RuntimeError`",
        ),
        Valid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)
gen_opt = tf.keras.optimizers.Adam(1e-4)
disc_opt = tf.keras.optimizers.Adam(1e-4)

@tf.function
def train_step(images, noise):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        fake = generator(noise, training=True)
        real_out = discriminator(images, training=True)
        fake_out = discriminator(fake, training=True)
        gen_loss = cross_entropy(tf.ones_like(fake_out), fake_out)
        disc_loss = cross_entropy(tf.ones_like(real_out), real_out) + cross_entropy(tf.zeros_like(fake_out), fake_out)
    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
    disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
""",
            "the DCGAN tutorial: one tape per loss",
        ),
        Valid(
            """
import tensorflow as tf

x = tf.constant(3.0)
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
dz_dx = tape.gradient(z, x)
dy_dx = tape.gradient(y, x)
del tape
""",
            "a persistent tape used twice (the autodiff guide)",
        ),
        Valid(
            """
import tensorflow as tf

def grads(model, x, y, use_l1):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        l1 = tf.reduce_mean(tf.abs(pred - y))
        l2 = tf.reduce_mean(tf.square(pred - y))
    if use_l1:
        return tape.gradient(l1, model.trainable_variables)
    else:
        return tape.gradient(l2, model.trainable_variables)
""",
            "near miss: two calls in exclusive branches",
        ),
    ]
    INVALID = [
        Invalid(
            """
import tensorflow as tf

actor = tf.keras.Sequential([tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt = tf.keras.optimizers.Adam(1e-3)

def apply_grads(tape, loss, model):
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))

for states, returns in batches:
    with tf.GradientTape() as tape:
        actor_loss = -tf.reduce_mean(actor(states))
        critic_loss = tf.reduce_mean(tf.square(returns - critic(states)))
    apply_grads(tape, actor_loss, actor)
    apply_grads(tape, critic_loss, critic)
""",
            line=17,
            message_contains="a second time, through `apply_grads`",
        ),
        Invalid(
            """
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
gen_opt = tf.keras.optimizers.Adam(1e-4)
disc_opt = tf.keras.optimizers.Adam(1e-4)

def train_step(real, noise):
    with tf.GradientTape() as tape:
        fake = generator(noise, training=True)
        gen_loss = -tf.reduce_mean(discriminator(fake, training=True))
        disc_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
    gen_grads = tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = tape.gradient(disc_loss, discriminator.trainable_variables)
    gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
    disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
""",
            line=15,
            column=18,
            message_contains="first at line 14",
            expected_fix="""
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
gen_opt = tf.keras.optimizers.Adam(1e-4)
disc_opt = tf.keras.optimizers.Adam(1e-4)

def train_step(real, noise):
    with tf.GradientTape(persistent=True) as tape:
        fake = generator(noise, training=True)
        gen_loss = -tf.reduce_mean(discriminator(fake, training=True))
        disc_loss = tf.reduce_mean(discriminator(fake, training=True)) - tf.reduce_mean(discriminator(real, training=True))
    gen_grads = tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = tape.gradient(disc_loss, discriminator.trainable_variables)
    gen_opt.apply_gradients(zip(gen_grads, generator.trainable_variables))
    disc_opt.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
""",
        ),
        Invalid(
            """
import tensorflow as tf

w1 = tf.Variable(tf.random.normal((3, 3)))
w2 = tf.Variable(tf.random.normal((3, 1)))
x = tf.random.normal((8, 3))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.matmul(tf.matmul(x, w1), w2))
grads = []
for var in [w1, w2]:
    grads.append(tape.gradient(loss, var))
""",
            line=11,
            message_contains="once per iteration",
        ),
    ]
